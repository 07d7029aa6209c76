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

class NameIndex {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;

  template <class It, class NameOf>
  NameIndex(It first, It last, NameOf name_of) : NameIndex(static_cast<size_t>(last - first)) {
    uint32_t i = 0;
    for (It it = first; it != last; ++it, ++i) insert(name_of(*it), i);
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
  // Room for `n` names, to be inserted.
  explicit NameIndex(size_t n) {
    size_t capacity = 8;
    while (capacity < 2 * n) capacity *= 2;  // at most half full: probes stay short
    slots_.resize(capacity);
  }

  // Adds `name` at `position` unless it is there already (a repeated name keeps its first
  // position). One hash per name.
  void insert(std::string_view name, uint32_t position) {
    uint64_t h = hash(name);
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.position == kAbsent) {
        s = {name, static_cast<uint32_t>(h), position};
        return;
      }
      if (s.hash == static_cast<uint32_t>(h) && s.name == name) return;
    }
  }

  // 24 bytes: the probe starts from the whole hash, the slot keeps its low half to skip
  // most string comparisons.
  struct Slot {
    std::string_view name;
    uint32_t hash = 0;
    uint32_t position = kAbsent;
  };

  const Slot* find_slot(std::string_view name) const {
    uint64_t h = hash(name);
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.position == kAbsent) return nullptr;
      if (s.hash == static_cast<uint32_t>(h) && s.name == name) return &s;
    }
  }

  // FNV-1a: names are short, and a call into a general-purpose hash costs more than this.
  static uint64_t hash(std::string_view s) {
    uint64_t h = 14695981039346656037ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return h;
  }

  std::vector<Slot> slots_;
};

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

// Each name with every id listed under it, in the order given: a multimap built once, for
// the project's function names and their dotted suffixes (tens of thousands of long
// names). The slots hold only a hash and a position, 8 bytes, and the names stay in the
// entry list: on a large project the index is mostly fresh memory, whose pages cost more
// to fault in than the probes cost. The ids of one name are contiguous.
class NameGroups {
 public:
  explicit NameGroups(std::vector<std::pair<std::string_view, uint32_t>> entries) : entries_(std::move(entries)) {
    size_t capacity = 8;
    while (capacity < 2 * entries_.size()) capacity *= 2;
    slots_.assign(capacity, Slot{});
    // A counting sort on the position where each name first appears.
    std::vector<uint32_t> first(entries_.size());
    group_start_.assign(entries_.size() + 1, 0);
    for (uint32_t i = 0; i < entries_.size(); ++i) {
      first[i] = insert(i);
      ++group_start_[first[i] + 1];
    }
    for (size_t i = 1; i < group_start_.size(); ++i) group_start_[i] += group_start_[i - 1];
    ids_.resize(entries_.size());
    std::vector<uint32_t> next(group_start_.begin(), group_start_.end() - 1);
    for (size_t i = 0; i < entries_.size(); ++i) ids_[next[first[i]]++] = entries_[i].second;
  }

  std::span<const uint32_t> find(std::string_view name) const {
    uint64_t h = hash(name);
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.position == kAbsent) return {};
      if (s.hash == static_cast<uint32_t>(h) && entries_[s.position].first == name) {
        return {ids_.data() + group_start_[s.position], ids_.data() + group_start_[s.position + 1]};
      }
    }
  }

 private:
  static constexpr uint32_t kAbsent = UINT32_MAX;
  struct Slot {
    uint32_t hash = 0;
    uint32_t position = kAbsent;  // of the name's first entry
  };

  // Long dotted names: a word-at-a-time hash (libstdc++'s) rather than a byte loop.
  static uint64_t hash(std::string_view s) { return std::hash<std::string_view>{}(s); }

  // The position of the first entry with entry `i`'s name, adding it if it is the first.
  uint32_t insert(uint32_t i) {
    std::string_view name = entries_[i].first;
    uint64_t h = hash(name);
    size_t mask = slots_.size() - 1;
    for (size_t k = h & mask;; k = (k + 1) & mask) {
      Slot& s = slots_[k];
      if (s.position == kAbsent) {
        s = {static_cast<uint32_t>(h), i};
        return i;
      }
      if (s.hash == static_cast<uint32_t>(h) && entries_[s.position].first == name) return s.position;
    }
  }

  std::vector<std::pair<std::string_view, uint32_t>> entries_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> group_start_;  // by first position; later positions start empty groups
  std::vector<uint32_t> ids_;
};

}  // namespace torchlint
