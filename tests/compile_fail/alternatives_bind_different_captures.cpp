// expect: both sides of `p \| q` bind the same captures
// `x` is bound on the left only: when the right side matched, the rule would read it unbound.
#include <devpass/rules.hpp>
using namespace devpass::dsl;
constexpr auto x = "x"_c;
constexpr auto either = delegate(any.as(x)) | call;
int main() {}
