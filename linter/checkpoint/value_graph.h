#pragma once
// The values a pickle builds, without building them: a compact arena of nodes that the
// pickle VM fills and the analyses read. Nothing here is ever imported, called or
// turned into a live Python object. Globals are names, calls are (callee, arguments)
// records, persistent ids are references; strings are views into the pickle bytes
// whenever the pickle stores them verbatim.
//
// Nodes are 16 bytes and containers keep their items in shared pools, so a 6 M-opcode
// checkpoint pickle costs a few bytes of memory per pickle byte.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace torchlint::ckpt {

using ValueId = uint32_t;
inline constexpr ValueId kNoValue = 0xffffffffu;

enum class ValueKind : uint8_t {
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,
  kBytes,
  kTuple,
  kList,
  kDict,
  kSet,
  kFrozenSet,
  kGlobal,         // a name a pickle imports: `collections.OrderedDict`
  kCall,           // the result of calling something: REDUCE, NEWOBJ, OBJ, INST
  kPersistentRef,  // what persistent_load(pid) returns (a storage, for torch)
  kExtension,      // EXT1/2/4: an object from the copyreg extension registry
  kBuffer,         // NEXT_BUFFER / READONLY_BUFFER (out-of-band data)
};
std::string_view value_kind_name(ValueKind k);

enum class CallKind : uint8_t { kReduce, kNewObj, kNewObjEx, kObj, kInst };
std::string_view call_kind_opcode(CallKind k);

// A global name as the pickle spells it. `module` and `name` are exactly what the pickle
// asked for; `name` may be dotted (an attribute chain).
struct GlobalName {
  std::string module;
  std::string name;
  std::string qualified() const { return module + "." + name; }
};

// 40 bytes (a checkpoint has one per tensor and one per tensor's backward-hooks dict).
struct CallRecord {
  uint64_t offset = 0;  // pickle offset of the calling opcode
  ValueId callee = kNoValue;
  ValueId args = kNoValue;        // a tuple, normally
  ValueId kwargs = kNoValue;      // NEWOBJ_EX only
  ValueId state = kNoValue;       // BUILD's argument, when the object was built
  uint32_t items = 0;             // container slot for SETITEM(S)/APPEND(S) on this object
  uint32_t tensor = 0xffffffffu;  // the tensor this call builds (set by the torch decoder)
  CallKind kind = CallKind::kReduce;
};

class ValueGraph;

// A value and its graph: the read API the analyses use.
class ValueRef {
 public:
  ValueRef() = default;
  ValueRef(const ValueGraph* graph, ValueId id) : graph_(graph), id_(id) {}

  bool valid() const { return graph_ && id_ != kNoValue; }
  explicit operator bool() const { return valid(); }
  ValueId id() const { return id_; }
  const ValueGraph* graph() const { return graph_; }
  ValueKind kind() const;

  bool is_none() const { return valid() && kind() == ValueKind::kNone; }
  bool is_int() const { return valid() && kind() == ValueKind::kInt; }
  bool is_float() const { return valid() && kind() == ValueKind::kFloat; }
  bool is_number() const { return is_int() || is_float() || (valid() && kind() == ValueKind::kBool); }
  bool is_str() const { return valid() && kind() == ValueKind::kString; }
  bool is_call() const { return valid() && kind() == ValueKind::kCall; }
  bool is_global() const { return valid() && kind() == ValueKind::kGlobal; }

  std::optional<bool> as_bool() const;
  // Ints (and bools); nullopt for ints outside int64 and for other kinds.
  std::optional<int64_t> as_int() const;
  std::optional<double> as_float() const;  // floats and ints
  std::optional<std::string_view> as_str() const;
  std::optional<std::string_view> as_bytes() const;
  bool is_big_int() const;
  // The little-endian two's-complement bytes of a big int, when the pickle gave them
  // cheaply (LONG1/LONG4, short literals).
  std::optional<std::string_view> big_int_bytes() const;

  // Tuples and lists (and sets): their items.
  bool is_sequence() const;
  std::span<const ValueId> items() const;
  size_t size() const { return items().size(); }
  ValueRef operator[](size_t i) const;

  // Dicts, and objects a pickle filled with SETITEM(S) after calling a dict-like class
  // (`collections.OrderedDict()`): a mapping. Items alternate key, value in insertion
  // order; a key set twice appears twice (lookups take the last, like Python).
  bool is_mapping() const;
  std::span<const ValueId> mapping_items() const;
  size_t mapping_size() const { return mapping_items().size() / 2; }
  ValueRef get(std::string_view key) const;
  ValueRef get(int64_t key) const;

  const GlobalName* global() const;  // kGlobal
  const CallRecord* call() const;    // kCall
  // The global a call calls, when its callee is a plain global.
  const GlobalName* callee() const;
  ValueRef call_args() const;
  ValueRef call_state() const;
  ValueRef persistent_id() const;  // kPersistentRef: the pid value

  // A short description for summaries: `int 3`, `str 'abc'`, `dict (4 items)`.
  std::string describe(size_t max_text = 40) const;

 private:
  const ValueGraph* graph_ = nullptr;
  ValueId id_ = kNoValue;
};

class ValueGraph {
 public:
  // `base` holds the pickle bytes; strings stored verbatim are views into it, so it must
  // outlive the graph.
  explicit ValueGraph(std::string_view base = {});

  struct Node {
    ValueKind kind;
    uint8_t flags;
    uint16_t reserved;
    uint32_t a;
    uint64_t b;
  };
  static constexpr uint8_t kFlagBigInt = 1;    // int outside int64 (b holds a clamp)
  static constexpr uint8_t kFlagPooled = 2;    // string/bytes in the graph's own pool
  static constexpr uint8_t kFlagDictLike = 4;  // a call whose callee behaves like a dict
  static constexpr uint8_t kFlagOrdered = 8;   // ... an OrderedDict

  // Constants shared by every pickle: None, False, True, ().
  static constexpr ValueId kNoneId = 0, kFalseId = 1, kTrueId = 2, kEmptyTupleId = 3;
  // Ints -1..255 are shared nodes, as in CPython: sizes, strides and offsets of tensors
  // are mostly small, and a checkpoint has millions of them.
  static constexpr ValueId kSmallIntBase = 4;
  static constexpr int64_t kSmallIntMin = -1, kSmallIntMax = 255;

  ValueId add_int(int64_t v, bool big = false);
  // An int outside int64, with its minimal little-endian two's-complement bytes.
  ValueId add_big_int(std::string le_bytes);
  ValueId add_float(double v);
  ValueId add_string_view(std::string_view in_base, ValueKind kind = ValueKind::kString);
  ValueId add_string_owned(std::string text, ValueKind kind = ValueKind::kString);
  ValueId add_tuple(std::span<const ValueId> items);
  ValueId add_container(ValueKind kind);  // list, dict, set (empty)
  ValueId add_container_with(ValueKind kind, std::span<const ValueId> items);
  ValueId add_global(std::string module, std::string name);
  ValueId add_call(const CallRecord& call);
  ValueId add_persistent_ref(ValueId pid);
  ValueId add_simple(ValueKind kind);  // extension, buffer

  // Appends to a list/set/dict, or to the item slot of a (dict-like) call.
  void append_items(ValueId target, std::span<const ValueId> items);
  void set_call_state(ValueId call, ValueId state);
  void mark_call(ValueId call, uint8_t flags);

  const Node& node(ValueId id) const { return nodes_[id]; }
  size_t size() const { return nodes_.size(); }
  std::string_view text(ValueId id) const;
  std::span<const ValueId> items_of(ValueId id) const;
  const GlobalName& global_name(uint32_t index) const { return globals_[index]; }
  size_t global_count() const { return globals_.size(); }
  const CallRecord& call_record(uint32_t index) const { return calls_[index]; }
  std::vector<CallRecord>& calls() { return calls_; }
  CallRecord& call_record(uint32_t index) { return calls_[index]; }
  const std::vector<CallRecord>& calls() const { return calls_; }
  // The value id of call number `index` (calls are numbered in pickle order).
  ValueId call_value(uint32_t index) const { return call_values_[index]; }

  // Reserves room for a pickle of `bytes` bytes (untouched reservations cost no memory).
  void reserve_for(uint64_t bytes);
  // Approximate heap bytes, for the memory limit.
  uint64_t memory_bytes() const;

 private:
  uint32_t new_slot();
  std::string_view base_;
  std::vector<Node> nodes_;
  std::vector<ValueId> tuple_pool_;
  std::vector<std::vector<ValueId>> slots_;  // lists, dicts, sets, call items; slot 0 unused
  std::vector<std::string> strings_;         // decoded (not verbatim) strings
  std::vector<GlobalName> globals_;
  std::unordered_map<std::string, uint32_t> global_index_;
  std::vector<CallRecord> calls_;
  std::vector<ValueId> call_values_;
  uint64_t slot_items_ = 0;
};

}  // namespace torchlint::ckpt
