// expect: the_action_uses_a_capture_the_pattern_does_not_bind<devpass::pattern::capture_name<'x'> ?>
// An action may only use captures its pattern binds: `x` is not bound here.
#include <devpass/rules.hpp>
using namespace devpass::dsl;
constexpr auto h = "h"_c;
constexpr auto x = "x"_c;
constexpr auto rule = h2d_copy.as(h) / rewire(h, x);
int main() {}
