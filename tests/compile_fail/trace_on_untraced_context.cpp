// expect: this rewrite_context does not trace; declare it rewrite_context<Options, G, rules::tracing::on> to set `trace`
// A context traces only when its type asks (rules::tracing::on): setting `trace` on the default,
// untraced one does not compile, and the error says how to ask.
#include <devpass/rules.hpp>
struct no_options {};
int main() {
  devpass::graph g;
  devpass::rules::rule_trace trace;
  devpass::rules::rewrite_context<no_options> ctx(g, {});
  ctx.trace = &trace;
}
