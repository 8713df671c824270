// scripts/bench compile — compile time of the DSL, measured by running the compiler:
//   - a TU that runs the default device-propagation pipeline (both policies, run-time selected),
//     and the same over a compiler's own IR (examples/own_graph/);
//   - a TU that calls the pass through its declarations (propagate_device_fwd.hpp), compiled in
//     another TU;
//   - the devpass policy's job written by hand on the same graph, and the framework compiled for
//     that policy alone: the floor under the pipeline's goal;
//   - the default pipeline's whole job written by hand on the same graph (both policies chosen at
//     run time, the pass's checks and counters): what the framework costs over that job;
//   - what Boost.Hana's reflection of the policy knobs costs a TU that uses it (a driver);
//   - TUs with a rule table of 10, 50, 100 and 200 distinct rules applied by the driver through a
//     default (untraced) context, and the cost of each added rule between those sizes (equal
//     figures: the growth is linear); the tables of 10 and 100 through a traced context;
//   - a TU that only includes the graph model, for reference;
//   - a doctest suite's TU (testing.hpp, the pass, one test case) against one that includes only
//     Boost.Graph's adjacency_list, both at -O0.
// Each TU is compiled with the project's C++ compiler at -O2 -c; the best of 3 runs is reported.
// `bench_compile --write DIR` only writes the TUs to DIR (graph_only.cpp, pipeline.cpp,
// declared_pipeline.cpp, hand_written.cpp, hand_written_job.cpp, devpass_policy_pipeline.cpp, rules_<n>.cpp,
// traced_rules_<n>.cpp, doctest_suite.cpp, declared_doctest_suite.cpp, boost_only.cpp), to time or profile them by hand (-ftime-report, clang's -ftime-trace).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>

#include "bench_report.hpp"

#ifndef DEVPASS_CXX
#error "bench/CMakeLists.txt defines DEVPASS_CXX, DEVPASS_INCLUDE and DEVPASS_BOOST_INCLUDE"
#endif

namespace {

namespace fs = std::filesystem;

// A table of `rules` distinct rules, applied through a default (untraced) context, or through a
// traced one (rules::tracing::on: every rule's explanations and description compiled in).
std::string rules_tu(int rules, bool traced = false) {
  std::ostringstream tu;
  tu << "#include <devpass/rules.hpp>\n"
        "using namespace devpass;\nusing namespace devpass::dsl;\n"
        "constexpr auto x = \"x\"_c; constexpr auto d = \"d\"_c;\n"
        "struct options {};\n"
        "constexpr auto table = make_table(\n";
  static const char* const ops[] = {"delegate", "call", "h2d_copy", "d2h_copy", "d2d_copy", "constant", "input"};
  for (int i = 0; i < rules; ++i) {
    const char* op = ops[i % 7];
    // Distinct guards (each a distinct lambda type) so no two rules are the same type.
    tu << "  " << op
       << ".as(d)[satisfies([](const auto& c, value_ref v) { return c.g[v.producer].outputs.size() == " << (i % 5)
       << "u && c.g[v.producer].id.size() > " << i << "u; }, d)] / apply([](auto&, value_ref) {}, d)"
       << (i + 1 < rules ? ",\n" : ");\n");
  }
  tu << "std::size_t run(graph& g) { options o; rules::rewrite_context<options"
     << (traced ? ", graph, rules::tracing::on" : "") << "> ctx(g, o);\n"
     << "  return apply_rules(table, ctx).rewrites; }\n";
  return tu.str();
}

const char* const pipeline_tu =
    "#include <devpass/passes/propagate_device.hpp>\n"
    "std::size_t run(devpass::graph& g, const devpass::propagate_options& o) {\n"
    "  return devpass::propagate_device(g, o).after.copies(); }\n";

// The same pipeline over a compiler's own IR (examples/own_graph/), a second graph model.
const char* const own_graph_pipeline_tu =
    "#include <devpass/passes/propagate_device.hpp>\n"
    "#include <own_graph.hpp>\n"
    "std::size_t run(mycc::ir_graph& g, const devpass::propagate_options& o) {\n"
    "  return devpass::propagate_device(g, o).after.copies(); }\n";

// The same call in a TU that only declares the pass (passes/propagate_device_fwd.hpp) while one
// other TU of the program compiles it (DEVPASS_INSTANTIATE_PROPAGATE_DEVICE): what every TU of a
// compiler but that one pays to call it.
const char* const declared_pipeline_tu =
    "#include <devpass/passes/propagate_device_fwd.hpp>\n"
    "std::size_t run(devpass::graph& g, const devpass::propagate_options& o) {\n"
    "  return devpass::propagate_device(g, o).after.copies(); }\n";

// What Boost.Hana costs where devpass uses it (passes/policy_reflection.hpp, for drivers): the
// propagation header with one use of its options, without and with the reflected knobs printed
// (io/policy_json.hpp).
const char* const options_only_tu =
    "#include <devpass/passes/propagate_device.hpp>\n"
    "std::size_t run(const devpass::propagate_options& o) { return o.elide; }\n";
const char* const policy_reflection_tu =
    "#include <devpass/io/policy_json.hpp>\n"
    "std::size_t run(const devpass::propagate_options& o) {\n"
    "  return devpass::reflection::policy_json<devpass::policy_from_options>(o).size(); }\n";

// The devpass policy's job written by hand on the same graph (bench/graph_api_propagation.hpp:
// one sweep, no rules, no checks, no counters), against the framework compiled for that policy
// alone: what the framework's code costs over the job's own (docs/performance.md#compile-time).
const char* const hand_written_tu =
    "#include <graph_api_propagation.hpp>\n"
    "std::size_t run(devpass::graph& g) { return devpass::bench::graph_api_propagate_shared(g).h2d; }\n";
// The default pipeline's whole job written by hand on the same graph (bench/hand_written_job.hpp:
// both policies chosen at run time by the same options, the pass's input check and copy census,
// plain loops), against pipeline_tu: what the framework costs over the job it does.
const char* const hand_written_job_tu =
    "#include <hand_written_job.hpp>\n"
    "std::size_t run(devpass::graph& g, const devpass::propagate_options& o) {\n"
    "  return devpass::bench::hand_written_propagate(g, o).after.copies(); }\n";
const char* const devpass_policy_pipeline_tu =
    "#include <devpass/passes/propagate_device.hpp>\n"
    "std::size_t run(devpass::graph& g, const devpass::propagate_options& o) {\n"
    "  return devpass::propagate_device_with<devpass::propagate_policy>(g, o).after.copies(); }\n";

// A compiler team's doctest suite of its own rules and pass: testing.hpp, the pass, one test case
// that builds a graph, propagates it and checks it (doctest's main is another TU, as in any
// suite), against a TU that includes Boost.Graph's adjacency_list alone: what devpass adds to a
// suite's compile, at -O0 as suites are built.
const char* const doctest_suite_tu =
    "#include <devpass/testing.hpp>\n"
    "#include <devpass/passes/propagate_device.hpp>\n"
    "TEST_CASE(\"copies\") {\n"
    "  devpass::graph g = devpass::testing::graph_builder{}.input(\"x\", {2, 2})\n"
    "      .delegate(\"a\", \"cuda:0\", \"relu\", {\"x\"}).call(\"c\", \"add\", {\"a\", "
    "\"x\"}).output({\"c\"}).build();\n"
    "  const devpass::graph before = g;\n"
    "  devpass::propagate_device(g, {});\n"
    "  CHECK_COPIES(g, 1, 1, 0);\n"
    "  CHECK_SAME_GRAPH(g, g);\n"
    "  CHECK_MATCHES(devpass::pattern::delegate, before, \"a\");\n"
    "}\n";
// The same suite calling the pass through its declarations (propagate_device_fwd.hpp; one other
// TU of the suite compiles it, DEVPASS_INSTANTIATE_PROPAGATE_DEVICE).
const std::string declared_doctest_suite_tu = [] {
  std::string tu = doctest_suite_tu;
  const std::string_view pass = "propagate_device.hpp";
  tu.replace(tu.find(pass), pass.size(), "propagate_device_fwd.hpp");
  return tu;
}();
const char* const boost_only_tu =
    "#include <boost/graph/adjacency_list.hpp>\n"
    "using G = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;\n"
    "std::size_t run(G& g) { boost::add_edge(0, 1, g); return boost::num_edges(g); }\n";

const char* const graph_only_tu =
    "#include <devpass/graph/graph.hpp>\n"
    "std::size_t run(devpass::graph& g) { return devpass::topological_order(g).size(); }\n";

double compile_seconds(const fs::path& dir, const std::string& name, const std::string& source,
                       const char* optimisation = "-O2") {
  const fs::path file = dir / (name + ".cpp");
  std::ofstream(file) << source;
  std::ostringstream line;  // (a chain of string operator+ here trips g++ 12's -Warray-bounds)
  line << DEVPASS_CXX << " -std=c++20 " << optimisation << " -c -I" << DEVPASS_INCLUDE << " -I"
       << DEVPASS_OWN_GRAPH_INCLUDE << " -I" << DEVPASS_BENCH_INCLUDE << " -I" << DEVPASS_BOOST_INCLUDE << " "
       << file.string() << " -o " << (dir / (name + ".o")).string();
  const std::string command = line.str();
  return devpass::bench::best_seconds(3, [&] {
    if (std::system(command.c_str()) != 0) {
      std::fprintf(stderr, "bench compile: '%s' failed\n", command.c_str());
      std::exit(1);
    }
  });
}

constexpr int rule_counts[] = {10, 50, 100, 200};
constexpr int traced_rule_counts[] = {10, 100};  // two of rule_counts

void emit(const std::string& metric, double value, const char* unit) {
  devpass::bench::emit("compile", metric, value, unit);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string_view(argv[1]) == "--write") {
    const fs::path out = argv[2];
    fs::create_directories(out);
    std::ofstream(out / "graph_only.cpp") << graph_only_tu;
    std::ofstream(out / "pipeline.cpp") << pipeline_tu;
    std::ofstream(out / "own_graph_pipeline.cpp") << own_graph_pipeline_tu;
    std::ofstream(out / "declared_pipeline.cpp") << declared_pipeline_tu;
    std::ofstream(out / "hand_written.cpp") << hand_written_tu;
    std::ofstream(out / "hand_written_job.cpp") << hand_written_job_tu;
    std::ofstream(out / "devpass_policy_pipeline.cpp") << devpass_policy_pipeline_tu;
    std::ofstream(out / "options_only.cpp") << options_only_tu;
    std::ofstream(out / "policy_reflection.cpp") << policy_reflection_tu;
    std::ofstream(out / "doctest_suite.cpp") << doctest_suite_tu;
    std::ofstream(out / "declared_doctest_suite.cpp") << declared_doctest_suite_tu;
    std::ofstream(out / "boost_only.cpp") << boost_only_tu;
    for (const int n : rule_counts) std::ofstream(out / ("rules_" + std::to_string(n) + ".cpp")) << rules_tu(n);
    for (const int n : traced_rule_counts)
      std::ofstream(out / ("traced_rules_" + std::to_string(n) + ".cpp")) << rules_tu(n, true);
    return 0;
  }
  if (argc != 1) {
    std::fprintf(stderr, "usage: bench_compile [--write DIR]\n");
    return 2;
  }
  const fs::path dir = fs::temp_directory_path() / "devpass_bench_compile";
  fs::create_directories(dir);
  const double graph_only = compile_seconds(dir, "graph_only", graph_only_tu);
  emit("graph_model_only_seconds", graph_only, "s");
  const double pipeline = compile_seconds(dir, "pipeline", pipeline_tu);
  const double own_graph_pipeline = compile_seconds(dir, "own_graph_pipeline", own_graph_pipeline_tu);
  const double declared_pipeline = compile_seconds(dir, "declared_pipeline", declared_pipeline_tu);
  emit("default_pipeline_seconds", pipeline, "s");
  emit("own_graph_pipeline_seconds", own_graph_pipeline, "s");
  emit("declared_pipeline_seconds", declared_pipeline, "s");
  // The compile goals (docs/performance.md#goals), as ratios to the graph-model-only TU of the same
  // run (load cancels): the default pipeline <= 1.5, the declared path <= 1.0.
  emit("default_pipeline_over_graph_model_only", pipeline / graph_only, "ratio");
  emit("own_graph_pipeline_over_graph_model_only", own_graph_pipeline / graph_only, "ratio");
  emit("declared_pipeline_over_graph_model_only", declared_pipeline / graph_only, "ratio");
  // The floor under the first goal: one policy's job by hand, and the framework for that policy.
  const double hand_written = compile_seconds(dir, "hand_written", hand_written_tu);
  const double devpass_policy = compile_seconds(dir, "devpass_policy_pipeline", devpass_policy_pipeline_tu);
  emit("hand_written_devpass_policy_seconds", hand_written, "s");
  emit("devpass_policy_pipeline_seconds", devpass_policy, "s");
  emit("hand_written_devpass_policy_over_graph_model_only", hand_written / graph_only, "ratio");
  emit("devpass_policy_pipeline_over_graph_model_only", devpass_policy / graph_only, "ratio");
  emit("devpass_policy_pipeline_over_hand_written", devpass_policy / hand_written, "ratio");
  // The same job by hand, both policies, checks and counters: the default pipeline <= 1.25 of it.
  const double hand_written_job = compile_seconds(dir, "hand_written_job", hand_written_job_tu);
  emit("hand_written_job_seconds", hand_written_job, "s");
  emit("default_pipeline_over_hand_written_job", pipeline / hand_written_job, "ratio");
  const double options_only = compile_seconds(dir, "options_only", options_only_tu);
  const double reflected = compile_seconds(dir, "policy_reflection", policy_reflection_tu);
  emit("propagate_options_only_seconds", options_only, "s");
  emit("policy_reflection_seconds", reflected, "s");
  emit("hana_reflection_cost_seconds", reflected - options_only, "s");
  const double suite = compile_seconds(dir, "doctest_suite", doctest_suite_tu, "-O0");
  const double declared_suite = compile_seconds(dir, "declared_doctest_suite", declared_doctest_suite_tu, "-O0");
  const double boost_only = compile_seconds(dir, "boost_only", boost_only_tu, "-O0");
  emit("doctest_suite_O0_seconds", suite, "s");
  emit("declared_doctest_suite_O0_seconds", declared_suite, "s");
  emit("boost_only_O0_seconds", boost_only, "s");
  emit("doctest_suite_over_boost_only_O0", suite / boost_only, "ratio");
  emit("declared_doctest_suite_over_boost_only_O0", declared_suite / boost_only, "ratio");
  double ten = 0, previous = 0;
  int previous_n = 0;
  std::map<int, double> untraced;  // seconds by table size, for the traced tables' comparison
  for (const int n : rule_counts) {
    const double s = compile_seconds(dir, "rules_" + std::to_string(n), rules_tu(n));
    emit("rules_" + std::to_string(n) + "_seconds", s, "s");
    untraced[n] = s;
    if (n == 10) {
      ten = s;
    } else {
      emit("per_rule_seconds_10_to_" + std::to_string(n), (s - ten) / (n - 10), "s");
      if (previous_n != 10)
        emit("per_added_rule_seconds_" + std::to_string(previous_n) + "_to_" + std::to_string(n),
             (s - previous) / (n - previous_n), "s");
    }
    previous = s;
    previous_n = n;
  }
  // The smallest and largest of the same tables through a traced context: what the trace's
  // explanations cost per rule.
  std::map<int, double> traced;
  for (const int n : traced_rule_counts) {
    traced[n] = compile_seconds(dir, "traced_rules_" + std::to_string(n), rules_tu(n, true));
    emit("traced_rules_" + std::to_string(n) + "_seconds", traced[n], "s");
  }
  const int low = traced_rule_counts[0], high = traced_rule_counts[1];
  const std::string span = std::to_string(low) + "_to_" + std::to_string(high);
  const double traced_per_rule = (traced[high] - traced[low]) / (high - low);
  emit("traced_per_rule_seconds_" + span, traced_per_rule, "s");
  emit("traced_over_untraced_per_rule_" + span, traced_per_rule / ((untraced[high] - untraced[low]) / (high - low)),
       "ratio");
  fs::remove_all(dir);
}
