// expect: after `/` comes an action .*a lambda is one when wrapped: apply
// A lambda written where an action belongs: it must be wrapped in apply(f, captures...).
#include <devpass/rules.hpp>
using namespace devpass::dsl;
constexpr auto h = "h"_c;
constexpr auto rule = h2d_copy.as(h)[unused(h)] / [](auto&, devpass::value_ref) {};
int main() {}
