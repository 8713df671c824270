// id_allocator: ids for the nodes passes create never collide — with ids already in the graph
// (checked by suffix group), with ids issued by make(), with ids derived from the same base.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "devpass/graph/id_allocator.hpp"

using namespace devpass;

namespace {
vertex add(graph& g, std::string id, op_kind op = op_kind::call) {
  return add_node(g, {.id = std::move(id), .op = op});
}
}  // namespace

TEST_CASE("id_allocator: generated ids never collide with existing '@' ids") {
  graph g;
  (void)add(g, "x", op_kind::input);
  const vertex r = add(g, "r");
  {
    id_allocator ids(g);
    CHECK(ids.make("x@d2h") == "x@d2h");
  }
  g[r].id = "x@d2h";
  id_allocator ids(g);
  // The caller adds each node before asking for the next id (as the copy actions do).
  const std::string second = ids.make("x@d2h");
  CHECK(second == "x@d2h#2");
  (void)add(g, second, op_kind::d2h_copy);
  CHECK(ids.make("x@d2h") == "x@d2h#3");
  CHECK(ids.make("y@d2h") == "y@d2h");
}

TEST_CASE("id_suffixes: an id's suffix group starts at its last '@'") {
  CHECK(id_suffixes::suffix_of("conv1").empty());
  CHECK(id_suffixes::suffix_of("").empty());
  CHECK(id_suffixes::suffix_of("x@d2h") == "@d2h");
  CHECK(id_suffixes::suffix_of("x@h2d[cuda:0]@d2h") == "@d2h");
  CHECK(id_suffixes::suffix_of("@h2d") == "@h2d");
  CHECK(id_suffixes::suffix_of("x@") == "@");
}

TEST_CASE("id_allocator: existing ids are checked by suffix group, issued ids always") {
  graph g;
  // Existing '@' ids of two suffixes, as an earlier pass leaves them.
  for (int k = 0; k < 3; ++k) (void)add(g, "k" + std::to_string(k) + "@h2d.0", op_kind::h2d_copy);
  (void)add(g, "k0@d2h", op_kind::d2h_copy);
  id_allocator ids(g);
  // A suffix no existing id has: nothing to collide with but what this allocator issues.
  const std::string fresh = ids.make("k0@d2d[cuda:1]");
  CHECK(fresh == "k0@d2d[cuda:1]");
  (void)add(g, fresh, op_kind::d2d_copy);
  CHECK(ids.make("k0@d2d[cuda:1]") == "k0@d2d[cuda:1]#2");
  // Suffixes that existing ids have: checked against them.
  CHECK(ids.make("k2@h2d.0") == "k2@h2d.0#2");
  CHECK(ids.make("k0@d2h") == "k0@d2h#2");
  CHECK(ids.make("k9@h2d.0") == "k9@h2d.0");
}

TEST_CASE("id_allocator: past 64 suffixes every existing '@' id is checked") {
  graph g;
  for (int k = 0; k < 70; ++k) (void)add(g, "user@" + std::to_string(k) + "x");
  id_allocator ids(g);
  CHECK(ids.make("user@69x") == "user@69x#2");
  CHECK(ids.make("user@0x") == "user@0x#2");
  CHECK(ids.make("user@70x") == "user@70x");
}

TEST_CASE("id_allocator: derived ids collide only with ids of the same base, existing ids and make()'s") {
  graph g;
  const vertex a = add(g, "a");
  const vertex b = add(g, "b");
  const vertex old_copy = add(g, "b@d2h", op_kind::d2h_copy);  // from an earlier pass
  (void)old_copy;
  id_allocator ids(g);

  const std::string first = ids.make_derived(a, "a@h2d[cuda:0]");
  CHECK(first == "a@h2d[cuda:0]");
  (void)add(g, first, op_kind::h2d_copy);
  // The same candidate from the same base: a collision.
  const std::string again = ids.make_derived(a, "a@h2d[cuda:0]");
  CHECK(again == "a@h2d[cuda:0]#2");
  (void)add(g, again, op_kind::h2d_copy);
  CHECK(ids.make_derived(a, "a@h2d[cuda:1]") == "a@h2d[cuda:1]");
  // An existing id with the candidate's suffix.
  CHECK(ids.make_derived(b, "b@d2h") == "b@d2h#2");
  // An output index between the base's id and the '@'.
  const std::string second_output = ids.make_derived(a, "a:1@d2h");
  CHECK(second_output == "a:1@d2h");
  (void)add(g, second_output, op_kind::d2h_copy);
  CHECK(ids.make_derived(a, "a:1@d2h") == "a:1@d2h#2");
}

TEST_CASE("id_allocator: make() sees derived ids, and derived ids see make()'s") {
  graph g;
  const vertex a = add(g, "a");
  id_allocator ids(g);
  const std::string derived = ids.make_derived(a, "a@d2h");
  (void)add(g, derived, op_kind::d2h_copy);
  CHECK(ids.make("a@d2h") == "a@d2h#2");  // make() learns the derived ids on its first call
  const std::string made = ids.make("a@h2d.0");
  (void)add(g, made, op_kind::h2d_copy);
  CHECK(ids.make_derived(a, "a@h2d.0") == "a@h2d.0#2");
}

TEST_CASE("id_allocator: a candidate not of the derived shape is handled as by make()") {
  graph g;
  const vertex a = add(g, "a");
  (void)add(g, "b@x@y");
  id_allocator ids(g);
  // Not starting with the base's id, or a second '@' after it: no base-only check is sound.
  CHECK(ids.make_derived(a, "b@x@y") == "b@x@y#2");
  CHECK(ids.make_derived(a, "a@x@y") == "a@x@y");
  CHECK(ids.make_derived(a, "a:@d2h") == "a:@d2h");
}

namespace {
// The suffixes of every live node's id, as propagate_device's input check gathers them.
id_suffixes seed_of(const graph& g) {
  id_suffixes seen;
  for (vertex v = 0, n = boost::num_vertices(g); v < n; ++v)
    if (!g[v].erased) seen.add(g, v);
  return seen;
}
}  // namespace

TEST_CASE("id_allocator: from a seed, the ids its own scan gives, nodes added after the seed included") {
  graph g;
  const vertex a = add(g, "a");
  const vertex b = add(g, "b");
  (void)add(g, "a@h2d[cuda:0]", op_kind::h2d_copy);  // an earlier pass's copies
  (void)add(g, "b@d2h", op_kind::d2h_copy);
  const id_suffixes seen = seed_of(g);
  CHECK(seen.end() == 4);
  CHECK(seen.found() == std::vector<std::string>{"@h2d[cuda:0]", "@d2h"});
  // Added after the sweep: the allocator reads these itself.
  (void)add(g, "b@h2d.0", op_kind::h2d_copy);
  (void)add(g, "c");

  id_allocator seeded(g, seen);
  id_allocator scanning(g);
  struct request {
    vertex base;
    std::string candidate, expected;
  };
  for (const request& r : std::vector<request>{{a, "a@h2d[cuda:0]", "a@h2d[cuda:0]#2"},
                                               {b, "b@d2h", "b@d2h#2"},
                                               {b, "b@h2d.0", "b@h2d.0#2"},
                                               {a, "a@h2d[cuda:1]", "a@h2d[cuda:1]"}}) {
    CAPTURE(r.candidate);
    CHECK(seeded.make_derived(r.base, r.candidate) == r.expected);
    CHECK(scanning.make_derived(r.base, r.candidate) == r.expected);
  }
}

TEST_CASE("id_allocator: past 64 suffixes, whether the seed or the allocator finds the 65th") {
  graph g;
  for (int k = 0; k < 60; ++k) (void)add(g, "user@" + std::to_string(k) + "x");
  const id_suffixes seen = seed_of(g);
  CHECK_FALSE(seen.too_many());
  for (int k = 60; k < 70; ++k) (void)add(g, "user@" + std::to_string(k) + "x");
  id_allocator from_seed(g, seen);
  CHECK(from_seed.make("user@69x") == "user@69x#2");
  CHECK(from_seed.make("user@3x") == "user@3x#2");

  const id_suffixes all = seed_of(g);
  CHECK(all.too_many());
  CHECK(all.found().size() == id_suffixes::max_suffixes);
  id_allocator from_full_seed(g, all);
  CHECK(from_full_seed.make("user@69x") == "user@69x#2");
  CHECK(from_full_seed.make("user@70x") == "user@70x");
}

TEST_CASE("id_allocator: a seed that saw more vertices than the graph has (compacted since) is not used") {
  graph g;
  (void)add(g, "a");
  (void)add(g, "b");
  (void)add(g, "gone");
  const id_suffixes seen = seed_of(g);  // saw 3 vertices, no '@' id among them
  g.clear();
  (void)add(g, "a");
  (void)add(g, "a@d2h", op_kind::d2h_copy);
  id_allocator ids(g, seen);
  CHECK(ids.make_derived(0, "a@d2h") == "a@d2h#2");  // found by reading every node again
}

TEST_CASE("id_allocator: candidates are free only without '@' ids, and the nodes named with them are seen after") {
  graph g;
  const vertex a = add(g, "a");
  const vertex b = add(g, "b");
  SUBCASE("no '@' id in the graph, none issued: free, and the next request reads the ids taken") {
    id_allocator ids(g, seed_of(g));
    REQUIRE(ids.candidates_free());
    // The caller names its copies with its candidates, without asking...
    (void)add(g, "a@h2d.0", op_kind::h2d_copy);
    (void)add(g, "b:1@d2h", op_kind::d2h_copy);
    // ... and the allocator then finds them as it finds any existing id.
    CHECK(ids.make_derived(a, "a@h2d.0") == "a@h2d.0#2");
    CHECK(ids.make_derived(b, "b:1@d2h") == "b:1@d2h#2");
    CHECK(ids.make("a@h2d.1") == "a@h2d.1");
    // Having issued ids, it no longer says candidates are free.
    CHECK_FALSE(ids.candidates_free());
  }
  SUBCASE("without a seed: the allocator reads the graph itself") {
    id_allocator ids(g);
    CHECK(ids.candidates_free());
    CHECK(ids.candidates_free());  // asking again changes nothing
  }
  SUBCASE("an '@' id in the graph, of any suffix: not free") {
    (void)add(g, "user@name");
    id_allocator seeded(g, seed_of(g));
    CHECK_FALSE(seeded.candidates_free());
    id_allocator scanning(g);
    CHECK_FALSE(scanning.candidates_free());
  }
  SUBCASE("an '@' id added after the seed's sweep: not free") {
    const id_suffixes seen = seed_of(g);
    (void)add(g, "a@d2h", op_kind::d2h_copy);
    id_allocator ids(g, seen);
    CHECK_FALSE(ids.candidates_free());
    CHECK(ids.make_derived(a, "a@d2h") == "a@d2h#2");
  }
  SUBCASE("after make_derived or make: not free") {
    id_allocator derived(g);
    REQUIRE(derived.make_derived(a, "a@d2h") == "a@d2h");  // issued, the node not added yet
    CHECK_FALSE(derived.candidates_free());
    id_allocator made(g);
    REQUIRE(made.make("z@x") == "z@x");
    CHECK_FALSE(made.candidates_free());
  }
}
