#include "pch_lru.h"

#include <algorithm>
#include <filesystem>
#include <vector>

namespace torchlint::cpp {

namespace fs = std::filesystem;

uint64_t evict_pch_lru(const std::string& dir, uint64_t max_bytes, const std::set<std::string>& in_use,
                       const std::set<std::string>& ours, std::chrono::seconds grace) {
  struct Pch {
    fs::path path;
    uint64_t size = 0;
    fs::file_time_type used;
  };
  std::vector<Pch> pchs;
  uint64_t total = 0;
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    std::string name = p.filename().string();
    std::error_code file_ec;
    if (name.find(".tmp-") != std::string::npos) {
      // A build that was killed: its temporary file is never renamed into place.
      auto t = fs::last_write_time(p, file_ec);
      if (!file_ec && now - t > std::chrono::hours(1)) fs::remove(p, file_ec);
      continue;
    }
    if (p.extension() != ".pch") continue;
    Pch pch{p, fs::file_size(p, file_ec), fs::last_write_time(p, file_ec)};
    if (file_ec) continue;  // gone already
    total += pch.size;
    pchs.push_back(std::move(pch));
  }
  if (total <= max_bytes) return 0;
  std::sort(pchs.begin(), pchs.end(), [](const Pch& a, const Pch& b) { return a.used < b.used; });
  uint64_t freed = 0;
  for (const auto& pch : pchs) {
    if (total - freed <= max_bytes) break;
    std::string path = pch.path.string();
    if (in_use.contains(path)) continue;
    if (!ours.contains(path) && now - pch.used < grace) continue;
    std::error_code remove_ec;
    if (!fs::remove(pch.path, remove_ec)) continue;  // another run removed it first: not ours to count
    freed += pch.size;
    // Its generated header too: the PCH records that file's mtime, so it is only ever
    // written together with a new PCH (write_once).
    fs::path header = pch.path;
    header.replace_extension(".h");
    fs::remove(header, remove_ec);
  }
  return freed;
}

}  // namespace torchlint::cpp
