#pragma once
// Tensor sizes and strides: up to four dimensions inline (almost every tensor), more on
// the heap. A checkpoint with 200 000 tensors then needs no allocation per tensor.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

namespace torchlint::ckpt {

class Dims {
 public:
  Dims() = default;
  Dims(std::initializer_list<int64_t> values) { assign(values.begin(), values.end()); }
  Dims(const std::vector<int64_t>& values) { assign(values.begin(), values.end()); }  // NOLINT: implicit on purpose
  Dims(size_t n, int64_t value) { assign(n, value); }
  Dims(const Dims& other) { assign(other.begin(), other.end()); }
  Dims(Dims&& other) noexcept { take(other); }
  Dims& operator=(const Dims& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  Dims& operator=(Dims&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  ~Dims() { release(); }

  template <class It>
  void assign(It first, It last) {
    clear();
    for (; first != last; ++first) push_back(*first);
  }
  void assign(size_t n, int64_t value) {
    clear();
    for (size_t i = 0; i < n; ++i) push_back(value);
  }
  void clear() {
    release();
    size_ = 0;
    capacity_ = kInline;
  }
  void push_back(int64_t v) {
    if (size_ == capacity_) grow();
    data()[size_++] = v;
  }
  void resize(size_t n, int64_t value = 0) {
    while (size_ > n) --size_;
    while (size_ < n) push_back(value);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const int64_t* data() const { return capacity_ > kInline ? heap_ : inline_; }
  int64_t* data() { return capacity_ > kInline ? heap_ : inline_; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t& operator[](size_t i) { return data()[i]; }
  operator std::span<const int64_t>() const { return {data(), size_}; }  // NOLINT: implicit on purpose
  std::vector<int64_t> vector() const { return {begin(), end()}; }

  friend bool operator==(const Dims& a, const Dims& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }
  friend bool operator==(const Dims& a, const std::vector<int64_t>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  static constexpr uint32_t kInline = 4;
  void grow() {
    uint32_t capacity = capacity_ * 2;
    auto* bigger = new int64_t[capacity]();
    std::memcpy(bigger, data(), size_ * sizeof(int64_t));
    release();
    heap_ = bigger;
    capacity_ = capacity;
  }
  void release() {
    if (capacity_ > kInline) delete[] heap_;
    capacity_ = kInline;
  }
  void take(Dims& other) {  // `this` holds nothing
    size_ = other.size_;
    capacity_ = other.capacity_;
    if (capacity_ > kInline) {
      heap_ = other.heap_;
    } else {
      std::memcpy(inline_, other.inline_, sizeof inline_);
    }
    other.size_ = 0;
    other.capacity_ = kInline;
  }
  // 40 bytes: up to kInline values in place, more on the heap (capacity_ > kInline).
  uint32_t size_ = 0;
  uint32_t capacity_ = kInline;
  union {
    int64_t inline_[kInline] = {};
    int64_t* heap_;
  };
};

}  // namespace torchlint::ckpt
