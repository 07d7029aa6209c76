#include "inspector.h"

#include "discovery.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "container.h"
#include "core/text.h"
#include "value_scan.h"

namespace torchlint::ckpt {

namespace fs = std::filesystem;

namespace {

void read_by_format(CheckpointFile& file, const InspectOptions& options) {
  file.format = sniff_format(file.bytes->bytes());
  IssueSink sink(file.issues);
  switch (file.format) {
    case Format::kTorchZip:
      read_zip_checkpoint(file, options.reader);
      break;
    case Format::kLegacyTar:
      read_legacy_tar(file, options.reader);
      break;
    case Format::kRawPickle:
      read_pickle_file(file, options.reader);
      break;
    case Format::kSafetensors:
      read_safetensors(file, options.reader);
      break;
    case Format::kNpy:
      read_npy(file, options.reader);
      break;
    case Format::kPreviewZip:
      sink.malformed("format", "PYTORCH1 preview archive: torch.load refuses this obsolete format", true);
      break;
    case Format::kMobileFlatbuffer:
      file.format_detail = "flatbuffer model for the mobile runtime: holds no pickle";
      break;
    case Format::kSevenZip:
      sink.malformed("format", "7z archive: torch.load cannot read it, and its contents are not inspected", true);
      break;
    case Format::kEmpty:
      sink.malformed("format", "empty file: torch.load fails on it", true);
      break;
    default:
      sink.malformed("format", "not a checkpoint: the bytes match no format torch.load, safetensors or NumPy reads",
                     true);
      break;
  }
  scan_stream_readings(file, options.reader);
  scan_embedded_pickles(file, options.reader);
}

}  // namespace

bool CheckpointFile::fatal() const {
  return std::any_of(issues.begin(), issues.end(), [](const Issue& i) { return i.fatal; });
}

ValueRef CheckpointFile::root() const {
  const PickleScan* m = main();
  if (!m || !m->run.complete()) return {};
  return m->run.root_ref();
}

std::optional<uint32_t> CheckpointFile::tensor_index(ValueId id) const {
  const PickleScan* m = main();
  if (!m || id >= m->run.graph->size()) return std::nullopt;
  const ValueGraph& g = *m->run.graph;
  if (g.node(id).kind == ValueKind::kCall) {
    uint32_t t = g.call_record(g.node(id).a).tensor;
    if (t != 0xffffffffu) return t;
    return std::nullopt;
  }
  if (tensor_of_value.empty()) return std::nullopt;
  auto it = tensor_of_value.find(id);
  if (it == tensor_of_value.end()) return std::nullopt;
  return it->second;
}

const TensorInfo* CheckpointFile::tensor(ValueRef v) const {
  if (!v.valid() || !main() || v.graph() != main()->run.graph.get()) return nullptr;
  auto i = tensor_index(v.id());
  return i ? &tensors[*i] : nullptr;
}

std::unique_ptr<CheckpointFile> inspect_file(const std::string& path, const std::string& display,
                                             const InspectOptions& options, std::string& error) {
  auto bytes = MappedFile::open(path, error);
  if (!bytes) return nullptr;
  auto file = std::make_unique<CheckpointFile>();
  file->path = path;
  file->display = display;
  file->extension = checkpoint_extension(path);
  file->size = bytes->size();
  file->bytes = std::move(bytes);
  read_by_format(*file, options);
  if (options.scan_values) scan_values(*file, options.progress);
  return file;
}

std::unique_ptr<CheckpointFile> inspect_bytes(std::string bytes, const std::string& display,
                                              const InspectOptions& options) {
  auto file = std::make_unique<CheckpointFile>();
  file->path = display;
  file->display = display;
  file->extension = checkpoint_extension(display);
  file->size = bytes.size();
  file->bytes = MappedFile::from_string(std::move(bytes));
  read_by_format(*file, options);
  if (options.scan_values) scan_values(*file, options.progress);
  return file;
}

bool has_checkpoint_extension(const std::string& filename) {
  static const std::set<std::string> exts = {".pt",     ".pth",   ".ckpt", ".bin",     ".safetensors", ".pkl",
                                             ".pickle", ".npy",   ".npz",  ".pth.tar", ".pt.tar",      ".ckpt.tar",
                                             ".joblib", ".model", ".pt2",  ".mar"};
  return exts.contains(ascii_lower(checkpoint_extension(filename)));
}

std::string role_from_filename(const std::string& filename) {
  std::string f = fs::path(filename).filename().string();
  auto stem_is = [&](std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(), [&](const char* n) { return f.starts_with(n); });
  };
  if (stem_is({"optimizer"})) return "optimizer";
  if (stem_is({"scheduler", "lr_scheduler"})) return "scheduler";
  if (stem_is({"scaler"})) return "scaler";
  if (stem_is({"rng_state", "random_states"})) return "rng";
  if (stem_is({"training_args"})) return "args";
  if (stem_is({"model", "pytorch_model", "adapter_model", "diffusion_pytorch_model"})) return "weights";
  return "";
}

namespace {

bool is_checkpoint_directory(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir / "trainer_state.json", ec)) return true;
  for (const char* f : {"optimizer.pt", "optimizer.bin", "scheduler.pt", "scheduler.bin"}) {
    if (fs::exists(dir / f, ec)) return true;
  }
  return false;
}

std::string display_of(const fs::path& p) { return p.lexically_normal().generic_string(); }

void read_trainer_state(const fs::path& json_path, Checkpoint& cp) {
  std::ifstream in(json_path, std::ios::binary);
  if (!in) return;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > (64u << 20)) return;
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return;
  cp.has_trainer_state = true;
  if (j.contains("global_step") && j["global_step"].is_number_integer())
    cp.trainer_global_step = j["global_step"].get<int64_t>();
  if (j.contains("epoch") && j["epoch"].is_number()) cp.trainer_epoch = j["epoch"].get<double>();
}

}  // namespace

Inspection inspect_paths(const std::vector<std::string>& paths, const InspectOptions& options) {
  Inspection out;
  auto add_file = [&](const fs::path& p, bool explicit_file) -> CheckpointFile* {
    std::string error;
    auto file = inspect_file(p.string(), display_of(p), options, error);
    if (!file) {
      out.errors.push_back({display_of(p), error});
      return nullptr;
    }
    if (explicit_file ? options.skip_unrecognised_files && file->format == Format::kUnknown : !keep_found_file(*file)) {
      ++out.skipped;  // a .bin or .model that is no checkpoint: not ours to judge
      return nullptr;
    }
    out.files.push_back(std::move(file));
    return out.files.back().get();
  };
  for (const auto& raw : paths) {
    fs::path path(raw);
    std::error_code ec;
    auto status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
      out.errors.push_back({raw, "no such file or directory"});
      continue;
    }
    if (!fs::is_directory(status)) {
      if (options.skip_unrecognised_files && !is_checkpoint_candidate(path)) {
        ++out.skipped;
        continue;
      }
      if (CheckpointFile* f = add_file(path, true)) {
        Checkpoint cp;
        cp.display = f->display;
        cp.files.push_back(f);
        cp.roles.push_back("");
        out.checkpoints.push_back(std::move(cp));
      }
      continue;
    }
    // Walk: candidate files grouped by directory; directory symlinks are not followed.
    std::map<fs::path, std::vector<fs::path>> by_dir;
    std::map<fs::path, std::vector<std::string>> other_files;
    // An explicit stack of directories, so that a directory that cannot be read is an
    // error of its own (exit 2) and the walk goes on with the others.
    std::vector<fs::path> pending{path};
    while (!pending.empty()) {
      fs::path dir = std::move(pending.back());
      pending.pop_back();
      std::error_code dir_ec;
      fs::directory_iterator it(dir, dir_ec), end;
      for (; !dir_ec && it != end; it.increment(dir_ec)) {
        const auto& entry = *it;
        std::string name = entry.path().filename().string();
        std::error_code entry_ec;
        if (entry.is_directory(entry_ec) && !entry.is_symlink(entry_ec)) {
          if (!skipped_checkpoint_directory(entry.path())) pending.push_back(entry.path());
          continue;
        }
        if (!entry.is_regular_file(entry_ec)) continue;
        if (is_checkpoint_candidate(entry.path())) {
          by_dir[entry.path().parent_path()].push_back(entry.path());
        } else {
          other_files[entry.path().parent_path()].push_back(name);
        }
      }
      if (dir_ec) out.errors.push_back({display_of(dir), "cannot read directory: " + dir_ec.message()});
    }
    for (auto& [dir, files] : by_dir) {
      std::sort(files.begin(), files.end());
      bool group = is_checkpoint_directory(dir);
      Checkpoint grouped;
      if (group) {
        grouped.display = display_of(dir);
        grouped.directory = true;
        read_trainer_state(dir / "trainer_state.json", grouped);
        auto& others = other_files[dir];
        std::sort(others.begin(), others.end());
        grouped.other_files = others;
      }
      for (const auto& f : files) {
        CheckpointFile* file = add_file(f, false);
        if (!file) continue;
        if (group) {
          grouped.files.push_back(file);
          grouped.roles.push_back(role_from_filename(f.filename().string()));
        } else {
          Checkpoint cp;
          cp.display = file->display;
          cp.files.push_back(file);
          cp.roles.push_back("");
          out.checkpoints.push_back(std::move(cp));
        }
      }
      if (group && !grouped.files.empty()) out.checkpoints.push_back(std::move(grouped));
    }
  }
  return out;
}

}  // namespace torchlint::ckpt
