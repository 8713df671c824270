// devpass/testing.hpp — doctest integration, opt-in: include it in a doctest suite (it includes
// <doctest/doctest.h> itself; nothing else in devpass does).
//
// Every check takes any graph model (graph_model.hpp): devpass::graph, or a compiler's own IR,
// named, printed and compared through its model. What a failed check prints is readable:
//  - doctest::StringMaker for devpass::graph, node, value_ref, use, tensor_spec, device,
//    copy_census, memory_plan and rules::rewrite_counters (testing/to_string.hpp), so CHECK_EQ,
//    CAPTURE and INFO print graphs as one line per node;
//  - checks whose failure message explains itself (testing/expectations.hpp):
//      CHECK_MATCHES(pattern, g, value)      value: a value_ref (value_ref{v, 0} is fine: the
//                                            last argument may hold commas), or "id" / "id:k"
//      CHECK_NOT_MATCHES(pattern, g, value)
//      CHECK_COPIES(g, h2d, d2h, d2d)
//      CHECK_SAME_GRAPH(a, b)
//      CHECK_CONVERGES(table, g[, options])  runs the table on g (g is left rewritten)
//    each with a REQUIRE_ form that ends the test case on failure. They are DEVPASS_CHECK_* and
//    DEVPASS_REQUIRE_*; the short names are defined too unless DEVPASS_TESTING_NO_SHORT_MACROS is
//    (as doctest's DOCTEST_CONFIG_NO_SHORT_MACRO_NAMES).
// A failure reads as doctest's own: `file:line: ERROR: CHECK_SAME_GRAPH( g, expected ) is NOT
// correct!` and the message below it (docs/testing.md shows one). A pass counts as one assertion
// (`CHECK( expect_same_graph(g, expected) == nullopt ) is correct!` under --success), and an
// exception thrown by the check is reported as doctest reports one thrown by CHECK.
// The builder for test graphs is testing/graph_builder.hpp.
#pragma once

#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "devpass/testing/expectations.hpp"
#include "devpass/testing/graph_builder.hpp"
#include "devpass/testing/graph_diff.hpp"
#include "devpass/testing/to_string.hpp"

namespace doctest {

// doctest prints an enum as its number whatever StringMaker says, so dtype and op_kind are not
// here; their names appear in the node and spec texts.
#define DEVPASS_TESTING_STRING_MAKER_(type, ...)                               \
  template <>                                                                  \
  struct StringMaker<type> {                                                   \
    static String convert(const type& value) { return (__VA_ARGS__).c_str(); } \
  }
DEVPASS_TESTING_STRING_MAKER_(devpass::graph, devpass::testing::to_string(value));
DEVPASS_TESTING_STRING_MAKER_(devpass::node, devpass::testing::to_string(value));
DEVPASS_TESTING_STRING_MAKER_(devpass::value_ref, devpass::testing::to_string(value));
DEVPASS_TESTING_STRING_MAKER_(devpass::use, devpass::testing::to_string(value));
DEVPASS_TESTING_STRING_MAKER_(devpass::tensor_spec, devpass::testing::to_string(value));
DEVPASS_TESTING_STRING_MAKER_(devpass::device, devpass::to_string(value));
DEVPASS_TESTING_STRING_MAKER_(devpass::copy_census, devpass::testing::to_string(value));
DEVPASS_TESTING_STRING_MAKER_(devpass::memory_plan, devpass::testing::to_string(value));
DEVPASS_TESTING_STRING_MAKER_(devpass::rules::rewrite_counters, devpass::testing::to_string(value));
#undef DEVPASS_TESTING_STRING_MAKER_

// Any other graph model (a compiler's own IR): one line per node, from what its model says.
template <class OutEdgeListS, class V, class E, class GP>
requires devpass::modeled_graph<
    boost::adjacency_list<OutEdgeListS, boost::vecS, boost::bidirectionalS, V, E, GP, boost::vecS>>
struct StringMaker<boost::adjacency_list<OutEdgeListS, boost::vecS, boost::bidirectionalS, V, E, GP, boost::vecS>> {
  static String convert(
      const boost::adjacency_list<OutEdgeListS, boost::vecS, boost::bidirectionalS, V, E, GP, boost::vecS>& g) {
    return devpass::testing::to_string(g).c_str();
  }
};

}  // namespace doctest

#ifndef DOCTEST_CONFIG_DISABLE
// One expect_* call reported as one doctest assertion of kind CHECK or REQUIRE at the caller's
// line. A failure is a doctest message (FAIL_CHECK / FAIL), so the text below the location is the
// expect_* message as it is, not squeezed into doctest's `values: CHECK( ... )` line; a pass and
// an exception go through doctest's own result builder, as CHECK's do.
#define DEVPASS_TESTING_ASSERT_(kind, macro, expect, args, ...)                                                \
  do {                                                                                                         \
    doctest::detail::ResultBuilder devpass_result_(doctest::assertType::DT_##kind, __FILE__, __LINE__,         \
                                                   "devpass::testing::" expect "(" args ") == nullopt");       \
    std::optional<std::string> devpass_failure_;                                                               \
    try {                                                                                                      \
      devpass_failure_ = __VA_ARGS__;                                                                          \
    } catch (...) {                                                                                            \
      devpass_result_.translateException();                                                                    \
    }                                                                                                          \
    if (devpass_failure_) {                                                                                    \
      const std::string devpass_text_ =                                                                        \
          macro "( " args " ) is NOT correct!\n" + ::devpass::testing::detail::indented(*devpass_failure_, 2); \
      DEVPASS_TESTING_FAIL_##kind##_(doctest::String(devpass_text_.c_str()));                                  \
    } else {                                                                                                   \
      devpass_result_.m_failed = devpass_result_.m_threw;                                                      \
      if (!devpass_result_.m_threw) devpass_result_.m_decomp = "nullopt == nullopt";                           \
      if (devpass_result_.log()) DOCTEST_BREAK_INTO_DEBUGGER();                                                \
      devpass_result_.react();                                                                                 \
    }                                                                                                          \
  } while (false)
#define DEVPASS_TESTING_FAIL_CHECK_(text) DOCTEST_ADD_FAIL_CHECK_AT(__FILE__, __LINE__, text)
#define DEVPASS_TESTING_FAIL_REQUIRE_(text) DOCTEST_ADD_FAIL_AT(__FILE__, __LINE__, text)
#else
#define DEVPASS_TESTING_ASSERT_(kind, macro, expect, args, ...) ((void)0)
#endif

#define DEVPASS_CHECK_MATCHES(pattern, g, ...)                                                          \
  DEVPASS_TESTING_ASSERT_(CHECK, "CHECK_MATCHES", "expect_matches", #pattern ", " #g ", " #__VA_ARGS__, \
                          ::devpass::testing::expect_matches((pattern), (g), (__VA_ARGS__)))
#define DEVPASS_REQUIRE_MATCHES(pattern, g, ...)                                                            \
  DEVPASS_TESTING_ASSERT_(REQUIRE, "REQUIRE_MATCHES", "expect_matches", #pattern ", " #g ", " #__VA_ARGS__, \
                          ::devpass::testing::expect_matches((pattern), (g), (__VA_ARGS__)))
#define DEVPASS_CHECK_NOT_MATCHES(pattern, g, ...)                                                              \
  DEVPASS_TESTING_ASSERT_(CHECK, "CHECK_NOT_MATCHES", "expect_not_matches", #pattern ", " #g ", " #__VA_ARGS__, \
                          ::devpass::testing::expect_not_matches((pattern), (g), (__VA_ARGS__)))
#define DEVPASS_REQUIRE_NOT_MATCHES(pattern, g, ...)                                                                \
  DEVPASS_TESTING_ASSERT_(REQUIRE, "REQUIRE_NOT_MATCHES", "expect_not_matches", #pattern ", " #g ", " #__VA_ARGS__, \
                          ::devpass::testing::expect_not_matches((pattern), (g), (__VA_ARGS__)))
#define DEVPASS_CHECK_COPIES(g, h2d, d2h, d2d)                                                      \
  DEVPASS_TESTING_ASSERT_(CHECK, "CHECK_COPIES", "expect_copies", #g ", " #h2d ", " #d2h ", " #d2d, \
                          ::devpass::testing::expect_copies((g), (h2d), (d2h), (d2d)))
#define DEVPASS_REQUIRE_COPIES(g, h2d, d2h, d2d)                                                        \
  DEVPASS_TESTING_ASSERT_(REQUIRE, "REQUIRE_COPIES", "expect_copies", #g ", " #h2d ", " #d2h ", " #d2d, \
                          ::devpass::testing::expect_copies((g), (h2d), (d2h), (d2d)))
#define DEVPASS_CHECK_SAME_GRAPH(a, b)                                                \
  DEVPASS_TESTING_ASSERT_(CHECK, "CHECK_SAME_GRAPH", "expect_same_graph", #a ", " #b, \
                          ::devpass::testing::expect_same_graph((a), (b), #a, #b))
#define DEVPASS_REQUIRE_SAME_GRAPH(a, b)                                                  \
  DEVPASS_TESTING_ASSERT_(REQUIRE, "REQUIRE_SAME_GRAPH", "expect_same_graph", #a ", " #b, \
                          ::devpass::testing::expect_same_graph((a), (b), #a, #b))
// CHECK_CONVERGES(table, g) or CHECK_CONVERGES(table, g, options): the options the table's guards
// read (ctx.options); testing::no_options when none.
#define DEVPASS_CHECK_CONVERGES(table, ...)                                                       \
  DEVPASS_TESTING_ASSERT_(CHECK, "CHECK_CONVERGES", "expect_converges", #table ", " #__VA_ARGS__, \
                          ::devpass::testing::expect_converges((table), __VA_ARGS__))
#define DEVPASS_REQUIRE_CONVERGES(table, ...)                                                         \
  DEVPASS_TESTING_ASSERT_(REQUIRE, "REQUIRE_CONVERGES", "expect_converges", #table ", " #__VA_ARGS__, \
                          ::devpass::testing::expect_converges((table), __VA_ARGS__))

#ifndef DEVPASS_TESTING_NO_SHORT_MACROS
#define CHECK_MATCHES(pattern, g, ...) DEVPASS_CHECK_MATCHES(pattern, g, __VA_ARGS__)
#define REQUIRE_MATCHES(pattern, g, ...) DEVPASS_REQUIRE_MATCHES(pattern, g, __VA_ARGS__)
#define CHECK_NOT_MATCHES(pattern, g, ...) DEVPASS_CHECK_NOT_MATCHES(pattern, g, __VA_ARGS__)
#define REQUIRE_NOT_MATCHES(pattern, g, ...) DEVPASS_REQUIRE_NOT_MATCHES(pattern, g, __VA_ARGS__)
#define CHECK_COPIES(g, h2d, d2h, d2d) DEVPASS_CHECK_COPIES(g, h2d, d2h, d2d)
#define REQUIRE_COPIES(g, h2d, d2h, d2d) DEVPASS_REQUIRE_COPIES(g, h2d, d2h, d2d)
#define CHECK_SAME_GRAPH(a, b) DEVPASS_CHECK_SAME_GRAPH(a, b)
#define REQUIRE_SAME_GRAPH(a, b) DEVPASS_REQUIRE_SAME_GRAPH(a, b)
#define CHECK_CONVERGES(table, ...) DEVPASS_CHECK_CONVERGES(table, __VA_ARGS__)
#define REQUIRE_CONVERGES(table, ...) DEVPASS_REQUIRE_CONVERGES(table, __VA_ARGS__)
#endif
