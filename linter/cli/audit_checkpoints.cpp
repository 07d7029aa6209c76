#include "audit_checkpoints.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "registry/checkpoint_rules.h"
#include "checkpoint/discovery.h"
#include "checkpoint/inspector.h"
#include "checkpoint/summary.h"
#include "checkpoint/training_state.h"
#include "core/glob.h"

namespace torchlint::cli {

namespace fs = std::filesystem;

namespace {

// A Hugging Face Trainer `checkpoint-N/` (or any folder with separate optimizer and
// scheduler files) is one checkpoint across its files.
bool is_checkpoint_directory(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir / "trainer_state.json", ec)) return true;
  for (const char* f : {"optimizer.pt", "optimizer.bin", "scheduler.pt", "scheduler.bin"}) {
    if (fs::exists(dir / f, ec)) return true;
  }
  return false;
}

void read_trainer_state(const fs::path& file, ckpt::Checkpoint& cp) {
  std::error_code ec;
  auto size = fs::file_size(file, ec);
  if (ec || size > (64u << 20)) return;
  std::ifstream in(file, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return;
  cp.has_trainer_state = true;
  if (j.contains("global_step") && j["global_step"].is_number_integer())
    cp.trainer_global_step = j["global_step"].get<int64_t>();
  if (j.contains("epoch") && j["epoch"].is_number()) cp.trainer_epoch = j["epoch"].get<double>();
}

struct Candidate {
  fs::path path;
  std::string display;
};

std::string join_display(const std::string& base, const fs::path& relative) {
  std::string rel = relative.generic_string();
  if (base.empty() || base == ".") return rel;
  return (base.ends_with('/') ? base : base + "/") + rel;
}

class Walker {
 public:
  Walker(const CheckpointScanOptions& options, CheckpointScan& scan) : options_(options), scan_(scan) {}

  // A file: sniffed unless `explicit_file` (given on the command line).
  void file(const fs::path& path, const std::string& display, bool explicit_file) {
    std::error_code ec;
    uint64_t size = fs::file_size(path, ec);
    if (ec || size == 0) return;
    if (!explicit_file && !ckpt::is_checkpoint_candidate(path)) return;
    if (options_.max_bytes && size > options_.max_bytes) {
      scan_.notes.push_back(display + ": not inspected, " + report::human_size(size) + " is above the size limit (" +
                            report::human_size(options_.max_bytes) + ", --max-checkpoint-size)");
      return;
    }
    candidates_.push_back({path, display});
  }

  // A directory: walked without following directory symlinks.
  void directory(const fs::path& root, const std::string& display_base, bool apply_exclude) {
    std::error_code ec;
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      const auto& entry = *it;
      std::error_code e2;
      fs::path rel = entry.path().lexically_relative(root);
      std::string relative = rel.generic_string();
      if (entry.is_directory(e2)) {
        if (entry.is_symlink(e2) || ckpt::skipped_checkpoint_directory(entry.path()) ||
            (apply_exclude && excluded(relative))) {
          it.disable_recursion_pending();
        }
        continue;
      }
      if (!entry.is_regular_file(e2) || (apply_exclude && excluded(relative))) continue;
      file(entry.path(), join_display(display_base, rel), false);
    }
    if (ec) scan_.notes.push_back(display_base + ": the walk stopped early: " + ec.message());
  }

  void inspect() {
    std::sort(candidates_.begin(), candidates_.end(),
              [](const Candidate& a, const Candidate& b) { return a.display < b.display; });
    candidates_.erase(std::unique(candidates_.begin(), candidates_.end(),
                                  [](const Candidate& a, const Candidate& b) { return a.display == b.display; }),
                      candidates_.end());
    scan_.candidates = candidates_.size();
    ckpt::InspectOptions inspect_options;  // structure only: tensor bytes are never read here
    std::map<fs::path, std::vector<ckpt::CheckpointFile*>> grouped;
    size_t done = 0;
    for (const auto& c : candidates_) {
      if (options_.progress) {
        options_.progress("inspecting checkpoints " + std::to_string(++done) + "/" +
                          std::to_string(candidates_.size()) + ": " + c.display);
      }
      std::string error;
      auto file = ckpt::inspect_file(c.path.string(), c.display, inspect_options, error);
      if (!file) {
        scan_.notes.push_back(c.display + ": not inspected: " + error);
        continue;
      }
      if (!ckpt::keep_found_file(*file)) continue;
      ckpt::CheckpointFile* f = file.get();
      scan_.files.push_back(std::move(file));
      fs::path dir = c.path.parent_path();
      if (is_checkpoint_directory(dir)) {
        grouped[dir].push_back(f);
      } else {
        ckpt::Checkpoint cp;
        cp.display = f->display;
        cp.files.push_back(f);
        cp.roles.push_back("");
        scan_.checkpoints.push_back(std::move(cp));
      }
    }
    for (auto& [dir, files] : grouped) {
      ckpt::Checkpoint cp;
      std::string first = files.front()->display;
      size_t slash = first.find_last_of('/');
      cp.display = slash == std::string::npos ? std::string(".") : first.substr(0, slash);
      cp.directory = true;
      read_trainer_state(dir / "trainer_state.json", cp);
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(dir, ec)) {
        std::error_code e2;
        std::string name = e.path().filename().string();
        bool member = std::any_of(files.begin(), files.end(),
                                  [&](const ckpt::CheckpointFile* f) { return fs::path(f->path).filename() == name; });
        if (e.is_regular_file(e2) && !member) cp.other_files.push_back(name);
      }
      std::sort(cp.other_files.begin(), cp.other_files.end());
      for (ckpt::CheckpointFile* f : files) {
        cp.files.push_back(f);
        cp.roles.push_back(ckpt::role_from_filename(fs::path(f->path).filename().string()));
      }
      scan_.checkpoints.push_back(std::move(cp));
    }
    std::sort(scan_.checkpoints.begin(), scan_.checkpoints.end(),
              [](const ckpt::Checkpoint& a, const ckpt::Checkpoint& b) { return a.display < b.display; });
  }

 private:
  bool excluded(const std::string& relative) const {
    return std::any_of(options_.exclude.begin(), options_.exclude.end(),
                       [&](const std::string& p) { return path_matches(p, relative); });
  }

  const CheckpointScanOptions& options_;
  CheckpointScan& scan_;
  std::vector<Candidate> candidates_;
};

std::string training_text(const ckpt::Checkpoint& cp, const ckpt::TrainingState& t, std::string& detail) {
  bool torchscript =
      std::any_of(cp.files.begin(), cp.files.end(), [](const ckpt::CheckpointFile* f) { return f->is_torchscript(); });
  if (torchscript && t.weights.empty()) {
    uint64_t bytes = 0, tensors = 0;
    for (const auto* f : cp.files) {
      tensors += f->tensors.size();
      for (const auto& tensor : f->tensors) bytes += tensor.nbytes();
    }
    detail = "a scripted or traced model: " + ckpt::grouped(tensors) + " tensors, " + ckpt::human_bytes(bytes) +
             " of weights and buffers";
    return "TorchScript model";
  }
  if (t.weights.empty() && t.optimizers.empty() && t.schedulers.empty() && t.counters.empty()) {
    detail = "no model weights or training state recognised";
    return "no model weights recognised";
  }
  auto yes_no = [](bool b) { return b ? std::string("yes") : std::string("no"); };
  detail = "weights " + yes_no(!t.weights.empty());
  detail += ", optimizer " + (t.optimizers.empty() ? std::string("no") : "yes (" + t.optimizers.front().kind + ")");
  detail += ", scheduler " + (t.schedulers.empty() ? std::string(t.schedule_hint ? "no (a schedule was in use)" : "no")
                                                   : std::string("yes"));
  detail += ", epoch/step " + (t.counters.empty()
                                   ? std::string("no")
                                   : "yes (" + t.counters.front().key + " = " + t.counters.front().value + ")");
  if (!t.scalers.empty()) detail += ", AMP scaler yes";
  if (!t.producer.empty()) detail += "; layout of " + t.producer;
  if (t.training) {
    if (t.resumable()) return "resumable training checkpoint";
    std::vector<std::string> missing;
    if (t.weights.empty()) missing.push_back("weights");
    if (t.optimizers.empty()) missing.push_back("optimizer state");
    if (t.schedule_hint && t.schedulers.empty()) missing.push_back("scheduler state");
    if (t.counters.empty()) missing.push_back("epoch/step counter");
    std::string m;
    for (size_t i = 0; i < missing.size(); ++i) m += (i ? ", " : "") + missing[i];
    return "training checkpoint, cannot resume: no " + m;
  }
  if (!t.weights.empty() && !t.weights.front().pickled_class.empty())
    return "whole pickled model (" + t.weights.front().pickled_class + ")";
  if (!t.weights.empty()) return "weights only";
  return "training state without weights";
}

std::string safety_word(ckpt::SafetyLevel level) {
  switch (level) {
    case ckpt::SafetyLevel::kSafe:
      return "safe";
    case ckpt::SafetyLevel::kNoCode:
      return "no code";
    case ckpt::SafetyLevel::kNeedsTrust:
      return "needs trust";
    case ckpt::SafetyLevel::kDangerous:
      return "dangerous";
    case ckpt::SafetyLevel::kIncomplete:
      return "unknown";
  }
  return "unknown";
}

}  // namespace

CheckpointScan scan_checkpoints(const CheckpointScanOptions& options) {
  CheckpointScan scan;
  Walker walker(options, scan);
  walker.directory(".", ".", true);
  for (const auto& [path, display] : options.extra) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      walker.directory(path, display, false);
    } else {
      walker.file(path, display, true);
    }
  }
  walker.inspect();
  return scan;
}

std::vector<Diagnostic> checkpoint_diagnostics(const CheckpointScan& scan, const RuleSet& enabled,
                                               const RuleRegistry& registry) {
  std::vector<Diagnostic> out;
  for (const auto& cp : scan.checkpoints) {
    auto found = ckpt::run_checkpoint_rules(cp, checkpoint_rules(), [&](const std::string& code) {
      auto index = registry.index_of(code);
      return index && enabled.contains(*index);
    });
    for (auto& d : found) out.push_back(std::move(d));
  }
  std::sort(out.begin(), out.end(), diagnostic_less);
  return out;
}

std::vector<report::CheckpointRow> checkpoint_rows(const std::vector<ckpt::Checkpoint>& checkpoints,
                                                   const std::vector<Diagnostic>& findings) {
  std::vector<report::CheckpointRow> rows;
  for (const auto& cp : checkpoints) {
    report::CheckpointRow row;
    row.path = cp.display;
    row.files = cp.files.size();
    std::vector<std::string> formats;
    std::set<std::string> displays{cp.display};
    for (const auto* f : cp.files) {
      row.bytes += f->size;
      std::string name(ckpt::format_name(f->format));
      if (std::find(formats.begin(), formats.end(), name) == formats.end()) formats.push_back(name);
      displays.insert(f->display);
      row.torchscript = row.torchscript || f->format == ckpt::Format::kTorchScript;
    }
    for (size_t i = 0; i < formats.size(); ++i) row.format += (i ? ", " : "") + formats[i];
    if (cp.directory) row.format = "directory of " + std::to_string(cp.files.size()) + " files: " + row.format;
    ckpt::TrainingState training = ckpt::analyze_training_state(cp);
    row.training_state = training_text(cp, training, row.training_detail);
    ckpt::Safety safety = ckpt::assess_checkpoint_safety(cp);
    row.safety = safety_word(safety.level);
    row.safety_detail = safety.text;
    // The verdict is its own column: drop it from the front of the sentence.
    for (const char* prefix : {"safe: ", "needs trust: ", "DANGEROUS: ", "UNSAFE: ", "unknown: "}) {
      if (row.safety_detail.starts_with(prefix)) {
        row.safety_detail.erase(0, std::strlen(prefix));
        break;
      }
    }
    for (const auto& d : findings) {
      if (displays.contains(d.path) && std::find(row.codes.begin(), row.codes.end(), d.code) == row.codes.end()) {
        row.codes.push_back(d.code);
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace torchlint::cli
