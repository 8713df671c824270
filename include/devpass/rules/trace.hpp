// devpass/rules/trace.hpp — what the rewrite driver says about each rule it tries, when asked
// (rewrite_context::trace; devpass-opt --debug-rules). Off, it costs one test of a null pointer
// per rule tried at a node.
#pragma once

#include <string_view>

namespace devpass::rules {

// One report per site of a rule tried at a node: `rule` as written (rule.describe()), the node's
// id, the site ("value 0", "output 1", "input 2", or "node" when an on_use rule's consumer
// pattern fails), and `why` it did not apply, or "applied". Sites are reported in the order the
// driver tries them, up to and including the one where the rule applied. The explanations come
// from the matcher and the guards themselves (pattern::explain, pattern::explain_guard).
struct rule_trace {
  void (*report)(void* user, std::string_view rule, std::string_view node, std::string_view site,
                 std::string_view why) = nullptr;
  void* user = nullptr;
  std::string_view only{};  // when not empty: only the rules whose text contains it
};

}  // namespace devpass::rules
