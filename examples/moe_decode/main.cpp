// moe_decode — the end-to-end demo: a small MoE transformer decoder whose attention and MoE
// blocks run as delegates on cuda:0 (a real GPU, or an emulated one), with the KV cache kept on
// the device across prefill and decode. Prints the tokens, the copies per decode step with the
// devpass policy (its weights loaded once, and copied every call instead) against ExecuTorch's
// without elision, the time per token and the device; checks
// the tokens against a host-only run; writes the decode graph before/after propagation as DOT
// (and SVG where graphviz is installed). docs/demo.md explains the output.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "devpass/io/dot_writer.hpp"
#include "devpass/passes/propagate_device_fwd.hpp"
#include "devpass/planning/capturability.hpp"
#include "pipeline.hpp"

namespace {

// The capturability verdict for the decode method under `r` (planning/capturability.hpp), on one
// line: the verdict, the segments, and each cause with the nodes it names (the first few).
std::string capture_line(const moe_decode::model_config& m, const moe_decode::run_options& r) {
  const moe_decode::prepared_method decode = moe_decode::prepare(moe_decode::build_method(m, "decode", 1), r);
  const devpass::capture_verdict v = devpass::capturability(decode.g, decode.plan);
  std::string line = std::string(devpass::to_string(v.kind)) + ", " + std::to_string(v.segments.size()) +
                     (v.segments.size() == 1 ? " segment" : " segments");
  std::map<std::string, std::vector<std::string>> by_cause;
  for (const auto& reason : v.reasons) by_cause[std::string(devpass::to_string(reason.cause))].push_back(reason.node);
  for (const auto& [cause, nodes] : by_cause) {
    line += "; " + cause + " " + std::to_string(nodes.size()) + ":";
    for (std::size_t i = 0; i < nodes.size() && i < 3; ++i) line += " " + nodes[i];
    if (nodes.size() > 3) line += " ...";
  }
  return line;
}

constexpr std::string_view usage =
    "usage: moe_decode [--prompt N] [--tokens N] [--layers N] [--d-model N] [--heads N] [--experts N]\n"
    "                  [--top-k N] [--ffn N] [--vocab N] [--max-seq N] [--seed N] [--out DIR] [--no-cuda]\n"
    "                  [--no-allocation-cache] [--profile] [--graphs]\n";

struct options {
  moe_decode::model_config model;
  std::size_t prompt = 8, tokens = 8;
  std::uint64_t seed = 42;
  std::string out = "build/moe_decode_out";  // under build/, which git ignores: nothing generated in the tree
  bool allow_cuda = true;
  bool cache_allocations = true;  // --no-allocation-cache: measure time per token without the cache
  bool profile = false;           // --profile: time per kernel of one decode step (an extra run)
  bool graphs = false;            // --graphs: graph mode against node by node, device I/O planned (two extra runs)
};

bool parse_number(std::string_view text, auto& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc{} && end == text.data() + text.size();
}

// Returns false (after printing why) on a bad command line.
bool parse(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--no-cuda") {
      o.allow_cuda = false;
      continue;
    }
    if (arg == "--no-allocation-cache") {
      o.cache_allocations = false;
      continue;
    }
    if (arg == "--profile") {
      o.profile = true;
      continue;
    }
    if (arg == "--graphs") {
      o.graphs = true;
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      std::cout << usage;
      std::exit(0);
    }
    if (i + 1 >= argc) {
      std::cerr << "moe_decode: " << arg << " needs a value\n" << usage;
      return false;
    }
    const std::string_view value = argv[++i];
    bool ok = true;
    if (arg == "--prompt")
      ok = parse_number(value, o.prompt);
    else if (arg == "--tokens")
      ok = parse_number(value, o.tokens);
    else if (arg == "--layers")
      ok = parse_number(value, o.model.layers);
    else if (arg == "--d-model")
      ok = parse_number(value, o.model.d_model);
    else if (arg == "--heads")
      ok = parse_number(value, o.model.heads);
    else if (arg == "--experts")
      ok = parse_number(value, o.model.experts);
    else if (arg == "--top-k")
      ok = parse_number(value, o.model.top_k);
    else if (arg == "--ffn")
      ok = parse_number(value, o.model.ffn);
    else if (arg == "--vocab")
      ok = parse_number(value, o.model.vocab);
    else if (arg == "--max-seq")
      ok = parse_number(value, o.model.max_seq);
    else if (arg == "--seed")
      ok = parse_number(value, o.seed);
    else if (arg == "--out")
      o.out = value;
    else {
      std::cerr << "moe_decode: unknown option " << arg << "\n" << usage;
      return false;
    }
    if (!ok) {
      std::cerr << "moe_decode: " << arg << ": not a number: " << value << "\n";
      return false;
    }
  }
  const auto& m = o.model;
  const bool sane = m.layers > 0 && m.d_model > 0 && m.heads > 0 && m.d_model % m.heads == 0 && m.head_dim() % 2 == 0 &&
                    m.experts > 0 && m.top_k > 0 && m.top_k <= m.experts && m.ffn > 0 && m.vocab > 0 && o.prompt > 0 &&
                    o.tokens > 0;
  if (!sane) {
    std::cerr << "moe_decode: need positive sizes, heads dividing d-model into an even head size, "
                 "top-k <= experts, prompt and tokens > 0\n";
    return false;
  }
  if (static_cast<std::int64_t>(o.prompt + o.tokens) > m.max_seq)
    o.model.max_seq = static_cast<std::int64_t>(o.prompt + o.tokens);
  return true;
}

std::string list(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string directions(const moe_decode::call_record& r) {
  const auto one = [](const char* name, const devpass::runtime::copy_stats::direction& d) {
    return std::string(name) + " " + std::to_string(d.count) + " (" + std::to_string(d.bytes) + " B)";
  };
  return one("h2d", r.copies.h2d) + ", " + one("d2h", r.copies.d2h) + ", " + one("d2d", r.copies.d2d) + ", KV cache " +
         std::to_string(r.kv_cache_bytes) + " B";
}

double mean_ms(const std::vector<moe_decode::call_record>& calls) {
  double total = 0;
  for (const auto& c : calls) total += c.seconds;
  return calls.empty() ? 0 : 1000 * total / static_cast<double>(calls.size());
}

// Where one decode step's time goes: the last decode call of a profiled devpass run, summed per
// kernel (or copy kind), largest first.
void print_profile(const std::vector<devpass::runtime::node_time>& nodes) {
  std::map<std::string, std::pair<double, int>> per_kind;
  double total = 0;
  for (const auto& n : nodes) {
    auto& [seconds, count] = per_kind[n.what];
    seconds += n.seconds;
    ++count;
    total += n.seconds;
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> rows(per_kind.begin(), per_kind.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  std::printf("profile (one decode step, devpass policy, each node waited for): %.3f ms in %zu nodes\n", 1000 * total,
              nodes.size());
  for (const auto& [what, entry] : rows)
    std::printf("  %-16s %8.3f ms  %3d nodes\n", what.c_str(), 1000 * entry.first, entry.second);
}

// Writes the decode graph before and after devpass propagation; SVGs when `dot` is installed.
void write_pictures(const options& o) {
  namespace fs = std::filesystem;
  fs::create_directories(o.out);
  devpass::graph g = moe_decode::build_method(o.model, "decode", 1);
  const std::string before = (fs::path(o.out) / "decode.before.dot").string();
  const std::string after = (fs::path(o.out) / "decode.after.dot").string();
  devpass::write_dot_file(g, before);
  devpass::propagate_device(g, moe_decode::devpass_options().propagation);
  devpass::write_dot_file(g, after);
  const bool have_dot = std::system("command -v dot >/dev/null 2>&1") == 0;
  if (!have_dot) {
    std::cout << "pictures: " << before << ", " << after << " (install graphviz for SVG)\n";
    return;
  }
  for (const std::string& dot : {before, after}) {
    const std::string svg = dot.substr(0, dot.size() - 4) + ".svg";
    if (std::system(("dot -Tsvg '" + dot + "' -o '" + svg + "'").c_str()) != 0)
      throw std::runtime_error("dot -Tsvg failed on " + dot);
  }
  std::cout << "pictures: " << (fs::path(o.out) / "decode.before.svg").string() << ", "
            << (fs::path(o.out) / "decode.after.svg").string() << "\n";
}

}  // namespace

int main(int argc, char** argv) try {
  options o;
  if (!parse(argc, argv, o)) return 2;
  const auto& m = o.model;
  const std::vector<std::int64_t> prompt = moe_decode::make_prompt(m, o.prompt, o.seed);

  auto with = [&](moe_decode::run_options r) {
    r.seed = o.seed;
    r.allow_cuda = r.allow_cuda && o.allow_cuda;
    r.cache_allocations = o.cache_allocations;
    return moe_decode::generate(m, prompt, o.tokens, r);
  };
  const moe_decode::generation reference = with(moe_decode::host_reference_options());
  const moe_decode::generation ours = with(moe_decode::devpass_options());
  const moe_decode::generation copied = with(moe_decode::devpass_weights_every_call_options());
  const moe_decode::generation theirs = with(moe_decode::executorch_no_elide_options());

  std::cout << ours.devices << "\n"
            << "device: " << (ours.emulated ? "emulated" : "cuda") << "\n"
            << "model: " << m.layers << " layers, d_model " << m.d_model << ", " << m.heads << " heads, " << m.experts
            << " experts (top-" << m.top_k << "), ffn " << m.ffn << ", vocab " << m.vocab << "; prompt " << list(prompt)
            << "\n"
            << "tokens: " << list(ours.tokens) << "\n";
  for (std::size_t i = 0; i < ours.decode.size(); ++i) {
    std::cout << "decode step " << i + 1 << ": devpass " << directions(ours.decode[i]) << "\n"
              << "               devpass --no-resident-constants " << directions(copied.decode[i]) << "\n"
              << "               executorch --no-elide " << directions(theirs.decode[i]) << "\n";
  }
  std::printf(
      "time per token: devpass %.3f ms, devpass --no-resident-constants %.3f ms, executorch --no-elide %.3f ms "
      "(decode, mean of %zu)\n",
      mean_ms(ours.decode), mean_ms(copied.decode), mean_ms(theirs.decode), ours.decode.size());
  // The weights: loaded onto the device once for both methods, or copied there by every call.
  std::printf(
      "weights: devpass loads %llu constants (%llu B) onto %s once, for both methods; --no-resident-constants "
      "copies them on every call\n",
      static_cast<unsigned long long>(ours.weights_loaded.count),
      static_cast<unsigned long long>(ours.weights_loaded.bytes), devpass::to_string(moe_decode::model_device).c_str());
  // What a CUDA graph of one decode step could not hold, under each configuration, and with the
  // caches planned into device buffers (plan_device_method_inputs/outputs) instead of the caller's.
  moe_decode::run_options planned_io = moe_decode::devpass_options();
  planned_io.plan_device_io = true;
  std::cout << "capturability of decode: devpass " << capture_line(m, moe_decode::devpass_options()) << "\n"
            << "                         executorch --no-elide "
            << capture_line(m, moe_decode::executorch_no_elide_options()) << "\n"
            << "                         devpass, device I/O planned " << capture_line(m, planned_io) << "\n";
  // Graph mode needs the caches planned (the verdict above): both runs plan them, so they move
  // the same bytes and only the way the device work is issued differs.
  bool graphs_equal = true;
  if (o.graphs) {
    moe_decode::run_options replayed = planned_io;
    replayed.graphs = devpass::runtime::graph_mode::when_capturable;
    const moe_decode::generation by_node = with(planned_io);
    const moe_decode::generation graphs = with(replayed);
    graphs_equal = graphs.tokens == by_node.tokens;
    std::printf(
        "graphs (%s, device I/O planned): decode replays %zu segment%s per step; tokens %s the node-by-node "
        "run; time per token %.3f ms replayed, %.3f ms node by node\n",
        graphs.emulated ? "emulated" : "cuda", graphs.replayed_segments, graphs.replayed_segments == 1 ? "" : "s",
        graphs_equal ? "equal" : "DIFFER from", mean_ms(graphs.decode), mean_ms(by_node.decode));
  }
  if (o.profile) {
    moe_decode::run_options profiled = moe_decode::devpass_options();
    profiled.profile = true;
    const moe_decode::generation run = with(profiled);
    if (!run.decode.empty()) print_profile(run.decode.back().profile);
  }
  write_pictures(o);

  bool ok = true;
  const auto check = [&](bool condition, const std::string& what) {
    if (!condition) {
      std::cerr << "moe_decode: FAILED: " << what << "\n";
      ok = false;
    }
  };
  check(ours.tokens == reference.tokens,
        "devpass tokens " + list(ours.tokens) + " != host reference " + list(reference.tokens));
  check(copied.tokens == reference.tokens, "devpass --no-resident-constants tokens " + list(copied.tokens) +
                                               " != host reference " + list(reference.tokens));
  check(theirs.tokens == reference.tokens,
        "executorch tokens " + list(theirs.tokens) + " != host reference " + list(reference.tokens));
  check(ours.opaque_nodes.empty() && copied.opaque_nodes.empty() && theirs.opaque_nodes.empty(),
        "a node fell back to the opaque kernel");
  check(graphs_equal, "graph mode's tokens differ from the node-by-node run's");
  if (ok) std::cout << "host reference: equal\n";
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "moe_decode: " << e.what() << "\n";
  return 1;
}
