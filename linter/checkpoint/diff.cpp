#include "diff.h"

#include <cstdio>
#include <map>
#include <sstream>
#include <unordered_map>

#include "summary.h"
#include "value_scan.h"

namespace torchlint::ckpt {

namespace {

struct Leaf {
  int64_t tensor = -1;      // index into the file's tensors
  std::string description;  // for non-tensors
};

using Leaves = std::map<std::string, Leaf>;

constexpr size_t kMaxLeaves = 2'000'000;

Leaves flatten(const CheckpointFile& f) {
  Leaves out;
  ValueRef root = f.root();
  if (!root) {
    for (size_t i = 0; i < f.tensors.size(); ++i) out[f.tensors[i].name] = {static_cast<int64_t>(i), ""};
    return out;
  }
  const ValueGraph& g = *root.graph();
  std::vector<bool> seen(g.size(), false);
  struct Item {
    ValueId id;
    std::string path;
    int depth;
  };
  std::vector<Item> work{{root.id(), "", 0}};
  auto join = [](const std::string& a, const std::string& b) { return a.empty() ? b : a + "." + b; };
  while (!work.empty() && out.size() < kMaxLeaves) {
    Item item = std::move(work.back());
    work.pop_back();
    ValueRef v(&g, item.id);
    if (const TensorInfo* t = f.tensor(v)) {
      out[item.path.empty() ? "(root)" : item.path] = {t - f.tensors.data(), ""};
      continue;
    }
    bool container =
        v.is_mapping() || ((v.kind() == ValueKind::kList || v.kind() == ValueKind::kTuple) && v.size() <= 4096);
    if (!container || item.depth > 16 || seen[item.id]) {
      out[item.path.empty() ? "(root)" : item.path] = {-1, v.describe(60)};
      continue;
    }
    seen[item.id] = true;
    if (v.is_mapping()) {
      auto items = v.mapping_items();
      if (items.empty()) out[item.path.empty() ? "(root)" : item.path] = {-1, v.describe()};
      for (size_t i = 0; i + 1 < items.size(); i += 2) {
        ValueRef key(&g, items[i]);
        std::string k = key.as_str()   ? std::string(*key.as_str())
                        : key.as_int() ? std::to_string(*key.as_int())
                                       : key.describe();
        work.push_back({items[i + 1], join(item.path, k), item.depth + 1});
      }
    } else {
      if (v.size() == 0) out[item.path.empty() ? "(root)" : item.path] = {-1, v.describe()};
      for (size_t i = 0; i < v.size(); ++i)
        work.push_back({v.items()[i], join(item.path, std::to_string(i)), item.depth + 1});
    }
  }
  return out;
}

// Drops `module.` and `_orig_mod.` path components (DataParallel/DDP/compile wrappers).
std::string unwrap(const std::string& path) {
  std::string out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    if (dot == std::string::npos) dot = path.size();
    std::string part = path.substr(start, dot - start);
    if (part != "module" && part != "_orig_mod") out += (out.empty() ? "" : ".") + part;
    start = dot + 1;
  }
  return out;
}

std::string tensor_text(const TensorInfo& t) {
  return std::string(dtype_info(t.dtype).name) + " " + shape_string(t.shape);
}

}  // namespace

CheckpointDiff diff_checkpoints(const CheckpointFile& a, const CheckpointFile& b, bool compare_values) {
  CheckpointDiff d;
  Leaves la = flatten(a), lb = flatten(b);
  size_t common = 0, common_unwrapped = 0;
  for (const auto& [k, v] : la) common += lb.contains(k);
  Leaves ua, ub;
  for (const auto& [k, v] : la) ua[unwrap(k)] = v;
  for (const auto& [k, v] : lb) ub[unwrap(k)] = v;
  for (const auto& [k, v] : ua) common_unwrapped += ub.contains(k);
  if (common_unwrapped > common) {
    la = std::move(ua);
    lb = std::move(ub);
    d.note = "keys compared without their `module.` / `_orig_mod.` wrapper prefixes";
  }
  for (const auto& [k, va] : la) {
    auto it = lb.find(k);
    std::string before = va.tensor >= 0 ? tensor_text(a.tensors[va.tensor]) : va.description;
    if (it == lb.end()) {
      d.entries.push_back({DiffEntry::Kind::kRemoved, k, before, ""});
      continue;
    }
    const Leaf& vb = it->second;
    std::string after = vb.tensor >= 0 ? tensor_text(b.tensors[vb.tensor]) : vb.description;
    if (before != after) {
      d.entries.push_back({DiffEntry::Kind::kChanged, k, before, after});
      continue;
    }
    if (compare_values && va.tensor >= 0 && vb.tensor >= 0) {
      auto diff = ckpt::compare_values(a, a.tensors[va.tensor], b, b.tensors[vb.tensor]);
      if (diff) {
        ++d.compared_values;
        if (diff->differing > 0) {
          std::string what = std::to_string(diff->differing) + " of " + std::to_string(a.tensors[va.tensor].numel) +
                             " elements differ";
          if (diff->differing > diff->nan_mismatch) {
            char buf[64];
            std::snprintf(buf, sizeof buf, ", max |a - b| = %.6g", diff->max_abs);
            what += buf;
          }
          if (diff->nan_mismatch) what += ", " + std::to_string(diff->nan_mismatch) + " NaN on one side only";
          d.entries.push_back({DiffEntry::Kind::kChanged, k, before, before + ", " + what});
          continue;
        }
      }
    }
    ++d.same;
  }
  for (const auto& [k, vb] : lb) {
    if (la.contains(k)) continue;
    d.entries.push_back(
        {DiffEntry::Kind::kAdded, k, "", vb.tensor >= 0 ? tensor_text(b.tensors[vb.tensor]) : vb.description});
  }
  return d;
}

std::string render_diff(const CheckpointDiff& diff, const std::string& a_name, const std::string& b_name, bool color) {
  auto paint = [&](const char* code, const std::string& s) {
    return color ? std::string("\x1b[") + code + "m" + s + "\x1b[0m" : s;
  };
  std::ostringstream out;
  out << paint("1", "--- " + a_name) << '\n' << paint("1", "+++ " + b_name) << '\n';
  size_t added = 0, removed = 0, changed = 0;
  for (const auto& e : diff.entries) {
    switch (e.kind) {
      case DiffEntry::Kind::kAdded:
        ++added;
        out << paint("32", "+ " + e.path + "  " + e.after) << '\n';
        break;
      case DiffEntry::Kind::kRemoved:
        ++removed;
        out << paint("31", "- " + e.path + "  " + e.before) << '\n';
        break;
      case DiffEntry::Kind::kChanged:
        ++changed;
        out << paint("33", "~ " + e.path + "  " + e.before + " -> " + e.after) << '\n';
        break;
    }
  }
  if (!diff.note.empty()) out << "note: " << diff.note << '\n';
  out << added << " added, " << removed << " removed, " << changed << " changed, " << diff.same << " unchanged";
  if (diff.compared_values) out << " (" << diff.compared_values << " tensors compared by value)";
  out << '\n';
  return out.str();
}

}  // namespace torchlint::ckpt
