// expect: capture name is already bound
// Each capture name binds one value: binding `x` twice would make the rule ambiguous.
#include <devpass/rules.hpp>
using namespace devpass::dsl;
constexpr auto x = "x"_c;
constexpr auto pattern = h2d_copy(any.as(x)).as(x);
int main() {}
