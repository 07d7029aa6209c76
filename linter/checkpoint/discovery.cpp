#include "discovery.h"

#include <array>
#include <cstring>
#include <fstream>
#include <set>

#include "core/text.h"
#include "inspector.h"
#include "summary.h"

namespace torchlint::ckpt {

namespace fs = std::filesystem;

bool skipped_checkpoint_directory(const fs::path& dir) {
  static constexpr std::array kSkipped = {
      "__pycache__", "__pypackages__", "site-packages", "dist-packages", "node_modules", "venv",    "build",
      "dist",        "_build",         "buck-out",      "bazel-out",     "target",       "htmlcov",
  };
  std::string name = dir.filename().string();
  if (name.starts_with(".")) return true;
  for (const char* s : kSkipped) {
    if (name == s) return true;
  }
  if (name.starts_with("build-") || name.starts_with("cmake-build-") || name.starts_with("bazel-")) return true;
  std::error_code ec;
  return fs::exists(dir / "pyvenv.cfg", ec) || fs::exists(dir / "conda-meta", ec);
}

bool never_a_checkpoint(const std::string& filename) {
  static const std::set<std::string> text = {
      ".py",  ".pyi",  ".pyx",   ".ipynb", ".md",  ".rst",  ".txt",      ".toml", ".cfg",  ".ini",   ".yaml",
      ".yml", ".json", ".jsonl", ".csv",   ".tsv", ".html", ".htm",      ".css",  ".js",   ".c",     ".cc",
      ".cpp", ".cxx",  ".h",     ".hpp",   ".cu",  ".cuh",  ".sh",       ".bat",  ".ps1",  ".cmake", ".xml",
      ".svg", ".png",  ".jpg",   ".jpeg",  ".gif", ".webp", ".bmp",      ".tif",  ".tiff", ".wav",   ".mp3",
      ".mp4", ".lock", ".log",   ".in",    ".tex", ".bib",  ".gitignore"};
  std::string ext = ascii_lower(fs::path(filename).extension().string());
  return text.contains(ext) || filename == "LICENSE" || filename == "Makefile" || filename == "Dockerfile";
}

namespace {

uint64_t le64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

bool looks_like_checkpoint(const unsigned char* b, size_t n, uint64_t size) {
  if (n >= 4 && std::memcmp(b, "PK\x03\x04", 4) == 0) return true;
  if (n >= 8 && std::memcmp(b, "PYTORCH1", 8) == 0) return true;
  if (n >= 8 && std::memcmp(b + 4, "PTMF", 4) == 0) return true;
  if (n >= 2 && b[0] == 0x80 && b[1] >= 2 && b[1] <= 5) return true;
  if (n >= 262 && std::memcmp(b + 257, "ustar", 5) == 0) return true;
  if (n >= 10) {
    uint64_t header = le64(b);
    if (header >= 2 && header <= 100'000'000 && header + 8 <= size && b[8] == '{') return true;
  }
  return false;
}

bool is_checkpoint_candidate(const fs::path& file) {
  std::string name = file.filename().string();
  if (has_checkpoint_extension(name)) return true;
  if (never_a_checkpoint(name)) return false;
  std::error_code ec;
  uint64_t size = fs::file_size(file, ec);
  if (ec || size == 0) return false;
  unsigned char head[512];
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  in.read(reinterpret_cast<char*>(head), sizeof head);
  return looks_like_checkpoint(head, static_cast<size_t>(in.gcount()), size);
}

bool keep_found_file(const CheckpointFile& f) {
  bool named = has_checkpoint_extension(f.path);
  bool dangerous = assess_file_safety(f).level == SafetyLevel::kDangerous;
  // Found by its bytes alone and unreadable: a zip or pickle of something else, unless
  // what could be read is already dangerous.
  if (!named && f.fatal()) return dangerous;
  switch (f.format) {
    case Format::kUnknown:
    case Format::kEmpty:
    case Format::kNpy:
    case Format::kNpz:
      return false;
    case Format::kZip:
    case Format::kSevenZip:
    case Format::kRawPickle:
      return named || dangerous;
    case Format::kLegacyTar:
      return named || !f.fatal();  // a tar of something else fails to read as torch's
    default:
      return true;
  }
}

}  // namespace torchlint::ckpt
