// expect: is_reads_a_capture_no_earlier_part_of_the_pattern_binds<devpass::pattern::capture_name<'x'> ?>
// Operands match left to right: is(x) in slot 0 reads x before slot 1 binds it.
#include <devpass/rules.hpp>
using namespace devpass::dsl;
constexpr auto x = "x"_c;
constexpr auto rule = delegate(is(x), any.as(x)) / erase_if_dead(x);
int main() {}
