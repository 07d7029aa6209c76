#pragma once
// torch's conventions inside a pickle (checkpoint-formats.md §5): persistent ids that
// name storages, the `torch._utils._rebuild_*` calls that make tensors and parameters,
// and the bounds a tensor must respect in its storage. Turns a checkpoint's value graph
// into storage and tensor tables, and names each tensor by where it sits in the object.
#include <functional>
#include <string_view>

#include "checkpoint.h"

namespace torchlint::ckpt {

// Where a storage's bytes are, found by its key.
struct StorageBytes {
  bool found = false;
  uint64_t available = 0;    // bytes there are
  uint64_t data_offset = 0;  // in the file
  uint64_t compressed = 0;   // nonzero: deflated member of this size
  std::string record;        // for messages
};
using StorageLocator = std::function<StorageBytes(std::string_view key, uint64_t declared_bytes)>;

enum class PersistentIdStyle {
  kZip,     // ('storage', StorageType, key, location, numel)
  kLegacy,  // ('storage', StorageType, key, location, numel, view_metadata)
};

// Decodes the tensors of `scan` (the file's main pickle) into file.storages/tensors and
// raises TL813 issues for persistent ids that are not storages, tensors that do not fit,
// and storages whose bytes are missing or short.
void decode_torch_objects(CheckpointFile& file, PickleScan& scan, PersistentIdStyle style, const StorageLocator& locate,
                          bool big_endian, IssueSink& sink);

// Names every tensor by its path from the root object ("optimizer.state.0.exp_avg").
void name_tensors(CheckpointFile& file);

// "12" -> 12; nullopt for anything but a canonical decimal (no sign, no leading zero).
std::optional<uint64_t> canonical_number(std::string_view s);

// Bounds and sizes of a tensor view: numel, and the bytes it needs from its storage.
// False (with `why`) when sizes/strides are negative or the products overflow.
bool tensor_extent(std::span<const int64_t> shape, std::span<const int64_t> stride, int64_t offset, uint64_t& numel,
                   uint64_t& elements_needed, std::string& why);

}  // namespace torchlint::ckpt
