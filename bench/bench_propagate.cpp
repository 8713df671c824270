// scripts/bench propagate — device propagation on synthetic graphs of 10k, 100k and 1M nodes:
// pass time without file I/O for both policies, peak RSS, and ratios to hand-written flat-array
// programs measured in the same run (flat_propagation.hpp): flat_baseline does the executorch
// job (a copy per slot, then elision), flat_fused_baseline the same job with the elided copies
// never made (executorch_policy_vs_flat_fused_<n>), flat_shared_baseline the devpass policy's job (one copy
// per value and device); graph_api_shared is that job written by hand on the devpass graph (no
// rules, no census), lean_graph_shared on an adjacency_list with the smallest node property, and
// lean_graph_executorch_fused the executorch job (elided copies never made) on that graph: what
// any model of the graph concept could reach (*_over_lean_graph_executorch_fused_<n>). The bench
// fails unless each agrees with its policy on the copy counts.
// Each timed run happens in its own child process forked from the one that built the graphs
// (bench_report.hpp, in_fresh_process): every run starts from the same heap. A run's peak RSS
// includes what its child inherited (peak_rss_base: the source graph and its flat form).
// The peer (bench/peers/, built where MLIR 14 is installed): the executorch job as a walk plus
// MLIR's greedy rewrite driver, in a program of its own fed the same graph through a file
// (flat_graph.hpp); each of its runs is a process of its own too. Without MLIR it is skipped, and
// a line on stderr says so.
// Both policies also run their literal paths (the copy phases as rule tables under the worklist
// driver, as a pipeline that lists them itself gets them): *_literal_<n>_seconds and
// *_fused_over_literal_<n>; the framework_over_hand_written lines time the stock (fused) path.
// The graph a run propagates has the vertex capacity read_graph gives a graph it reads
// (node_capacity_for); the devpass policy is also timed on an exact-fit copy (no room: the first
// added copy moves every node), reported as *_exact_fit_*, and both policies with that room
// advised huge pages (*_huge_pages_*: graph/reserve.hpp, page_advice).
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "bench_report.hpp"
#include "convert.hpp"
#include "devpass/graph/reserve.hpp"
#include "devpass/graph/verify.hpp"
#include "devpass/passes/propagate_device.hpp"
#include "flat_graph.hpp"
#include "flat_propagation.hpp"
#include "graph_api_propagation.hpp"
#include "lean_graph_propagation.hpp"
#include "own_graph_hand_written.hpp"
#include "synthetic_graph.hpp"

namespace {

void emit(const std::string& metric, double value, const char* unit) {
  devpass::bench::emit("propagate", metric, value, unit);
}
using devpass::bench::peak_rss_kib;

// What one measured run reports from its child process.
struct run_result {
  double seconds = 0;
  std::size_t h2d = 0, d2h = 0, d2d = 0;  // the copies the run left
  // Of those, the resident ones (copies of constants, made once at load: the devpass policy and
  // its jobs by hand); the other baselines do not tell them apart.
  std::size_t resident = 0;
  long peak_rss_kib = 0;      // of the child: the source graph, its copy, and the run
  double insert_seconds = 0;  // the peer's: its insertion walk's share of `seconds`
  [[nodiscard]] std::size_t copies() const { return h2d + d2h + d2d; }
  [[nodiscard]] bool same_copies(const run_result& o) const { return h2d == o.h2d && d2h == o.d2h && d2d == o.d2d; }
  // The same copies, and the same of them resident.
  [[nodiscard]] bool same_copies_and_residency(const run_result& o) const {
    return same_copies(o) && resident == o.resident;
  }
};

// In a fresh process: prepare(input) makes the input (not timed), then run(input) is timed; it
// returns the copies it left ({h2d, d2h, d2d}). Inputs are filled in place: a graph returned by
// value would be copied (adjacency_list has no move constructor) and lose its reserved room.
template <class Input, class Prepare, class Run>
run_result measure(Prepare&& prepare, Run&& run) {
  return devpass::bench::in_fresh_process([&] {
    Input input;
    prepare(input);
    decltype(run(input)) counts{};
    run_result r;
    r.seconds = devpass::bench::seconds([&] { counts = run(input); });
    r.h2d = counts.h2d;
    // The devpass policy's copies of a constant are resident, counted apart in its census and by
    // its jobs by hand; the other baselines count every copy node. The synthetic graphs'
    // constants are on the host, so each resident copy is an h2d.
    if constexpr (requires { counts.resident; }) r.h2d += counts.resident, r.resident = counts.resident;
    r.d2h = counts.d2h;
    r.d2d = counts.d2d;
    r.peak_rss_kib = peak_rss_kib();
    return r;
  });
}

// The vertex and edge room read_graph would give `source` (node_capacity_for), reserved in `g`.
void reserve_as_read(devpass::graph& g, const devpass::graph& source,
                     devpass::page_advice pages = devpass::page_advice::system_default) {
  const std::size_t nodes = boost::num_vertices(source);
  devpass::reserve_room(g, nodes, boost::num_edges(source), devpass::node_capacity_for(nodes), pages);
}

// How the copy a run propagates is made (not timed).
enum class storage {
  as_read,             // with the room read_graph reserves for added nodes (node_capacity_for)
  as_read_huge_pages,  // the same, asking for huge pages (read_options, devpass-opt --huge-pages)
  exact_fit            // copy-constructed: no room, so the first added copy moves every node
};

// A copy of `source` made like read_graph makes a graph (or with no room), then filled.
auto copy_of(const devpass::graph& source, storage room = storage::as_read) {
  return [&source, room](devpass::graph& g) {
    if (room != storage::exact_fit)
      reserve_as_read(g, source,
                      room == storage::as_read_huge_pages ? devpass::page_advice::huge_pages
                                                          : devpass::page_advice::system_default);
    g = source;  // assignment keeps the reserved capacity
  };
}

// One propagation of a copy of `source`.
run_result time_policy(const devpass::graph& source, devpass::copy_policy policy, storage room = storage::as_read) {
  return measure<devpass::graph>(
      copy_of(source, room), [&](devpass::graph& g) { return devpass::propagate_device(g, {.policy = policy}).after; });
}

// Each policy with its copy phases run as rule tables under the worklist driver (the literal
// paths the fused ones replace: passes/fused_executorch_copies.hpp, passes/fused_shared_copies.hpp),
// on either graph model.
using literal_executorch =
    devpass::policy_of<devpass::propagate_knobs{.share_copies = false, .fuse_executorch_copies = false}>;
using literal_devpass = devpass::policy_of<devpass::propagate_knobs{.fuse_shared_copies = false}>;
template <class Literal, class G = devpass::graph, class Prepare>
run_result time_literal(Prepare&& prepare, devpass::copy_policy policy) {
  return measure<G>(prepare,
                    [&](G& g) { return devpass::propagate_device_with<Literal>(g, {.policy = policy}).after; });
}

// What devpass-opt adds around the pass by default: the whole verifier (structure and devices)
// on the devpass policy's result, before writing it (not part of the pass's time).
run_result time_verify_result(const devpass::graph& source) {
  return measure<devpass::graph>(
      [&](devpass::graph& g) {
        copy_of(source)(g);
        (void)devpass::propagate_device(g, {});
      },
      [](devpass::graph& g) {
        if (!devpass::verify(g).ok()) std::abort();
        return devpass::copy_census{};
      });
}

// The input check propagate_device makes before its phases (verify_propagation_input): part of
// the policies' times above, reported alone to show its share.
run_result time_input_check(const devpass::graph& source) {
  return measure<devpass::graph>(copy_of(source), [](devpass::graph& g) {
    if (!devpass::verify_propagation_input(g).ok()) std::abort();
    return devpass::copy_census{};
  });
}

// The devpass policy's job written by hand on the same graph (graph_api_propagation.hpp).
run_result time_graph_api(const devpass::graph& source) {
  return measure<devpass::graph>(copy_of(source), devpass::bench::graph_api_propagate_shared);
}

// The devpass policy's job on an adjacency_list with the smallest node property
// (lean_graph_propagation.hpp), with the same room.
run_result time_lean(const devpass::graph& source) {
  return measure<devpass::bench::lean_graph>(
      [&](devpass::bench::lean_graph& g) {
        devpass::bench::fill_lean(g, source, devpass::node_capacity_for(boost::num_vertices(source)));
      },
      devpass::bench::lean_propagate_shared);
}
// The executorch policy's job, fused, by hand on the same lean graph.
run_result time_lean_executorch(const devpass::graph& source) {
  return measure<devpass::bench::lean_graph>(
      [&](devpass::bench::lean_graph& g) {
        devpass::bench::fill_lean(g, source, devpass::node_capacity_for(boost::num_vertices(source)));
      },
      devpass::bench::lean_propagate_executorch_fused);
}

// The compiler's own IR (examples/own_graph/), converted from `source` with the same room.
auto own_graph_of(const devpass::graph& source) {
  return [&source](mycc::ir_graph& g) {
    mycc::fill_from_devpass(g, source, devpass::node_capacity_for(boost::num_vertices(source)));
  };
}
// A policy through the framework on the compiler's own IR.
run_result time_own_graph_policy(const devpass::graph& source, devpass::copy_policy policy) {
  return measure<mycc::ir_graph>(
      own_graph_of(source), [&](mycc::ir_graph& g) { return devpass::propagate_device(g, {.policy = policy}).after; });
}
// The devpass policy's job by hand on the same IR (own_graph_hand_written.hpp).
run_result time_own_graph_hand_written(const devpass::graph& source) {
  return measure<mycc::ir_graph>(own_graph_of(source), devpass::bench::own_graph_propagate_shared);
}
// The input check alone on the same IR: the part of propagate_device the hand-written job does
// not do (own_graph_input_check_over_hand_written), for judging own_graph_framework_over_hand_written.
run_result time_own_graph_input_check(const devpass::graph& source) {
  return measure<mycc::ir_graph>(own_graph_of(source), [](mycc::ir_graph& g) {
    if (!devpass::verify_propagation_input(g).ok()) std::abort();
    return devpass::copy_census{};
  });
}

// Which flat program: the executorch job inserting then eliding (flat_propagate), the same job
// fused (flat_propagate_fused: the elided copies never made), or the devpass policy's job
// (flat_propagate_shared).
enum class flat_job { executorch, executorch_fused, devpass };

// A flat baseline on a copy of `flat` with the same room for added nodes as the graph's.
run_result time_flat(const devpass::bench::flat_graph& flat, flat_job job) {
  return measure<devpass::bench::flat_graph>(
      [&](devpass::bench::flat_graph& copy) {
        copy = devpass::bench::with_room(flat, devpass::node_capacity_for(flat.op.size()));
      },
      [&](devpass::bench::flat_graph& copy) {
        switch (job) {
          case flat_job::executorch_fused: return devpass::bench::flat_propagate_fused(std::move(copy));
          case flat_job::devpass: return devpass::bench::flat_propagate_shared(std::move(copy));
          case flat_job::executorch: break;
        }
        return devpass::bench::flat_propagate(std::move(copy));
      });
}

// The peer on the graph in `graph_file`: one run of bench/peers/mlir_greedy, which times its
// pass alone and prints "seconds S h2d N d2h N d2d N peak_rss_kib K insert_seconds I". Exits on
// any failure.
#ifdef DEVPASS_MLIR_PEER
constexpr bool has_mlir_peer = true;
run_result time_mlir_greedy(const std::string& graph_file) {
  const std::string command = std::string("'") + DEVPASS_MLIR_PEER + "' '" + graph_file + "'";
  std::fflush(stdout);
  std::FILE* peer = popen(command.c_str(), "r");
  run_result r;
  const bool read = peer && std::fscanf(peer, "seconds %lf h2d %zu d2h %zu d2d %zu peak_rss_kib %ld insert_seconds %lf",
                                        &r.seconds, &r.h2d, &r.d2h, &r.d2d, &r.peak_rss_kib, &r.insert_seconds) == 6;
  if (!peer || pclose(peer) != 0 || !read) {
    std::fprintf(stderr, "bench propagate: the mlir_greedy peer failed (%s)\n", command.c_str());
    std::exit(1);
  }
  return r;
}
#else
constexpr bool has_mlir_peer = false;
run_result time_mlir_greedy(const std::string&) { return {}; }
#endif

// A file holding `flat` for the peers, removed when this goes.
struct peer_graph_file {
  explicit peer_graph_file(const devpass::bench::flat_graph& flat) {
    if (!has_mlir_peer) return;
    char name[] = "/tmp/devpass-bench-propagate-XXXXXX";
    const int fd = mkstemp(name);
    if (fd < 0 || close(fd) != 0 || !devpass::bench::write_flat_graph(flat, name)) {
      std::fprintf(stderr, "bench propagate: cannot write the peers' graph file %s\n", name);
      std::exit(1);
    }
    path = name;
  }
  ~peer_graph_file() {
    if (!path.empty()) std::remove(path.c_str());
  }
  peer_graph_file(const peer_graph_file&) = delete;
  peer_graph_file& operator=(const peer_graph_file&) = delete;
  std::string path;
};

}  // namespace

int main(int argc, char** argv) {
  const std::size_t largest = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  // The 100k times of the runs whose growth to 1M is printed (growing_runs, below).
  std::array<double, 9> hundred_k{};
  if (!has_mlir_peer)
    std::fprintf(stderr,
                 "bench propagate: mlir_greedy peer skipped: no MLIR (libmlir-14-dev was not found when "
                 "configuring; DEVPASS_BENCH_PEERS=1 scripts/bench installs it, docs/building.md)\n");
  for (std::size_t nodes = 10'000; nodes <= largest; nodes *= 10) {
    const std::string n = std::to_string(nodes / 1000) + "k";
    const int repeats = nodes >= 1'000'000 ? 3 : 5;
    const devpass::graph source = devpass::make_synthetic_graph(nodes, 42);
    const devpass::bench::flat_graph flat = devpass::bench::to_flat(source);
    const long base_rss = peak_rss_kib();  // what every run's child starts from
    const peer_graph_file peer_graph(flat);

    // Interleaved, so that a slow spell of the machine hits every run alike. Each keeps its
    // fastest run (on a shared machine the minimum is the least disturbed) and largest peak RSS.
    run_result flat_run, flat_fused_run, flat_shared_run, lean_run, graph_api_run, et_run, dp_run, dp_exact_run,
        verify_run, check_run;
    run_result own_dp_run, own_et_run, own_hand_run, et_literal_run, own_et_literal_run, mlir_run;
    run_result dp_literal_run, own_dp_literal_run, own_check_run, et_huge_run, dp_huge_run, lean_et_run;
    et_literal_run.seconds = own_et_literal_run.seconds = dp_literal_run.seconds = own_dp_literal_run.seconds =
        et_huge_run.seconds = dp_huge_run.seconds = lean_et_run.seconds = 1e300;
    flat_run.seconds = flat_fused_run.seconds = flat_shared_run.seconds = lean_run.seconds = graph_api_run.seconds =
        1e300;
    et_run.seconds = dp_run.seconds = dp_exact_run.seconds = verify_run.seconds = check_run.seconds = 1e300;
    own_dp_run.seconds = own_et_run.seconds = own_hand_run.seconds = mlir_run.seconds = own_check_run.seconds = 1e300;
    const auto keep_best = [](run_result& best, const run_result& r) {
      const long rss = std::max(best.peak_rss_kib, r.peak_rss_kib);
      if (r.seconds < best.seconds) best = r;
      best.peak_rss_kib = rss;
    };
    for (int i = 0; i < repeats; ++i) {
      keep_best(flat_run, time_flat(flat, flat_job::executorch));
      keep_best(flat_fused_run, time_flat(flat, flat_job::executorch_fused));
      keep_best(flat_shared_run, time_flat(flat, flat_job::devpass));
      keep_best(lean_run, time_lean(source));
      keep_best(lean_et_run, time_lean_executorch(source));
      keep_best(graph_api_run, time_graph_api(source));
      keep_best(et_run, time_policy(source, devpass::copy_policy::executorch));
      keep_best(dp_run, time_policy(source, devpass::copy_policy::devpass));
      keep_best(dp_exact_run, time_policy(source, devpass::copy_policy::devpass, storage::exact_fit));
      keep_best(et_huge_run, time_policy(source, devpass::copy_policy::executorch, storage::as_read_huge_pages));
      keep_best(dp_huge_run, time_policy(source, devpass::copy_policy::devpass, storage::as_read_huge_pages));
      keep_best(verify_run, time_verify_result(source));
      keep_best(check_run, time_input_check(source));
      keep_best(own_dp_run, time_own_graph_policy(source, devpass::copy_policy::devpass));
      keep_best(own_et_run, time_own_graph_policy(source, devpass::copy_policy::executorch));
      keep_best(own_hand_run, time_own_graph_hand_written(source));
      keep_best(own_check_run, time_own_graph_input_check(source));
      keep_best(et_literal_run, time_literal<literal_executorch>(copy_of(source), devpass::copy_policy::executorch));
      keep_best(own_et_literal_run, time_literal<literal_executorch, mycc::ir_graph>(own_graph_of(source),
                                                                                     devpass::copy_policy::executorch));
      keep_best(dp_literal_run, time_literal<literal_devpass>(copy_of(source), devpass::copy_policy::devpass));
      keep_best(own_dp_literal_run,
                time_literal<literal_devpass, mycc::ir_graph>(own_graph_of(source), devpass::copy_policy::devpass));
      if (has_mlir_peer) keep_best(mlir_run, time_mlir_greedy(peer_graph.path));
    }
    if (!et_literal_run.same_copies(et_run) || !own_et_literal_run.same_copies(et_run)) {
      std::fprintf(stderr, "bench propagate: the fused and literal executorch paths disagree on %zu nodes\n", nodes);
      return 1;
    }
    if (!dp_literal_run.same_copies(dp_run) || !own_dp_literal_run.same_copies(dp_run)) {
      std::fprintf(stderr, "bench propagate: the fused and literal devpass paths disagree on %zu nodes\n", nodes);
      return 1;
    }
    if (!et_run.same_copies(flat_run) || !flat_fused_run.same_copies(flat_run) || !lean_et_run.same_copies(flat_run)) {
      std::fprintf(stderr,
                   "bench propagate: executorch policy and its baselines (flat, lean graph) disagree on %zu nodes\n",
                   nodes);
      return 1;
    }
    if (has_mlir_peer && !mlir_run.same_copies(et_run)) {
      std::fprintf(stderr,
                   "bench propagate: FAIL: MLIR's greedy driver left %zu h2d and %zu d2h copies, the executorch policy "
                   "%zu and %zu, on %zu nodes\n",
                   mlir_run.h2d, mlir_run.d2h, et_run.h2d, et_run.d2h, nodes);
      return 1;
    }
    if (!own_et_run.same_copies(et_run) || !own_dp_run.same_copies_and_residency(dp_run) ||
        !own_hand_run.same_copies_and_residency(dp_run)) {
      std::fprintf(stderr, "bench propagate: the compiler's own IR and devpass::graph disagree on %zu nodes\n", nodes);
      return 1;
    }
    if (!dp_run.same_copies(flat_shared_run) || !dp_run.same_copies_and_residency(graph_api_run) ||
        !dp_run.same_copies(lean_run)) {
      std::fprintf(stderr,
                   "bench propagate: devpass policy and its baselines (flat shared, lean graph, graph API) disagree on "
                   "%zu nodes\n",
                   nodes);
      return 1;
    }
    emit("flat_baseline_" + n + "_seconds", flat_run.seconds, "s");
    emit("flat_fused_baseline_" + n + "_seconds", flat_fused_run.seconds, "s");
    emit("executorch_policy_vs_flat_fused_" + n, et_run.seconds / flat_fused_run.seconds, "ratio");
    emit("flat_shared_baseline_" + n + "_seconds", flat_shared_run.seconds, "s");
    emit("lean_graph_shared_" + n + "_seconds", lean_run.seconds, "s");
    // The executorch job on the leanest adjacency_list: the representation's own cost, under the
    // framework on either model (executorch_policy_* and own_graph_executorch_policy_* over it).
    emit("lean_graph_executorch_fused_" + n + "_seconds", lean_et_run.seconds, "s");
    emit("lean_graph_executorch_fused_vs_flat_fused_" + n, lean_et_run.seconds / flat_fused_run.seconds, "ratio");
    emit("executorch_policy_over_lean_graph_executorch_fused_" + n, et_run.seconds / lean_et_run.seconds, "ratio");
    emit("own_graph_executorch_policy_over_lean_graph_executorch_fused_" + n, own_et_run.seconds / lean_et_run.seconds,
         "ratio");
    emit("graph_api_shared_" + n + "_seconds", graph_api_run.seconds, "s");
    emit("executorch_policy_" + n + "_seconds", et_run.seconds, "s");
    emit("devpass_policy_" + n + "_seconds", dp_run.seconds, "s");
    emit("devpass_policy_exact_fit_" + n + "_seconds", dp_exact_run.seconds, "s");
    // The same runs with the room advised huge pages (graph/reserve.hpp, page_advice): whether
    // that pays depends on the machine (docs/performance.md#room-for-the-copies).
    emit("executorch_policy_huge_pages_" + n + "_seconds", et_huge_run.seconds, "s");
    emit("devpass_policy_huge_pages_" + n + "_seconds", dp_huge_run.seconds, "s");
    emit("executorch_policy_huge_pages_over_default_" + n, et_huge_run.seconds / et_run.seconds, "ratio");
    emit("devpass_policy_huge_pages_over_default_" + n, dp_huge_run.seconds / dp_run.seconds, "ratio");
    emit("executorch_policy_vs_flat_" + n, et_run.seconds / flat_run.seconds, "ratio");
    emit("devpass_policy_vs_flat_" + n, dp_run.seconds / flat_run.seconds, "ratio");
    emit("devpass_policy_exact_fit_vs_flat_" + n, dp_exact_run.seconds / flat_run.seconds, "ratio");
    emit("devpass_policy_vs_flat_shared_" + n, dp_run.seconds / flat_shared_run.seconds, "ratio");
    emit("devpass_policy_vs_graph_api_" + n, dp_run.seconds / graph_api_run.seconds, "ratio");
    emit("graph_api_vs_flat_shared_" + n, graph_api_run.seconds / flat_shared_run.seconds, "ratio");
    emit("lean_graph_vs_flat_shared_" + n, lean_run.seconds / flat_shared_run.seconds, "ratio");
    emit("verify_result_" + n + "_seconds", verify_run.seconds, "s");
    emit("verify_result_vs_devpass_policy_" + n, verify_run.seconds / dp_run.seconds, "ratio");
    emit("input_check_" + n + "_seconds", check_run.seconds, "s");
    emit("input_check_vs_devpass_policy_" + n, check_run.seconds / dp_run.seconds, "ratio");
    emit("copies_executorch_" + n, static_cast<double>(et_run.copies()), "count");
    emit("copies_devpass_" + n, static_cast<double>(dp_run.copies()), "count");
    emit("peak_rss_base_" + n, static_cast<double>(base_rss), "KiB");
    emit("peak_rss_flat_" + n, static_cast<double>(flat_run.peak_rss_kib), "KiB");
    emit("peak_rss_executorch_policy_" + n, static_cast<double>(et_run.peak_rss_kib), "KiB");
    emit("peak_rss_devpass_policy_" + n, static_cast<double>(dp_run.peak_rss_kib), "KiB");
    // The graph concept (docs/graph-concept.md): the same passes on the compiler's own IR.
    emit("own_graph_devpass_policy_" + n + "_seconds", own_dp_run.seconds, "s");
    emit("own_graph_executorch_policy_" + n + "_seconds", own_et_run.seconds, "s");
    emit("own_graph_hand_written_" + n + "_seconds", own_hand_run.seconds, "s");
    emit("peak_rss_own_graph_devpass_policy_" + n, static_cast<double>(own_dp_run.peak_rss_kib), "KiB");
    const std::string suffix = nodes == 1'000'000 ? "" : "_" + n;  // unsuffixed names are the 1M figures
    emit("own_graph_framework_over_hand_written" + suffix, own_dp_run.seconds / own_hand_run.seconds, "ratio");
    emit("own_graph_input_check_" + n + "_seconds", own_check_run.seconds, "s");
    emit("own_graph_input_check_over_hand_written" + suffix, own_check_run.seconds / own_hand_run.seconds, "ratio");
    emit("devpass_graph_framework_over_hand_written" + suffix, dp_run.seconds / graph_api_run.seconds, "ratio");
    emit("own_graph_executorch_policy_over_flat" + suffix, own_et_run.seconds / flat_run.seconds, "ratio");
    // The fused executorch path against the literal one it replaces, same run.
    emit("executorch_policy_literal_" + n + "_seconds", et_literal_run.seconds, "s");
    emit("own_graph_executorch_policy_literal_" + n + "_seconds", own_et_literal_run.seconds, "s");
    emit("executorch_fused_over_literal_" + n, et_run.seconds / et_literal_run.seconds, "ratio");
    emit("own_graph_executorch_fused_over_literal_" + n, own_et_run.seconds / own_et_literal_run.seconds, "ratio");
    // The same for the devpass policy's one sweep (fused_shared_copies.hpp).
    emit("devpass_policy_literal_" + n + "_seconds", dp_literal_run.seconds, "s");
    emit("own_graph_devpass_policy_literal_" + n + "_seconds", own_dp_literal_run.seconds, "s");
    emit("devpass_fused_over_literal_" + n, dp_run.seconds / dp_literal_run.seconds, "ratio");
    emit("own_graph_devpass_fused_over_literal_" + n, own_dp_run.seconds / own_dp_literal_run.seconds, "ratio");
    // Linear growth: each policy's 1M time over its 100k time (goal <= 12), then the same for the
    // jobs it is compared with (the flat-array programs of both jobs, the hand-written loops on both graph types, MLIR's
    // driver), measured alike in this run: a ratio over 10 that they share is the machine's
    // caches (the 100k graphs fit in the last level, the 1M graphs do not), not the pass.
    const std::array<std::pair<const char*, const run_result*>, 9> growing_runs = {{
        {"executorch_policy", &et_run},
        {"devpass_policy", &dp_run},
        {"own_graph_executorch_policy", &own_et_run},
        {"own_graph_devpass_policy", &own_dp_run},
        {"flat_baseline", &flat_run},
        {"flat_shared_baseline", &flat_shared_run},
        {"graph_api_shared", &graph_api_run},
        {"own_graph_hand_written", &own_hand_run},
        {"mlir_greedy_executorch_job", &mlir_run},
    }};
    const std::size_t growing = has_mlir_peer ? growing_runs.size() : growing_runs.size() - 1;
    if (nodes == 100'000)
      for (std::size_t i = 0; i < growing; ++i) hundred_k[i] = growing_runs[i].second->seconds;
    if (nodes == 1'000'000 && hundred_k[0] > 0)
      for (std::size_t i = 0; i < growing; ++i)
        emit(std::string(growing_runs[i].first) + "_growth_1000k_over_100k",
             growing_runs[i].second->seconds / hundred_k[i], "ratio");
    // The peer: the same job (and copies) with MLIR's greedy driver; the speedup is its time over
    // the executorch policy's above (executorch_policy_<n>_seconds), same run.
    if (has_mlir_peer) {
      emit("mlir_greedy_executorch_job_seconds_" + n, mlir_run.seconds, "s");
      emit("mlir_greedy_insert_walk_seconds_" + n, mlir_run.insert_seconds, "s");  // of the job's time
      emit("executorch_policy_speedup_over_mlir_greedy_" + n, mlir_run.seconds / et_run.seconds, "ratio");
      // The most that speedup can be on an adjacency_list: the same job by hand on the lean graph.
      emit("lean_graph_executorch_fused_speedup_over_mlir_greedy_" + n, mlir_run.seconds / lean_et_run.seconds,
           "ratio");
      emit("mlir_greedy_vs_flat_" + n, mlir_run.seconds / flat_run.seconds, "ratio");
      emit("peak_rss_mlir_greedy_" + n, static_cast<double>(mlir_run.peak_rss_kib), "KiB");
    }
  }
  // What a vertex costs in each model: the adjacency_list's stored vertex (the property and the
  // two edge lists), plus for the own IR its value table entries (one per vertex here).
  using devpass_stored = decltype(std::declval<devpass::graph&>().m_vertices)::value_type;
  using own_stored = decltype(std::declval<mycc::ir_graph&>().m_vertices)::value_type;
  emit("devpass_graph_bytes_per_vertex", static_cast<double>(sizeof(devpass_stored)), "B");
  emit("own_graph_bytes_per_vertex", static_cast<double>(sizeof(own_stored) + sizeof(mycc::value_info)), "B");

  // The constant-heavy graph: 23% constants, each read by a cuda:0 delegate (an h2d per read
  // under the executorch policy).
  if (largest >= 1'000'000) {
    const devpass::graph source = devpass::make_synthetic_graph(1'000'000, 42, 30);
    std::size_t constants = 0;
    for (const auto v : boost::make_iterator_range(boost::vertices(source)))
      constants += source[v].op == devpass::op_kind::constant;
    const devpass::bench::flat_graph flat = devpass::bench::to_flat(source);
    const peer_graph_file peer_graph(flat);
    run_result flat_run, et_run, own_et_run, mlir_run;
    flat_run.seconds = et_run.seconds = own_et_run.seconds = mlir_run.seconds = 1e300;
    for (int i = 0; i < 3; ++i) {
      const auto keep = [](run_result& best, const run_result& r) {
        if (r.seconds < best.seconds) best = r;
      };
      keep(flat_run, time_flat(flat, flat_job::executorch));
      keep(et_run, time_policy(source, devpass::copy_policy::executorch));
      keep(own_et_run, time_own_graph_policy(source, devpass::copy_policy::executorch));
      if (has_mlir_peer) keep(mlir_run, time_mlir_greedy(peer_graph.path));
    }
    if (!et_run.same_copies(flat_run) || !own_et_run.same_copies(flat_run) ||
        (has_mlir_peer && !mlir_run.same_copies(flat_run))) {
      std::fprintf(stderr, "bench propagate: the constant-heavy graph's executorch runs disagree\n");
      return 1;
    }
    emit("constant_heavy_1000k_constant_share", static_cast<double>(constants) / 1e6, "ratio");
    emit("constant_heavy_flat_baseline_1000k_seconds", flat_run.seconds, "s");
    emit("constant_heavy_executorch_policy_1000k_seconds", et_run.seconds, "s");
    emit("constant_heavy_own_graph_executorch_policy_1000k_seconds", own_et_run.seconds, "s");
    emit("constant_heavy_executorch_policy_over_flat_1000k", et_run.seconds / flat_run.seconds, "ratio");
    emit("constant_heavy_own_graph_executorch_policy_over_flat_1000k", own_et_run.seconds / flat_run.seconds, "ratio");
    if (has_mlir_peer) {
      emit("constant_heavy_mlir_greedy_executorch_job_seconds_1000k", mlir_run.seconds, "s");
      emit("constant_heavy_executorch_policy_speedup_over_mlir_greedy_1000k", mlir_run.seconds / et_run.seconds,
           "ratio");
    }
  }
}
