// expect: a rule table needs at least one rule
#include <devpass/rules.hpp>
using namespace devpass::dsl;
constexpr auto table = make_table();
int main() {}
