// devpass/rules/driver.hpp — the rewrite driver's header before it was named for what it is
// (driver/ is the opt-style command-line driver): include devpass/rules/rewrite_driver.hpp.
#pragma once

#pragma message("devpass: rules/driver.hpp is deprecated: include devpass/rules/rewrite_driver.hpp")
#include "devpass/rules/rewrite_driver.hpp"
