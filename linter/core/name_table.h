#pragma once
// Immutable lookup tables of names (API names, method names, package names) for the
// tables the rules consult on every call they see. Each rule's table is touched rarely,
// so it is cold in the cache when asked: std::unordered_set then costs a bucket, a node
// and the string, three or more cache misses per lookup. Here the hashes and views sit in
// one open-addressed array, so a lookup reads about one cache line, plus the string when
// the hash matches. Built once, from names that outlive the table (string literals, the
// project's qualified names): the views are not copied.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace torchlint {

namespace detail {

// FNV-1a: the rules' names are short, and a call into a general-purpose hash costs more
// than this.
struct Fnv1a {
  uint64_t operator()(std::string_view s) const {
    uint64_t h = 14695981039346656037ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return h;
  }
};

// For long names (dotted qualnames), where a byte-at-a-time hash is the cost.
struct WordHash {
  uint64_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

template <class Hash>
class BasicNameIndex {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;

  template <class It, class NameOf>
  BasicNameIndex(It first, It last, NameOf name_of) : BasicNameIndex(static_cast<size_t>(last - first)) {
    uint32_t i = 0;
    for (It it = first; it != last; ++it, ++i) insert(name_of(*it), i);
  }

  // Room for `n` names, to be inserted.
  explicit BasicNameIndex(size_t n) {
    size_t capacity = 8;
    while (capacity < 2 * n) capacity *= 2;  // at most half full: probes stay short
    slots_.resize(capacity);
  }

  // Adds `name` at `position` unless it is there already (a repeated name keeps its first
  // position); returns the position it has. At most the `n` given at construction.
  uint32_t insert(std::string_view name, uint32_t position) {
    uint64_t h = Hash{}(name);
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.position == kAbsent) {
        s = {h, name, position};
        return position;
      }
      if (s.hash == h && s.name == name) return s.position;
    }
  }

  // Position of `name` in the list the index was built from, or kAbsent.
  uint32_t find(std::string_view name) const {
    const Slot* s = find_slot(name);
    return s ? s->position : kAbsent;
  }

  // The stored view equal to `name` (it outlives `name`), or null.
  const std::string_view* find_name(std::string_view name) const {
    const Slot* s = find_slot(name);
    return s ? &s->name : nullptr;
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    std::string_view name;
    uint32_t position = kAbsent;
  };

  const Slot* find_slot(std::string_view name) const {
    uint64_t h = Hash{}(name);
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.position == kAbsent) return nullptr;
      if (s.hash == h && s.name == name) return &s;
    }
  }

  std::vector<Slot> slots_;
};

using NameIndex = BasicNameIndex<Fnv1a>;

}  // namespace detail

class NameSet {
 public:
  NameSet(std::initializer_list<std::string_view> names)
      : index_(names.begin(), names.end(), [](std::string_view n) { return n; }) {}
  template <size_t N>
  explicit NameSet(const std::string_view (&names)[N])
      : index_(std::begin(names), std::end(names), [](std::string_view n) { return n; }) {}
  bool contains(std::string_view name) const { return index_.find(name) != detail::NameIndex::kAbsent; }
  // The set's own copy of `name` (a view of the literal it was built from), or null.
  const std::string_view* find(std::string_view name) const { return index_.find_name(name); }

 private:
  detail::NameIndex index_;
};

template <class Value>
class NameMap {
 public:
  NameMap(std::initializer_list<std::pair<std::string_view, Value>> entries)
      : index_(entries.begin(), entries.end(), [](const auto& e) { return e.first; }) {
    values_.reserve(entries.size());
    for (const auto& e : entries) values_.push_back(e.second);
  }
  // The value for `name`, or null.
  const Value* find(std::string_view name) const {
    uint32_t i = index_.find(name);
    return i == detail::NameIndex::kAbsent ? nullptr : &values_[i];
  }

 private:
  detail::NameIndex index_;
  std::vector<Value> values_;
};

// Each name with every id listed under it, in the order given: a multimap for an index
// built once (the project's function names and their suffixes). The ids of one name are
// contiguous, so there is no node or vector per name to allocate.
class NameGroups {
 public:
  explicit NameGroups(const std::vector<std::pair<std::string_view, uint32_t>>& entries) : index_(entries.size()) {
    // A counting sort on the position where each name first appears.
    std::vector<uint32_t> first(entries.size());
    group_start_.assign(entries.size() + 1, 0);
    for (uint32_t i = 0; i < entries.size(); ++i) {
      first[i] = index_.insert(entries[i].first, i);
      ++group_start_[first[i] + 1];
    }
    for (size_t i = 1; i < group_start_.size(); ++i) group_start_[i] += group_start_[i - 1];
    ids_.resize(entries.size());
    std::vector<uint32_t> next(group_start_.begin(), group_start_.end() - 1);
    for (size_t i = 0; i < entries.size(); ++i) ids_[next[first[i]]++] = entries[i].second;
  }

  std::span<const uint32_t> find(std::string_view name) const {
    uint32_t g = index_.find(name);
    if (g == Index::kAbsent) return {};
    return {ids_.data() + group_start_[g], ids_.data() + group_start_[g + 1]};
  }

 private:
  using Index = detail::BasicNameIndex<detail::WordHash>;
  Index index_;
  std::vector<uint32_t> group_start_;  // by first position; later positions start empty groups
  std::vector<uint32_t> ids_;
};

}  // namespace torchlint
