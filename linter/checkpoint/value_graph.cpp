#include "value_graph.h"

#include <bit>
#include <cmath>
#include <cstdio>

namespace torchlint::ckpt {

std::string_view value_kind_name(ValueKind k) {
  switch (k) {
    case ValueKind::kNone:
      return "None";
    case ValueKind::kBool:
      return "bool";
    case ValueKind::kInt:
      return "int";
    case ValueKind::kFloat:
      return "float";
    case ValueKind::kString:
      return "str";
    case ValueKind::kBytes:
      return "bytes";
    case ValueKind::kTuple:
      return "tuple";
    case ValueKind::kList:
      return "list";
    case ValueKind::kDict:
      return "dict";
    case ValueKind::kSet:
      return "set";
    case ValueKind::kFrozenSet:
      return "frozenset";
    case ValueKind::kGlobal:
      return "global";
    case ValueKind::kCall:
      return "object";
    case ValueKind::kPersistentRef:
      return "persistent reference";
    case ValueKind::kExtension:
      return "extension object";
    case ValueKind::kBuffer:
      return "out-of-band buffer";
  }
  return "value";
}

std::string_view call_kind_opcode(CallKind k) {
  switch (k) {
    case CallKind::kReduce:
      return "REDUCE";
    case CallKind::kNewObj:
      return "NEWOBJ";
    case CallKind::kNewObjEx:
      return "NEWOBJ_EX";
    case CallKind::kObj:
      return "OBJ";
    case CallKind::kInst:
      return "INST";
  }
  return "REDUCE";
}

ValueGraph::ValueGraph(std::string_view base) : base_(base) {
  nodes_.reserve(64);
  nodes_.push_back({ValueKind::kNone, 0, 0, 0, 0});
  nodes_.push_back({ValueKind::kBool, 0, 0, 0, 0});
  nodes_.push_back({ValueKind::kBool, 0, 0, 0, 1});
  nodes_.push_back({ValueKind::kTuple, 0, 0, 0, 0});
  for (int64_t v = kSmallIntMin; v <= kSmallIntMax; ++v)
    nodes_.push_back({ValueKind::kInt, 0, 0, 0, static_cast<uint64_t>(v)});
  slots_.emplace_back();  // slot 0: "no items yet"
}

ValueId ValueGraph::add_int(int64_t v, bool big) {
  if (!big && v >= kSmallIntMin && v <= kSmallIntMax) return kSmallIntBase + static_cast<ValueId>(v - kSmallIntMin);
  nodes_.push_back({ValueKind::kInt, static_cast<uint8_t>(big ? kFlagBigInt : 0), 0, 0, static_cast<uint64_t>(v)});
  return static_cast<ValueId>(nodes_.size() - 1);
}

ValueId ValueGraph::add_big_int(std::string le_bytes) {
  strings_.push_back(std::move(le_bytes));
  nodes_.push_back({ValueKind::kInt, static_cast<uint8_t>(kFlagBigInt | kFlagPooled), 0, 0, strings_.size() - 1});
  return static_cast<ValueId>(nodes_.size() - 1);
}

ValueId ValueGraph::add_float(double v) {
  nodes_.push_back({ValueKind::kFloat, 0, 0, 0, std::bit_cast<uint64_t>(v)});
  return static_cast<ValueId>(nodes_.size() - 1);
}

ValueId ValueGraph::add_string_view(std::string_view in_base, ValueKind kind) {
  uint64_t offset = static_cast<uint64_t>(in_base.data() - base_.data());
  uint32_t length = in_base.size() > 0xffffffffu ? 0xffffffffu : static_cast<uint32_t>(in_base.size());
  nodes_.push_back({kind, 0, 0, length, offset});
  return static_cast<ValueId>(nodes_.size() - 1);
}

ValueId ValueGraph::add_string_owned(std::string text, ValueKind kind) {
  strings_.push_back(std::move(text));
  nodes_.push_back({kind, kFlagPooled, 0, 0, strings_.size() - 1});
  return static_cast<ValueId>(nodes_.size() - 1);
}

ValueId ValueGraph::add_tuple(std::span<const ValueId> items) {
  if (items.empty()) return kEmptyTupleId;
  uint64_t offset = tuple_pool_.size();
  tuple_pool_.insert(tuple_pool_.end(), items.begin(), items.end());
  nodes_.push_back({ValueKind::kTuple, 0, 0, static_cast<uint32_t>(items.size()), offset});
  return static_cast<ValueId>(nodes_.size() - 1);
}

uint32_t ValueGraph::new_slot() {
  slots_.emplace_back();
  return static_cast<uint32_t>(slots_.size() - 1);
}

ValueId ValueGraph::add_container(ValueKind kind) {
  // Slots are allocated on the first item: empty containers cost one node.
  nodes_.push_back({kind, 0, 0, 0, 0});
  return static_cast<ValueId>(nodes_.size() - 1);
}

ValueId ValueGraph::add_container_with(ValueKind kind, std::span<const ValueId> items) {
  ValueId id = add_container(kind);
  append_items(id, items);
  return id;
}

ValueId ValueGraph::add_global(std::string module, std::string name) {
  std::string key = module + '\n' + name;
  auto [it, inserted] = global_index_.try_emplace(std::move(key), static_cast<uint32_t>(globals_.size()));
  if (inserted) globals_.push_back({std::move(module), std::move(name)});
  nodes_.push_back({ValueKind::kGlobal, 0, 0, it->second, 0});
  return static_cast<ValueId>(nodes_.size() - 1);
}

ValueId ValueGraph::add_call(const CallRecord& call) {
  calls_.push_back(call);
  nodes_.push_back({ValueKind::kCall, 0, 0, static_cast<uint32_t>(calls_.size() - 1), 0});
  call_values_.push_back(static_cast<ValueId>(nodes_.size() - 1));
  return static_cast<ValueId>(nodes_.size() - 1);
}

ValueId ValueGraph::add_persistent_ref(ValueId pid) {
  nodes_.push_back({ValueKind::kPersistentRef, 0, 0, pid, 0});
  return static_cast<ValueId>(nodes_.size() - 1);
}

ValueId ValueGraph::add_simple(ValueKind kind) {
  nodes_.push_back({kind, 0, 0, 0, 0});
  return static_cast<ValueId>(nodes_.size() - 1);
}

void ValueGraph::append_items(ValueId target, std::span<const ValueId> items) {
  if (items.empty()) return;
  Node& n = nodes_[target];
  if (n.kind != ValueKind::kCall && n.kind != ValueKind::kList && n.kind != ValueKind::kDict &&
      n.kind != ValueKind::kSet && n.kind != ValueKind::kFrozenSet) {
    return;  // only containers and objects have an item slot
  }
  uint32_t* slot = nullptr;
  if (n.kind == ValueKind::kCall) {
    slot = &calls_[n.a].items;
  } else {
    slot = &n.a;
  }
  if (*slot == 0) *slot = new_slot();
  auto& v = slots_[*slot];
  v.insert(v.end(), items.begin(), items.end());
  slot_items_ += items.size();
}

void ValueGraph::set_call_state(ValueId call, ValueId state) { calls_[nodes_[call].a].state = state; }

void ValueGraph::mark_call(ValueId call, uint8_t flags) { nodes_[call].flags |= flags; }

std::string_view ValueGraph::text(ValueId id) const {
  const Node& n = nodes_[id];
  if (n.flags & kFlagPooled) return strings_[n.b];
  return base_.substr(n.b, n.a);
}

std::span<const ValueId> ValueGraph::items_of(ValueId id) const {
  const Node& n = nodes_[id];
  switch (n.kind) {
    case ValueKind::kTuple:
      return n.a == 0 ? std::span<const ValueId>() : std::span<const ValueId>(tuple_pool_.data() + n.b, n.a);
    case ValueKind::kList:
    case ValueKind::kDict:
    case ValueKind::kSet:
    case ValueKind::kFrozenSet:
      return n.a == 0 ? std::span<const ValueId>() : std::span<const ValueId>(slots_[n.a]);
    case ValueKind::kCall: {
      uint32_t slot = calls_[n.a].items;
      return slot == 0 ? std::span<const ValueId>() : std::span<const ValueId>(slots_[slot]);
    }
    default:
      return {};
  }
}

void ValueGraph::reserve_for(uint64_t bytes) {
  // torch.save pickles make about one node per 3 bytes, one tuple item per 6, one call
  // per 40; growing by doubling would copy the arrays a dozen times instead.
  bytes = std::min<uint64_t>(bytes, 1ull << 32);
  nodes_.reserve(bytes / 3 + 64);
  tuple_pool_.reserve(bytes / 6 + 64);
  calls_.reserve(bytes / 40 + 16);
  call_values_.reserve(bytes / 40 + 16);
}

uint64_t ValueGraph::memory_bytes() const {
  return nodes_.size() * sizeof(Node) + tuple_pool_.size() * sizeof(ValueId) + slots_.size() * 40 +
         slot_items_ * sizeof(ValueId) + calls_.size() * (sizeof(CallRecord) + sizeof(ValueId)) + globals_.size() * 96;
}

// --- ValueRef -------------------------------------------------------------------------

ValueKind ValueRef::kind() const { return graph_->node(id_).kind; }

std::optional<bool> ValueRef::as_bool() const {
  if (!valid()) return std::nullopt;
  const auto& n = graph_->node(id_);
  if (n.kind == ValueKind::kBool) return n.b != 0;
  return std::nullopt;
}

std::optional<int64_t> ValueRef::as_int() const {
  if (!valid()) return std::nullopt;
  const auto& n = graph_->node(id_);
  if (n.kind == ValueKind::kBool) return static_cast<int64_t>(n.b);
  if (n.kind == ValueKind::kInt && !(n.flags & ValueGraph::kFlagBigInt)) return static_cast<int64_t>(n.b);
  return std::nullopt;
}

bool ValueRef::is_big_int() const {
  return valid() && kind() == ValueKind::kInt && (graph_->node(id_).flags & ValueGraph::kFlagBigInt);
}

std::optional<std::string_view> ValueRef::big_int_bytes() const {
  if (!is_big_int() || !(graph_->node(id_).flags & ValueGraph::kFlagPooled)) return std::nullopt;
  return graph_->text(id_);
}

std::optional<double> ValueRef::as_float() const {
  if (!valid()) return std::nullopt;
  const auto& n = graph_->node(id_);
  if (n.kind == ValueKind::kFloat) return std::bit_cast<double>(n.b);
  if (auto i = as_int()) return static_cast<double>(*i);
  return std::nullopt;
}

std::optional<std::string_view> ValueRef::as_str() const {
  if (!valid() || kind() != ValueKind::kString) return std::nullopt;
  return graph_->text(id_);
}

std::optional<std::string_view> ValueRef::as_bytes() const {
  if (!valid() || kind() != ValueKind::kBytes) return std::nullopt;
  return graph_->text(id_);
}

bool ValueRef::is_sequence() const {
  if (!valid()) return false;
  auto k = kind();
  return k == ValueKind::kTuple || k == ValueKind::kList || k == ValueKind::kSet || k == ValueKind::kFrozenSet;
}

std::span<const ValueId> ValueRef::items() const {
  if (!is_sequence()) return {};
  return graph_->items_of(id_);
}

ValueRef ValueRef::operator[](size_t i) const {
  auto it = items();
  if (i >= it.size()) return {};
  return {graph_, it[i]};
}

bool ValueRef::is_mapping() const {
  if (!valid()) return false;
  const auto& n = graph_->node(id_);
  return n.kind == ValueKind::kDict || (n.kind == ValueKind::kCall && (n.flags & ValueGraph::kFlagDictLike));
}

std::span<const ValueId> ValueRef::mapping_items() const {
  if (!is_mapping()) return {};
  auto items = graph_->items_of(id_);
  return items.first(items.size() & ~size_t{1});
}

ValueRef ValueRef::get(std::string_view key) const {
  auto items = mapping_items();
  for (size_t i = items.size(); i >= 2; i -= 2) {
    ValueRef k{graph_, items[i - 2]};
    if (auto s = k.as_str(); s && *s == key) return {graph_, items[i - 1]};
  }
  return {};
}

ValueRef ValueRef::get(int64_t key) const {
  auto items = mapping_items();
  for (size_t i = items.size(); i >= 2; i -= 2) {
    ValueRef k{graph_, items[i - 2]};
    if (auto v = k.as_int(); v && *v == key) return {graph_, items[i - 1]};  // True == 1, as in Python
  }
  return {};
}

const GlobalName* ValueRef::global() const {
  if (!valid() || kind() != ValueKind::kGlobal) return nullptr;
  return &graph_->global_name(graph_->node(id_).a);
}

const CallRecord* ValueRef::call() const {
  if (!valid() || kind() != ValueKind::kCall) return nullptr;
  return &graph_->call_record(graph_->node(id_).a);
}

const GlobalName* ValueRef::callee() const {
  const CallRecord* c = call();
  if (!c) return nullptr;
  return ValueRef(graph_, c->callee).global();
}

ValueRef ValueRef::call_args() const {
  const CallRecord* c = call();
  return c ? ValueRef(graph_, c->args) : ValueRef();
}

ValueRef ValueRef::call_state() const {
  const CallRecord* c = call();
  return c ? ValueRef(graph_, c->state) : ValueRef();
}

ValueRef ValueRef::persistent_id() const {
  if (!valid() || kind() != ValueKind::kPersistentRef) return {};
  return {graph_, graph_->node(id_).a};
}

namespace {
std::string quoted(std::string_view s, size_t max) {
  std::string out = "'";
  size_t n = 0;
  for (char c : s) {
    if (n++ == max) {
      out += "...";
      break;
    }
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "'";
}
}  // namespace

std::string ValueRef::describe(size_t max_text) const {
  if (!valid()) return "missing";
  switch (kind()) {
    case ValueKind::kNone:
      return "None";
    case ValueKind::kBool:
      return *as_bool() ? "True" : "False";
    case ValueKind::kInt:
      if (is_big_int()) return "int (huge)";
      return "int " + std::to_string(*as_int());
    case ValueKind::kFloat: {
      char buf[40];
      std::snprintf(buf, sizeof buf, "float %.6g", *as_float());
      return buf;
    }
    case ValueKind::kString:
      return "str " + quoted(*as_str(), max_text);
    case ValueKind::kBytes:
      return "bytes (" + std::to_string(as_bytes()->size()) + ")";
    case ValueKind::kTuple:
    case ValueKind::kList:
    case ValueKind::kSet:
    case ValueKind::kFrozenSet:
      return std::string(value_kind_name(kind())) + " (" + std::to_string(size()) +
             (size() == 1 ? " item)" : " items)");
    case ValueKind::kDict:
      return "dict (" + std::to_string(mapping_size()) + (mapping_size() == 1 ? " key)" : " keys)");
    case ValueKind::kGlobal:
      return "global " + global()->qualified();
    case ValueKind::kCall: {
      const GlobalName* g = callee();
      std::string name = g ? g->qualified() : std::string("(computed callable)");
      if (is_mapping())
        return name + " (" + std::to_string(mapping_size()) + (mapping_size() == 1 ? " key)" : " keys)");
      return name + " object";
    }
    case ValueKind::kPersistentRef:
      return "persistent reference";
    case ValueKind::kExtension:
      return "extension object";
    case ValueKind::kBuffer:
      return "out-of-band buffer";
  }
  return "value";
}

}  // namespace torchlint::ckpt
