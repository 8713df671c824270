// expect: is_reads_a_capture_no_earlier_part_of_the_pattern_binds<devpass::pattern::capture_name<'x'> ?>
// any_order tries the operands swapped too, where is(x) would run before any.as(x) binds x.
#include <devpass/rules.hpp>
using namespace devpass::dsl;
constexpr auto x = "x"_c;
constexpr auto rule = any_order(delegate, any.as(x), is(x)) / erase_if_dead(x);
int main() {}
