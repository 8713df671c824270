#include <doctest/doctest.h>

#include "../examples/moe_decode/pipeline.hpp"
#include "devpass/planning/capturability.hpp"

using namespace moe_decode;

namespace {
// Small enough for a Debug build on two cores; two layers so caches cross layers.
model_config small_model() {
  model_config c;
  c.vocab = 64;
  c.d_model = 32;
  c.heads = 2;
  c.ffn = 48;
  c.experts = 4;
  c.top_k = 2;
  c.layers = 2;
  c.max_seq = 16;
  return c;
}
constexpr std::size_t new_tokens = 5;
}  // namespace

TEST_CASE("moe_decode: every op of both methods runs a builtin kernel") {
  const model_config c = small_model();
  const generation g = generate(c, make_prompt(c, 4, 7), new_tokens, host_reference_options());
  CHECK(g.opaque_nodes.empty());
  CHECK(g.tokens.size() == new_tokens);
  CHECK(g.decode.size() == new_tokens - 1);
}

TEST_CASE("moe_decode: tokens equal the host reference and repeat on every run") {
  const model_config c = small_model();
  const auto prompt = make_prompt(c, 4, 7);
  const generation reference = generate(c, prompt, new_tokens, host_reference_options());
  const generation ours = generate(c, prompt, new_tokens, devpass_options());
  const generation again = generate(c, prompt, new_tokens, devpass_options());
  const generation theirs = generate(c, prompt, new_tokens, executorch_no_elide_options());
  CHECK(ours.tokens == reference.tokens);
  CHECK(again.tokens == ours.tokens);
  CHECK(theirs.tokens == reference.tokens);
  // The prompt and the weights decide the tokens: another seed gives another sequence.
  run_options other = devpass_options();
  other.seed = 43;
  CHECK(generate(c, prompt, new_tokens, other).tokens != ours.tokens);
}

TEST_CASE("moe_decode: per decode step devpass moves no KV-cache bytes and fewer bytes than executorch --no-elide") {
  const model_config c = small_model();
  const auto prompt = make_prompt(c, 4, 7);
  const generation ours = generate(c, prompt, new_tokens, devpass_options());
  const generation theirs = generate(c, prompt, new_tokens, executorch_no_elide_options());
  REQUIRE(ours.decode.size() == new_tokens - 1);
  REQUIRE(theirs.decode.size() == new_tokens - 1);
  for (std::size_t i = 0; i < ours.decode.size(); ++i) {
    INFO("decode step " << i + 1);
    CHECK(ours.decode[i].kv_cache_bytes == 0);
    CHECK(ours.decode[i].bytes() < theirs.decode[i].bytes());
    // devpass: the caller uploads the token and the start position (8 B each), and the logits
    // come back once for host sampling (vocab floats).
    CHECK(ours.decode[i].copies.h2d.count == 2);
    CHECK(ours.decode[i].copies.h2d.bytes == 16);
    CHECK(ours.decode[i].copies.d2h.count == 1);
    CHECK(ours.decode[i].copies.d2h.bytes == static_cast<std::uint64_t>(c.vocab) * 4);
    CHECK(ours.decode[i].copies.d2d.count == 0);
  }
}

TEST_CASE(
    "moe_decode: the weights are loaded onto the device once; without resident constants every call copies them") {
  const model_config c = small_model();
  const auto prompt = make_prompt(c, 4, 7);
  const generation reference = generate(c, prompt, new_tokens, host_reference_options());
  const generation ours = generate(c, prompt, new_tokens, devpass_options());
  const generation copied = generate(c, prompt, new_tokens, devpass_weights_every_call_options());
  CHECK(copied.tokens == reference.tokens);
  // Prefill loads every weight (decode reads the same ones, from the shared cache).
  REQUIRE(ours.weights_loaded.count > 0);
  CHECK(ours.prefill.copies.load.count == ours.weights_loaded.count);
  CHECK(copied.weights_loaded.count == 0);
  REQUIRE(copied.decode.size() == ours.decode.size());
  for (std::size_t i = 0; i < ours.decode.size(); ++i) {
    INFO("decode step " << i + 1);
    CHECK(ours.decode[i].copies.load.count == 0);
    CHECK(copied.decode[i].copies.h2d.bytes == ours.decode[i].copies.h2d.bytes + ours.weights_loaded.bytes);
  }
}

TEST_CASE("moe_decode: without skip flags the KV cache crosses the bus every step") {
  const model_config c = small_model();
  run_options o = devpass_options();
  o.propagation.skip_h2d_for_method_inputs = o.propagation.skip_d2h_for_method_outputs = false;
  const generation g = generate(c, make_prompt(c, 4, 7), 3, o);
  const std::uint64_t cache = c.cache_spec().byte_size() * static_cast<std::uint64_t>(c.layers);
  for (const call_record& r : g.decode) CHECK(r.kv_cache_bytes == 2 * cache);  // in (h2d) and out (d2h)
}

TEST_CASE("moe_decode: a decode step is one CUDA graph once the caller's device I/O is planned, not before") {
  const model_config c = small_model();
  for (run_options o : {devpass_options(), executorch_no_elide_options()}) {
    const prepared_method caller_owned = prepare(build_method(c, "decode", 1), o);
    const devpass::capture_verdict blocked = devpass::capturability(caller_owned.g, caller_owned.plan);
    CHECK(blocked.kind == devpass::capture_kind::not_capturable);
    CHECK(blocked.segments.size() == 1);  // no host work between the step's device work
    std::vector<std::string> blockers;
    for (const auto& r : blocked.reasons) {
      CHECK(r.cause == devpass::capture_cause::caller_buffer);
      blockers.push_back(r.node);
    }
    // The position and token inputs, the caches in, and (by their producers) the caches out.
    CHECK(blockers.size() == 2 + 2 * c.layers);
    CHECK(std::find(blockers.begin(), blockers.end(), "kv_cache_0") != blockers.end());
    o.plan_device_io = true;
    const prepared_method planned = prepare(build_method(c, "decode", 1), o);
    CHECK(devpass::capturability(planned.g, planned.plan).kind == devpass::capture_kind::one_graph);
  }
}

TEST_CASE("moe_decode: in graph mode, with the caches planned, decode replays one graph and the tokens do not change") {
  const model_config c = small_model();
  const auto prompt = make_prompt(c, 4, 7);
  const generation reference = generate(c, prompt, new_tokens, host_reference_options());
  run_options planned = devpass_options();
  planned.plan_device_io = true;
  planned.graphs = devpass::runtime::graph_mode::required;
  const generation replayed = generate(c, prompt, new_tokens, planned);
  CHECK(replayed.replayed_segments == 1);
  CHECK(replayed.weights_loaded.count > 0);  // when the methods were prepared, once
  for (const call_record& r : replayed.decode) CHECK(r.copies.load.count == 0);
  CHECK(replayed.tokens == reference.tokens);
  CHECK(replayed.opaque_nodes.empty());
}
