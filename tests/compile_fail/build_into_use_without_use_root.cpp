// expect: the_action_feeds_the_matched_use_but_the_rule_is_not_rooted_at_a_use<
// build_into_use (and copy_into_use) feed the use an on_use root matched; under a value root there
// is none, and the rule does not compile.
#include <devpass/rules.hpp>

using namespace devpass::dsl;
constexpr auto x = "x"_c;
constexpr auto cast = op<"aten.mm.default">(any.as(x), any) / build_into_use(build<"aten._to_copy.default">(x));
int main() {}
