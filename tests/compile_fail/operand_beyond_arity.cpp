// expect: operand index beyond the op's arity
// A copy has exactly one operand: a second operand pattern is a mistake.
#include <devpass/rules.hpp>
using namespace devpass::dsl;
constexpr auto pattern = h2d_copy(any, any);
int main() {}
