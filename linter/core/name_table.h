#pragma once
// Immutable lookup tables of names (API names, method names, package names) for the
// tables the rules consult on every call they see. Each rule's table is touched rarely,
// so it is cold in the cache when asked: std::unordered_set then costs a bucket, a node
// and the string, three or more cache misses per lookup. Here the hashes and views sit in
// one open-addressed array, so a lookup reads about one cache line, plus the string when
// the hash matches. Built once, from string literals (the views are not copied).
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <string_view>
#include <utility>
#include <vector>

namespace torchlint {

namespace detail {

class NameIndex {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;

  template <class It, class NameOf>
  NameIndex(It first, It last, NameOf name_of) {
    size_t n = static_cast<size_t>(last - first), capacity = 8;
    while (capacity < 2 * n) capacity *= 2;  // at most half full: probes stay short
    slots_.resize(capacity);
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
  struct Slot {
    uint64_t hash = 0;
    std::string_view name;
    uint32_t position = kAbsent;
  };

  const Slot* find_slot(std::string_view name) const {
    uint64_t h = hash(name);
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.position == kAbsent) return nullptr;
      if (s.hash == h && s.name == name) return &s;
    }
  }

  // FNV-1a: names are short, and a call into a general-purpose hash costs more than this.
  static uint64_t hash(std::string_view s) {
    uint64_t h = 14695981039346656037ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return h;
  }

  void insert(std::string_view name, uint32_t position) {
    if (find(name) != kAbsent) return;  // a repeated name keeps its first position
    uint64_t h = hash(name);
    size_t mask = slots_.size() - 1;
    size_t i = h & mask;
    while (slots_[i].position != kAbsent) i = (i + 1) & mask;
    slots_[i] = {h, name, position};
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

}  // namespace torchlint
