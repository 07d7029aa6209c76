#include "checkpoint_loader.h"

#include <map>
#include <set>
#include <stdexcept>

#include "checkpoint/inflate.h"
#include "checkpoint/inspector.h"
#include "checkpoint/summary.h"
#include "checkpoint/training_state.h"
#include "dtypes.h"

namespace torchlint::probe {

namespace {

std::string list_names(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 5; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 5) out += " and " + std::to_string(names.size() - 5) + " more";
  return out;
}

// The tensor a TensorInfo describes, viewed over (or inflated from) the file's bytes. The
// result does not own its memory: copy out of it while `inflated` and the file are alive.
at::Tensor view_tensor(const ckpt::CheckpointFile& file, const ckpt::TensorInfo& t, std::string& inflated) {
  if (t.storage < 0 || !t.bounds_ok) throw std::runtime_error("`" + t.name + "` has no usable storage");
  const ckpt::StorageInfo& s = file.storages.at(static_cast<size_t>(t.storage));
  if (!s.found) throw std::runtime_error("the bytes of `" + t.name + "` are missing from the file");
  if (s.big_endian) throw std::runtime_error("`" + t.name + "` is stored big-endian");
  auto dtype = scalar_type_named(ckpt::dtype_info(t.dtype).name);
  if (!dtype || t.quantized) {
    throw std::runtime_error("`" + t.name + "` has dtype " + std::string(ckpt::dtype_info(t.dtype).name) +
                             ", which the probe does not load");
  }
  const char* base = nullptr;
  if (s.compressed_bytes == 0) {
    if (!ckpt::range_fits(s.data_offset, s.nbytes(), file.bytes->size()))
      throw std::runtime_error("the storage of `" + t.name + "` runs past the end of the file");
    base = file.bytes->bytes().data() + s.data_offset;
  } else {
    ckpt::Bytes raw = file.bytes->bytes().substr(s.data_offset, s.compressed_bytes);
    inflated.clear();
    if (ckpt::inflate_all(raw, s.nbytes(), inflated) != ckpt::InflateStatus::kOk || inflated.size() < s.nbytes())
      throw std::runtime_error("the compressed storage of `" + t.name + "` does not inflate");
    base = inflated.data();
  }
  const int64_t element = static_cast<int64_t>(ckpt::dtype_bytes(t.dtype));
  // from_blob wants a mutable pointer; the view is only ever read (copied from).
  void* data = const_cast<char*>(base) + t.storage_offset * element;
  return at::from_blob(data, t.shape, t.stride, at::TensorOptions().dtype(*dtype));
}

// The checkpoint's weights that best cover the model's names, and the prefix (`module.`)
// to strip from their keys.
struct Match {
  const ckpt::WeightsInfo* weights = nullptr;
  std::string prefix;
  size_t hits = 0;
};

Match best_match(const std::vector<ckpt::WeightsInfo>& all, const std::map<std::string, at::Tensor>& wanted) {
  Match best;
  for (const auto& w : all) {
    for (const std::string prefix : {"", "module.", "model.", "_orig_mod.", "model.module."}) {
      size_t hits = 0;
      for (const auto& key : w.keys) {
        if (key.starts_with(prefix) && wanted.count(key.substr(prefix.size()))) ++hits;
      }
      if (hits > best.hits) best = {&w, prefix, hits};
    }
  }
  return best;
}

}  // namespace

Json apply_checkpoint(torch::jit::Module& model, const std::string& path) {
  std::string error;
  auto file = ckpt::inspect_file(path, path, ckpt::InspectOptions{}, error);
  if (!file) throw std::runtime_error("cannot read the checkpoint: " + error);
  for (const auto& issue : file->issues) {
    if (issue.fatal) throw std::runtime_error("the checkpoint is damaged: " + issue.message);
  }
  ckpt::Checkpoint checkpoint;
  checkpoint.display = path;
  checkpoint.files = {file.get()};
  checkpoint.roles = {""};
  const ckpt::TrainingState state = ckpt::analyze_training_state(checkpoint);

  std::map<std::string, at::Tensor> wanted;  // the model's parameters and buffers by name
  for (const auto& p : model.named_parameters(true)) wanted.emplace(p.name, p.value);
  for (const auto& b : model.named_buffers(true)) wanted.emplace(b.name, b.value);

  const Match match = best_match(state.weights, wanted);
  if (!match.weights) {
    throw std::runtime_error(state.weights.empty() ? "the checkpoint holds no state dict"
                                                   : "no key of the checkpoint's state dicts names a parameter or "
                                                     "buffer of the model");
  }
  const ckpt::WeightsInfo& w = *match.weights;
  if (!w.pickled_class.empty()) {
    throw std::runtime_error("the checkpoint is a pickled whole model (`" + w.pickled_class +
                             "`), not a state dict: the probe reads only state dicts");
  }

  std::vector<std::string> unexpected, mismatched, missing;
  std::map<std::string, size_t> found;  // model name -> index into w.keys
  std::set<std::string> named;          // model names the checkpoint has, fitting or not
  for (size_t i = 0; i < w.keys.size(); ++i) {
    const std::string& key = w.keys[i];
    std::string name = key.starts_with(match.prefix) ? key.substr(match.prefix.size()) : key;
    auto it = wanted.find(name);
    if (it == wanted.end()) {
      unexpected.push_back(key);
      continue;
    }
    named.insert(name);
    const ckpt::TensorInfo& t = file->tensors[w.tensors[i]];
    if (std::vector<int64_t>(it->second.sizes().begin(), it->second.sizes().end()) != t.shape) {
      mismatched.push_back(name + " " + ckpt::shape_string(t.shape) + " for " + c10::str(it->second.sizes()));
      continue;
    }
    found[name] = i;
  }
  for (const auto& kv : wanted) {
    if (!named.count(kv.first)) missing.push_back(kv.first);
  }
  if (!missing.empty() || !unexpected.empty() || !mismatched.empty()) {
    std::string why = "the checkpoint's `" + w.where + "` does not fit the model:";
    if (!missing.empty()) why += " missing " + list_names(missing) + ";";
    if (!unexpected.empty()) why += " unexpected " + list_names(unexpected) + ";";
    if (!mismatched.empty()) why += " shape mismatch " + list_names(mismatched) + ";";
    why.pop_back();
    throw std::runtime_error(why);
  }

  torch::NoGradGuard no_grad;
  std::string inflated;
  for (const auto& [name, index] : found) {
    at::Tensor source = view_tensor(*file, file->tensors[w.tensors[index]], inflated);
    wanted.at(name).copy_(source);  // converts dtype and device; the view is not kept
  }

  Json j;
  j["path"] = path;
  j["format"] = ckpt::format_name(file->format);
  j["weights_at"] = w.where;
  j["prefix_stripped"] = match.prefix;
  j["tensors_loaded"] = found.size();
  j["safety"] = ckpt::assess_file_safety(*file).text;
  j["optimizer"] = state.optimizers.empty() ? Json(nullptr) : Json(state.optimizers.front().kind);
  j["training_checkpoint"] = state.training;
  return j;
}

}  // namespace torchlint::probe
