// devpass/rules.hpp — the rewrite DSL in one include: patterns, guards, actions, rules, driver.
// `using namespace devpass::dsl;` brings the vocabulary into scope for writing rule tables.
#pragma once

#include "devpass/pattern/guards.hpp"
#include "devpass/pattern/patterns.hpp"
#include "devpass/pattern/value_guards.hpp"
#include "devpass/rules/actions.hpp"
#include "devpass/rules/rewrite_driver.hpp"
#include "devpass/rules/rule.hpp"

namespace devpass::dsl {
using namespace devpass::pattern;
using namespace devpass::pattern::literals;
using devpass::rules::apply;
using devpass::rules::apply_rules;
using devpass::rules::build;
using devpass::rules::build_into_use;
using devpass::rules::build_site;
using devpass::rules::copy_after;
using devpass::rules::copy_into_use;
using devpass::rules::erase;
using devpass::rules::erase_if_dead;
using devpass::rules::make_table;
using devpass::rules::place_on;
using devpass::rules::replace;
using devpass::rules::rewire;
using devpass::rules::rewrite_context;
using devpass::rules::share_copy_into_use;
using devpass::rules::share_into_use;
using devpass::rules::operator/;
using devpass::rules::operator, ;
}  // namespace devpass::dsl
