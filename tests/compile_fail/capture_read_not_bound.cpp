// expect: this capture is not bound by the rule's pattern
// Reading a capture from a match that does not bind it.
#include <devpass/rules.hpp>
using namespace devpass::dsl;
constexpr auto h = "h"_c;
constexpr auto x = "x"_c;
int main() {
  capture_set<decltype(h2d_copy.as(h))::binds> caps;
  (void)caps.get(x);
}
