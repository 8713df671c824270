// expect: single_pass: a rule of this table may enable a rule
// Erasing an unused d2h can leave the d2h it read unused (d2h(d2h(x))): one sweep would miss it.
#include <devpass/rules.hpp>
#include <devpass/rules/single_pass.hpp>
using namespace devpass::dsl;
constexpr auto d = "d"_c;
constexpr auto table = devpass::rules::single_pass(make_table(d2h_copy.as(d)[unused(d)] / erase(d)));
int main() {}
