// devpass/graph/id_allocator.hpp — unique ids for the nodes passes create.
//
// Generated ids contain '@' ("x@d2h"), so a candidate can only collide with an id that already
// contains '@' (from an earlier pass, or a user's) or with one this allocator issued. Ids are
// remembered by hash only (no string copies); a candidate whose hash is found is checked exactly
// against the graph, which happens only on a real collision (then "#2", "#3"... is appended).
//
// Two ways to ask, with the same guarantee:
//  - make(candidate): any candidate containing '@'. Remembered in one open-addressing table.
//  - make_derived(base, candidate): candidate = the id of node `base`, then optionally
//    ":<output>", then '@' and a tail without '@' ("x@h2d[cuda:0]", "x:1@d2h", "k@h2d.2").
//    Node ids are unique and never end in ":<digits>" (verify_structure checks both), so such a
//    candidate can only equal another derived from the same base (its last '@' is the one after
//    the base's id; what is before it, less a ":<digits>", is the base's id): it is remembered
//    with its base, where the next lookup finds it in cache (the passes derive ids from the node
//    they are working on), not in a table as large as the graph, where every probe is a cache and
//    TLB miss (docs/performance.md#what-each-design-choice-saves).
// And one way not to ask: candidates_free(), for a caller whose candidates differ from each
// other, says when every candidate is free as it is (no live id contains '@', none issued).
//
// The ids already in the graph are grouped by their suffix (from the last '@': "@h2d.0",
// "@d2h"): a candidate can only equal an existing id with the same suffix, so only the groups
// that candidates use are hashed, when first needed. A pass that makes d2h copies after a pass
// that made a million h2d copies hashes none of those. Past 64 distinct suffixes every existing
// '@' id is hashed at once.
//
// Finding the suffixes reads every node's id, a sweep over the graph's memory of its own. A sweep
// that reads every node anyway can find them instead (id_suffixes, the allocator's rewrite-state
// seed: propagate_device's input check does) and hand them to the allocators made after it,
// which then read only the nodes added since (docs/performance.md#what-each-design-choice-saves).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "devpass/graph/concat.hpp"
#include "devpass/graph/graph.hpp"

namespace devpass {

// The suffixes (from the last '@') of a graph's live ids, as id_allocator groups them: at most
// max_suffixes distinct ones, then only that there are more. Fed the live nodes in vertex order,
// it covers the vertices before the last one it was given; an allocator made from it reads the
// rest itself. It stays true while the nodes it saw keep their numbers and ids: nodes may be added
// or erased after it, not renumbered (compacted) or renamed.
class id_suffixes {
 public:
  static constexpr std::size_t max_suffixes = 64;

  void add(const graph& g, vertex v) {
    end_ = v + 1;
    if (too_many_) return;
    const std::string_view suffix = suffix_of(g[v].id);
    if (suffix.empty() || std::find(found_.begin(), found_.end(), suffix) != found_.end()) return;
    if (found_.size() == max_suffixes)
      too_many_ = true;
    else
      found_.emplace_back(suffix);
  }

  [[nodiscard]] vertex end() const { return end_; }  // the vertices before it were seen
  [[nodiscard]] const std::vector<std::string>& found() const { return found_; }
  [[nodiscard]] bool too_many() const { return too_many_; }

  static std::string_view suffix_of(std::string_view id) {
    // Most ids hold no '@': a forward search (memchr) says so in a few instructions, where
    // rfind walks the id a byte at a time; the suffix starts at the last one.
    if (id.find('@') == std::string_view::npos) return {};
    return id.substr(id.rfind('@'));
  }

 private:
  std::vector<std::string> found_;
  bool too_many_ = false;
  vertex end_ = 0;
};

class id_allocator {
 public:
  using seed = id_suffixes;  // graph_model.hpp, rewrite_seed_t

  // The scan happens on the first request, so a pass that creates no node pays nothing.
  explicit id_allocator(const graph& g) : g_(&g) {}
  // With the suffixes of the ids of the vertices before seen.end(), found by the caller's sweep.
  id_allocator(const graph& g, id_suffixes seen) : g_(&g), suffixes_(std::move(seen)) {}

  // The caller adds the node before the next request: a later request is checked against it.
  [[nodiscard]] std::string make(std::string candidate) {
    if (!mixed_) share_derived();
    prepare(candidate);
    // One probe: remember the candidate, or learn that an id with its hash was issued or found
    // before; only then compare against the graph (a real collision, or a hash collision).
    if (!remember(hash_of(candidate)) && taken(candidate)) return renumber(candidate);
    return candidate;
  }

  // See the header comment for what `candidate` must look like.
  [[nodiscard]] std::string make_derived(vertex base, std::string candidate) {
    if (!usable(base, candidate)) return make(std::move(candidate));
    std::uint64_t h = hash_of(candidate);
    if (clashes(base, candidate, h) && taken(candidate)) {
      candidate = renumber_derived(base, candidate);
      h = hash_of(candidate);
    }
    record(base, h);
    return candidate;
  }

  // For a caller about to name nodes with candidates that differ from each other (the fused
  // paths: one copy per delegate slot, or per value and device): true when every candidate
  // containing '@' is free as it is, because no live id of the graph contains '@' and this
  // allocator has issued none. The caller then takes its candidates without asking: make and
  // make_derived would return each unchanged, after checks that cost about as much as the rest
  // of making a copy's vertex (docs/performance.md#what-each-design-choice-saves). The next
  // request reads the ids of the nodes added from here on from the graph, as it reads any
  // existing id.
  [[nodiscard]] bool candidates_free() {
    if (!scanned_) scan();
    if (mixed_ || !derived_.empty() || !suffixes_.found().empty()) return false;  // too many suffixes: found() is full
    scanned_ = false;  // the next request scans from suffixes_.end(): the nodes added from here on
    return true;
  }

 private:
  struct derived_entry {
    std::uint64_t hash;
    std::uint32_t next;  // 1 + index of the base's previous entry; 0: none
  };

  // The collisions: "#2", "#3"... appended until the id is free. Out of line and cold: they
  // happen only when a graph already holds the id a pass would give, and the string building
  // would otherwise be inlined into every caller.
  [[gnu::cold, gnu::noinline]] std::string renumber(const std::string& base) {
    for (std::size_t k = 2;; ++k) {
      std::string candidate = numbered(base, k);
      prepare(candidate);
      if (remember(hash_of(candidate)) || !taken(candidate)) return candidate;
    }
  }
  [[gnu::cold, gnu::noinline]] std::string renumber_derived(vertex base, const std::string& original) {
    for (std::size_t k = 2;; ++k) {
      std::string candidate = numbered(original, k);
      if (!clashes(base, candidate, hash_of(candidate)) || !taken(candidate)) return candidate;
    }
  }
  static std::string numbered(std::string_view base, std::size_t k) { return concat({base, "#", std::to_string(k)}); }

  static std::uint64_t hash_of(std::string_view id) { return std::hash<std::string_view>{}(id) | 1; }
  static std::string_view suffix_of(std::string_view id) { return id_suffixes::suffix_of(id); }
  // The shape make_derived needs: base's id, then [":<digits>"] "@" tail, the tail without '@'.
  [[nodiscard]] bool usable(vertex base, std::string_view candidate) const {
    const std::string_view id = (*g_)[base].id;
    if (!candidate.starts_with(id)) return false;
    std::string_view rest = candidate.substr(id.size());
    if (rest.starts_with(':')) {
      const auto digits_end = rest.find_first_not_of("0123456789", 1);
      if (digits_end == 1 || digits_end == std::string_view::npos) return false;
      rest.remove_prefix(digits_end);
    }
    return rest.starts_with('@') && rest.find('@', 1) == std::string_view::npos;
  }

  // Scans the graph once; then makes sure the existing ids that could equal `candidate` are
  // hashed. True when the table may hold an id equal to it.
  bool prepare(std::string_view candidate) {
    if (!scanned_) scan();
    if (all_hashed_) return true;
    const std::string_view suffix = suffix_of(candidate);
    const std::vector<std::string>& found = suffixes_.found();
    for (std::size_t i = 0; i < found.size(); ++i)
      if (found[i] == suffix) {
        if (!hashed_[i]) hash_existing(suffix);
        hashed_[i] = true;
        return true;
      }
    return mixed_;  // ids issued by make() are in the table too
  }

  // A derived candidate may equal: an existing id (table, by suffix group), an id make()
  // issued (table), an id derived from the same base (its entries).
  bool clashes(vertex base, std::string_view candidate, std::uint64_t h) {
    if (prepare(candidate) && contains(h)) return true;
    if (base < derived_head_.size())
      for (std::uint32_t e = derived_head_[base]; e != 0; e = derived_[e - 1].next)
        if (derived_[e - 1].hash == h) return true;
    return false;
  }
  void record(vertex base, std::uint64_t h) {
    if (base >= derived_head_.size())
      derived_head_.resize(std::max<std::size_t>(base + 1, boost::num_vertices(*g_)), 0);
    derived_.push_back({h, derived_head_[base]});
    derived_head_[base] = static_cast<std::uint32_t>(derived_.size());
    if (mixed_) (void)remember(h);
  }
  // make() checks the table only: from its first call on, derived ids go there too.
  void share_derived() {
    mixed_ = true;
    if (!scanned_) scan();
    for (const derived_entry& e : derived_) (void)remember(e.hash);
  }

  // Groups the suffixes of the ids the seed did not see (every id, without one).
  void scan() {
    scanned_ = true;
    table_.assign(1024, 0);
    const vertex n = boost::num_vertices(*g_);
    if (suffixes_.end() > n) suffixes_ = {};  // compacted since the seed's sweep: read every node
    for (vertex v = suffixes_.end(); v < n && !suffixes_.too_many(); ++v)
      if (!(*g_)[v].erased) suffixes_.add(*g_, v);
    hashed_.assign(suffixes_.found().size(), false);
    if (suffixes_.too_many()) {
      all_hashed_ = true;
      hash_existing({});
    }
  }
  // Hashes every live '@' id with this suffix (every '@' id when it is empty).
  void hash_existing(std::string_view suffix) {
    for (const auto v : boost::make_iterator_range(boost::vertices(*g_))) {
      const node& n = (*g_)[v];
      if (n.erased) continue;
      const std::string_view own = suffix_of(n.id);
      if (own.empty() || (!suffix.empty() && own != suffix)) continue;
      (void)remember(hash_of(n.id));
    }
  }
  [[nodiscard]] bool contains(std::uint64_t h) const {
    const std::size_t mask = table_.size() - 1;
    for (std::size_t i = h & mask; table_[i] != 0; i = (i + 1) & mask)
      if (table_[i] == h) return true;
    return false;
  }
  // Inserts h; false when it was there already.
  bool remember(std::uint64_t h) {
    if (2 * (count_ + 1) > table_.size()) grow();
    const std::size_t mask = table_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      if (table_[i] == h) return false;
      if (table_[i] == 0) {
        table_[i] = h;
        ++count_;
        return true;
      }
    }
  }
  void grow() {
    std::vector<std::uint64_t> old = std::move(table_);
    table_.assign(old.size() * 2, 0);
    const std::size_t mask = table_.size() - 1;
    for (const std::uint64_t h : old) {
      if (!h) continue;
      std::size_t i = h & mask;
      while (table_[i] != 0) i = (i + 1) & mask;
      table_[i] = h;
    }
  }
  // The exact check behind a hash hit. Callers add each node right after getting its id, so
  // the graph holds every id issued before.
  [[nodiscard]] bool taken(std::string_view id) const {
    for (const auto v : boost::make_iterator_range(boost::vertices(*g_)))
      if (!(*g_)[v].erased && (*g_)[v].id == id) return true;
    return false;
  }

  const graph* g_;
  bool scanned_ = false;
  bool all_hashed_ = false;           // more than max_suffixes suffixes: every '@' id is hashed
  bool mixed_ = false;                // make() was called: the table holds every issued id
  id_suffixes suffixes_;              // the suffixes of the '@' ids, found by the scan (or the seed)
  std::vector<bool> hashed_;          // per suffix found: its existing ids are in the table
  std::vector<std::uint64_t> table_;  // hashes of ids from the graph and from make(); 0 = empty
  std::size_t count_ = 0;
  std::vector<std::uint32_t> derived_head_;  // per base vertex: 1 + index of its newest entry
  std::vector<derived_entry> derived_;
};
// The seed propagate_device gathers for devpass::graph (a TU that asked for rewrite_seed_t<graph>
// before this header was included would have got none, and fails here).
static_assert(std::is_same_v<rewrite_seed_t<graph>, id_suffixes>);

}  // namespace devpass
