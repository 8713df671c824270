// expect: the_action_uses_a_capture_the_pattern_does_not_bind<devpass::pattern::capture_name<'b'> ?>
// A result pattern reads captures as operands of the node it builds; one the pattern does not
// bind is refused where the rule is written, naming it.
#include <devpass/rules.hpp>

using namespace devpass::dsl;
constexpr auto x = "x"_c;
constexpr auto b = "b"_c;
constexpr auto r = "r"_c;
constexpr auto fused =
    op<"aten.relu.default">(op<"aten.add.Tensor">(any.as(x), any)).as(r) / replace(r, build<"fused_add_relu">(x, b));
int main() {}
