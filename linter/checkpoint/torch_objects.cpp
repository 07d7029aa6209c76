#include "torch_objects.h"

#include <unordered_map>

namespace torchlint::ckpt {

bool TensorInfo::contiguous() const {
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && stride[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

bool tensor_extent(std::span<const int64_t> shape, std::span<const int64_t> stride, int64_t offset, uint64_t& numel,
                   uint64_t& elements_needed, std::string& why) {
  if (offset < 0) {
    why = "negative storage offset " + std::to_string(offset);
    return false;
  }
  numel = 1;
  uint64_t span = 0;
  bool empty = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0 || stride[i] < 0) {
      why = "negative size or stride in dimension " + std::to_string(i);
      return false;
    }
    if (shape[i] == 0) empty = true;
    auto n = checked_mul(numel, static_cast<uint64_t>(shape[i]));
    if (!n) {
      why = "element count overflows";
      return false;
    }
    numel = *n;
    if (shape[i] > 0) {
      auto step = checked_mul(static_cast<uint64_t>(shape[i] - 1), static_cast<uint64_t>(stride[i]));
      auto s = step ? checked_add(span, *step) : std::nullopt;
      if (!s) {
        why = "strides overflow";
        return false;
      }
      span = *s;
    }
  }
  if (empty) {
    numel = 0;
    elements_needed = 0;
    return true;
  }
  auto need = checked_add(static_cast<uint64_t>(offset), span);
  if (!need || *need == UINT64_MAX) {
    why = "storage offset and strides overflow";
    return false;
  }
  elements_needed = *need + 1;
  return true;
}

namespace {

std::optional<Dims> int_tuple(ValueRef v) {
  if (!v.is_sequence()) {
    // torch.Size(...) objects reach here as calls of torch.Size with a tuple argument.
    if (const GlobalName* g = v.callee(); g && g->module == "torch" && g->name == "Size")
      return int_tuple(v.call_args()[0]);
    return std::nullopt;
  }
  Dims out;
  for (size_t i = 0; i < v.size(); ++i) {
    auto x = v[i].as_int();
    if (!x) return std::nullopt;
    out.push_back(*x);
  }
  return out;
}

}  // namespace

std::optional<uint64_t> canonical_number(std::string_view s) {
  if (s.empty() || s.size() > 18 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  uint64_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

namespace {

std::optional<std::string_view> str_or_ascii_bytes(ValueRef v) {
  if (auto s = v.as_str()) return s;
  return v.as_bytes();
}

class Decoder {
 public:
  Decoder(CheckpointFile& file, PickleScan& scan, PersistentIdStyle style, const StorageLocator& locate,
          bool big_endian, IssueSink& sink)
      : file_(file), graph_(*scan.run.graph), style_(style), locate_(locate), big_endian_(big_endian), sink_(sink) {}

  void run() {
    const auto& calls = graph_.calls();
    size_t rebuilds = 0;  // reserve for the tensors there are, not for every call
    for (const auto& c : calls) {
      const GlobalName* g = ValueRef(&graph_, c.callee).global();
      rebuilds += g && g->module == "torch._utils";
    }
    // (storage_index_ only holds keys that are not decimal numbers: torch.save numbers them)
    file_.storages.reserve(rebuilds);
    file_.tensors.reserve(rebuilds);
    for (uint32_t i = 0; i < calls.size(); ++i) {
      ValueRef callee(&graph_, calls[i].callee);
      const GlobalName* g = callee.global();
      if (!g) continue;
      ValueRef args(&graph_, calls[i].args);
      ValueId self = graph_.call_value(i);
      if (g->module == "torch._utils") {
        decode_call(g->name, args, self);
      } else if (g->module == "torch._tensor" && g->name == "_rebuild_from_type_v2") {
        // (func, new_type, args, state): the tensor func builds, as an instance of new_type.
        const GlobalName* func = args[0].global();
        if (func && func->module == "torch._utils") decode_call(func->name, args[2], self);
        if (auto t = tensor_of(self)) {
          if (const GlobalName* type = args[1].global(); type && type->name == "Parameter")
            file_.tensors[*t].parameter = true;
        }
      }
    }
  }

 private:
  void decode_call(std::string_view name, ValueRef args, ValueId self) {
    if (name == "_rebuild_tensor_v2" || name == "_rebuild_tensor" || name == "_rebuild_tensor_v3" ||
        name == "_rebuild_qtensor") {
      tensor_with_storage(name, args, self);
    } else if (name == "_rebuild_parameter" || name == "_rebuild_parameter_with_state") {
      auto index = tensor_of(args[0].id());
      if (!index) return;
      set_tensor(self, *index);
      TensorInfo& t = file_.tensors[*index];
      t.parameter = true;
      if (auto rg = args[1].as_bool()) t.requires_grad = *rg;
    } else if (name == "_rebuild_meta_tensor_no_storage") {
      TensorInfo t;
      const GlobalName* d = args[0].global();
      if (d && d->module == "torch") t.dtype = dtype_from_torch_name(d->name).value_or(DType::kUnknown);
      auto shape = int_tuple(args[1]);
      auto stride = int_tuple(args[2]);
      if (!shape || !stride || shape->size() != stride->size()) return;
      t.shape = *shape;
      t.stride = *stride;
      uint64_t need = 0;
      std::string why;
      if (!tensor_extent(t.shape, t.stride, 0, t.numel, need, why)) return;
      add_tensor(std::move(t), self);
    }
  }

  // ('storage', StorageType, key, location, numel[, view_metadata]) -> storage index.
  std::optional<int32_t> storage_of(ValueRef pid_ref, int64_t& view_offset, std::optional<uint64_t>& view_numel) {
    ValueRef pid = pid_ref.persistent_id();
    if (!pid) return std::nullopt;
    size_t want = style_ == PersistentIdStyle::kZip ? 5 : 6;
    auto tag = str_or_ascii_bytes(pid[0]);
    if (pid.kind() != ValueKind::kTuple || pid.size() != want || !tag || *tag != "storage") {
      sink_.malformed(
          "pid", "persistent id " + pid.describe() + " is not a torch storage reference: torch.load fails on it", true);
      return std::nullopt;
    }
    const GlobalName* type = pid[1].global();
    auto key = str_or_ascii_bytes(pid[2]);
    auto location = str_or_ascii_bytes(pid[3]);
    auto numel = pid[4].as_int();
    std::optional<DType> dtype;
    if (type && (type->module == "torch" || type->module == "torch.cuda" || type->module == "torch.storage")) {
      dtype = dtype_from_storage_class(type->name);
    }
    if (!dtype || !key || !location || !numel || *numel < 0) {
      sink_.malformed("pid", "storage reference " + pid.describe() + " has an unknown storage type or bad fields",
                      true);
      return std::nullopt;
    }
    if (style_ == PersistentIdStyle::kLegacy && !pid[5].is_none()) {
      ValueRef view = pid[5];
      auto off = view[1].as_int();
      auto size = view[2].as_int();
      if (view.size() != 3 || !off || !size || *off < 0 || *size < 0) {
        sink_.malformed("pid", "storage view metadata " + view.describe() + " is malformed", true);
        return std::nullopt;
      }
      view_offset = *off;
      view_numel = static_cast<uint64_t>(*size);
    }
    int32_t* slot = slot_for(*key);
    if (*slot >= 0) {
      StorageInfo& s = file_.storages[*slot];
      if (s.dtype != *dtype || s.numel != static_cast<uint64_t>(*numel) || s.location != *location) {
        sink_.ambiguous("storage-redeclared", "storage '" + std::string(*key) +
                                                  "' is declared twice with different type, size or location: "
                                                  "torch keeps the first, another reader may not");
      }
      return *slot;
    }
    StorageInfo s;
    s.key = std::string(*key);
    s.dtype = *dtype;
    s.location = std::string(*location);
    s.numel = static_cast<uint64_t>(*numel);
    s.big_endian = big_endian_;
    auto bytes = checked_mul(s.numel, dtype_bytes(s.dtype));
    StorageBytes where = locate_(*key, bytes.value_or(UINT64_MAX));
    s.found = where.found;
    s.available_bytes = where.available;
    s.data_offset = where.data_offset;
    s.compressed_bytes = where.compressed;
    // A storage torch cannot find, or one smaller than it declares, fails torch.load.
    std::string record = where.record.empty() ? std::string() : "`" + where.record + "`";
    if (!s.found) {
      sink_.malformed("missing-storage",
                      "storage '" + s.key + "' is referenced but " +
                          (record.empty() ? std::string("its bytes are missing") : "record " + record + " is missing") +
                          ": torch.load fails",
                      true);
    } else if (bytes && s.available_bytes < *bytes) {
      sink_.malformed("short-storage",
                      "storage '" + s.key + "' declares " + std::to_string(*bytes) + " bytes but " +
                          (record.empty() ? std::string("the file") : record) + " holds " +
                          std::to_string(s.available_bytes) +
                          " (newer torch refuses it; older versions read out of bounds)",
                      true);
    }
    if (!bytes) {
      sink_.malformed(
          "storage-size",
          "storage '" + s.key + "' declares " + std::to_string(s.numel) + " elements: the byte size overflows", true);
    }
    *slot = static_cast<int32_t>(file_.storages.size());
    file_.storages.push_back(std::move(s));
    return static_cast<int32_t>(file_.storages.size() - 1);
  }

  void tensor_with_storage(std::string_view name, ValueRef args, ValueId self) {
    int64_t view_offset = 0;
    std::optional<uint64_t> view_numel;
    auto storage = storage_of(args[0], view_offset, view_numel);
    if (!storage) {
      if (!args[0].persistent_id()) {
        sink_.malformed("tensor-args", std::string(name) + " is called without a storage: torch.load fails on it",
                        true);
      }
      return;
    }
    auto offset = args[1].as_int();
    auto shape = int_tuple(args[2]);
    auto stride = int_tuple(args[3]);
    TensorInfo t;
    t.storage = *storage;
    const StorageInfo& s = file_.storages[*storage];
    t.dtype = s.dtype;
    if (name == "_rebuild_tensor_v3") {
      const GlobalName* d = args[6].global();
      auto dt = d && d->module == "torch" ? dtype_from_torch_name(d->name) : std::nullopt;
      if (!dt) {
        sink_.malformed("tensor-args", "_rebuild_tensor_v3 without a torch dtype", true);
        return;
      }
      t.dtype = *dt;
    }
    t.quantized = name == "_rebuild_qtensor";
    if (!offset || !shape || !stride || shape->size() != stride->size() || shape->size() > 1024) {
      sink_.malformed("tensor-args", std::string(name) + " has malformed offset, size or stride arguments", true);
      return;
    }
    t.shape = std::move(*shape);
    t.stride = std::move(*stride);
    t.storage_offset = *offset;
    if (name == "_rebuild_tensor_v2" || name == "_rebuild_tensor_v3") {
      if (auto rg = args[4].as_bool()) t.requires_grad = *rg;
    }
    uint64_t needed = 0;
    std::string why;
    if (!tensor_extent(t.shape, t.stride, t.storage_offset, t.numel, needed, why)) {
      t.bounds_ok = false;
      sink_.malformed("bounds", "tensor with shape " + shape_text(t.shape) + " in storage '" + s.key + "': " + why);
    } else {
      // Everything in bytes: a v3 tensor views an untyped (byte) storage.
      auto need_bytes = checked_mul(needed + static_cast<uint64_t>(view_offset), dtype_bytes(t.dtype));
      uint64_t have =
          view_numel ? *view_numel * dtype_bytes(s.dtype) + static_cast<uint64_t>(view_offset) * dtype_bytes(s.dtype)
                     : s.numel * dtype_bytes(s.dtype);
      if (t.numel > 0 && (!need_bytes || *need_bytes > have)) {
        t.bounds_ok = false;
        sink_.malformed("bounds", "tensor with shape " + shape_text(t.shape) + ", stride " + shape_text(t.stride) +
                                      " and offset " + std::to_string(t.storage_offset) +
                                      " reaches past the end of storage '" + s.key + "' (" + std::to_string(s.numel) +
                                      " elements)");
      }
    }
    t.storage_offset += view_offset;
    ++file_.storages[*storage].tensors;
    add_tensor(std::move(t), self);
  }

  void add_tensor(TensorInfo t, ValueId self) {
    set_tensor(self, static_cast<uint32_t>(file_.tensors.size()));
    file_.tensors.push_back(std::move(t));
  }

  // Calls carry their tensor themselves (no map for 200 000 tensors).
  void set_tensor(ValueId v, uint32_t index) {
    const auto& node = graph_.node(v);
    if (node.kind == ValueKind::kCall)
      graph_.call_record(node.a).tensor = index;
    else
      file_.tensor_of_value[v] = index;
  }
  std::optional<uint32_t> tensor_of(ValueId v) const {
    if (v >= graph_.size()) return std::nullopt;
    const auto& node = graph_.node(v);
    if (node.kind == ValueKind::kCall) {
      uint32_t t = graph_.call_record(node.a).tensor;
      return t == 0xffffffffu ? std::nullopt : std::optional<uint32_t>(t);
    }
    auto it = file_.tensor_of_value.find(v);
    return it == file_.tensor_of_value.end() ? std::nullopt : std::optional<uint32_t>(it->second);
  }

  static std::string shape_text(const Dims& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size() && i < 8; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    if (v.size() > 8) s += ", ...";
    return s + "]";
  }

  CheckpointFile& file_;
  ValueGraph& graph_;
  PersistentIdStyle style_;
  const StorageLocator& locate_;
  bool big_endian_;
  IssueSink& sink_;
  // Keys are views into the finished graph (verbatim pickle bytes or its string pool).
  // torch.save numbers its storages "0", "1", ...: those go to a vector.
  std::unordered_map<std::string_view, int32_t> storage_index_;
  std::vector<int32_t> numbered_;

  int32_t* slot_for(std::string_view key) {
    if (auto n = canonical_number(key); n && *n < graph_.size()) {
      if (*n >= numbered_.size()) numbered_.resize(std::max<size_t>(*n + 1, numbered_.size() * 2), -1);
      return &numbered_[*n];
    }
    auto [it, inserted] = storage_index_.try_emplace(key, -1);
    return &it->second;
  }
};

}  // namespace

void decode_torch_objects(CheckpointFile& file, PickleScan& scan, PersistentIdStyle style, const StorageLocator& locate,
                          bool big_endian, IssueSink& sink) {
  Decoder(file, scan, style, locate, big_endian, sink).run();
}

void name_tensors(CheckpointFile& file) {
  const PickleScan* main = file.main();
  if (!main || file.tensors.empty()) return;
  const ValueGraph& graph = *main->run.graph;
  std::vector<bool> seen(graph.size(), false);
  // Depth-first, children in order, so names follow the object's own key order; every
  // value is visited once, so shared or cyclic structure costs nothing extra. A visit
  // keeps its parent and the key that led to it; the dotted name is spelled out only
  // for tensors.
  struct Visit {
    ValueId id;
    int32_t parent;  // index into `visits`, -1 for the root
    ValueId key;     // mapping key, or kNoValue
    int32_t index;   // sequence index, or -1 (no name part: an object's state or args)
    uint32_t depth;
  };
  std::vector<Visit> visits;
  std::vector<size_t> work;
  // Roughly one visit per tensor plus the containers holding them: reserved, so the
  // array does not double (and copy) while the names are being allocated.
  visits.reserve(file.tensors.size() + file.tensors.size() / 2 + 64);
  visits.push_back({main->run.root, -1, kNoValue, -1, 0});
  work.push_back(0);
  auto part_of = [&](const Visit& v) -> std::string {
    if (v.key != kNoValue) {
      ValueRef key(&graph, v.key);
      if (auto str = key.as_str()) return std::string(*str);
      if (auto n = key.as_int()) return std::to_string(*n);
      return "?";
    }
    return v.index >= 0 ? std::to_string(v.index) : std::string();
  };
  auto name_of = [&](size_t i) {
    std::vector<std::string> parts;
    for (int32_t at = static_cast<int32_t>(i); at >= 0; at = visits[at].parent) {
      std::string part = part_of(visits[at]);
      if (!part.empty()) parts.push_back(std::move(part));
    }
    if (parts.empty()) return std::string("(root)");
    size_t length = parts.size() - 1;
    for (const auto& p : parts) length += p.size();
    std::string name;
    name.reserve(length);  // exactly: 200 000 names stay alive with the file
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
      if (!name.empty()) name += '.';
      name += *it;
    }
    return name;
  };
  std::vector<Visit> children;
  while (!work.empty()) {
    size_t at = work.back();
    work.pop_back();
    Visit item = visits[at];
    if (item.id == kNoValue || item.id >= graph.size() || seen[item.id]) continue;
    seen[item.id] = true;
    if (auto index = file.tensor_index(item.id)) {
      TensorInfo& t = file.tensors[*index];
      if (t.name.empty()) t.name = name_of(at);
      continue;
    }
    if (item.depth > 64) continue;
    ValueRef v(&graph, item.id);
    int32_t self = static_cast<int32_t>(at);
    children.clear();
    if (v.is_mapping()) {
      auto items = v.mapping_items();
      for (size_t i = 0; i + 1 < items.size(); i += 2)
        children.push_back({items[i + 1], self, items[i], -1, item.depth + 1});
      if (v.is_call()) children.push_back({v.call()->state, self, kNoValue, -1, item.depth + 1});
    } else if (v.is_sequence()) {
      auto items = v.items();
      for (size_t i = 0; i < items.size(); ++i)
        children.push_back(
            {items[i], self, kNoValue, static_cast<int32_t>(std::min<size_t>(i, INT32_MAX)), item.depth + 1});
    } else if (v.is_call()) {
      // An object: its state (BUILD) holds its attributes; its arguments may hold tensors.
      children.push_back({v.call()->state, self, kNoValue, -1, item.depth + 1});
      children.push_back({v.call()->args, self, kNoValue, -1, item.depth + 1});
    }
    for (auto it = children.rbegin(); it != children.rend(); ++it) {
      if (it->id == kNoValue || it->id >= graph.size() || seen[it->id]) continue;
      // Only values that are or can hold tensors are worth a visit (not ints, strings...).
      switch (graph.node(it->id).kind) {
        case ValueKind::kDict:
        case ValueKind::kList:
        case ValueKind::kTuple:
        case ValueKind::kSet:
        case ValueKind::kFrozenSet:
        case ValueKind::kCall:
        case ValueKind::kPersistentRef:
          break;
        default:
          continue;
      }
      visits.push_back(*it);
      work.push_back(visits.size() - 1);
    }
  }
  for (size_t i = 0; i < file.tensors.size(); ++i) {
    if (file.tensors[i].name.empty()) file.tensors[i].name = "(unreachable tensor " + std::to_string(i) + ")";
  }
}

}  // namespace torchlint::ckpt
