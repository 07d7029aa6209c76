#pragma once
// The size cap of the precompiled-header cache: least recently used PCHs go first. Kept
// apart from pch.cpp because it needs no Clang (one light translation unit).
#include <chrono>
#include <cstdint>
#include <set>
#include <string>

namespace torchlint::cpp {

// The default cap: 2 GiB, about 16 PCHs of <torch/torch.h>.
inline constexpr uint64_t kDefaultPchMaxSize = 2ull << 30;

// Removes `<key>.pch` files (with their `<key>.h`) from `dir`, oldest modification time
// first (PchCache touches a PCH each time it hands it out, so the time is its last use),
// until the PCHs left take at most `max_bytes`. Never removes a path in `in_use`; a PCH
// this process does not know (`ours`) that was used within `grace` may be in use by another
// run and is kept too. Files that vanish meanwhile (another run evicting) are skipped.
// Build leftovers (`*.tmp-*`) older than an hour are removed. Returns the bytes freed.
uint64_t evict_pch_lru(const std::string& dir, uint64_t max_bytes, const std::set<std::string>& in_use,
                       const std::set<std::string>& ours, std::chrono::seconds grace = std::chrono::seconds(60));

}  // namespace torchlint::cpp
