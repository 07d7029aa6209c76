#pragma once
// Which files are checkpoints, decided the same way by every command (`ckpt DIR`,
// `check --include-checkpoints`, `audit`, the pre-commit hook): by their first bytes, not
// their names, so that an exported `model.ts` or `weights.pt.epoch4` is found and a
// `vocab.bin` that is no checkpoint is left out.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "checkpoint.h"

namespace torchlint::ckpt {

// Folders that hold no checkpoint of the project's own: VCS and tool state (dot-folders),
// virtualenvs (a `pyvenv.cfg` or `conda-meta` inside), dependencies and build output.
bool skipped_checkpoint_directory(const std::filesystem::path& dir);

// Text and media files by name: torch.load never reads them, so a walk does not open them.
bool never_a_checkpoint(const std::string& filename);

// The first bytes (up to 512) of a file `size` bytes long match a container torch.load,
// torch.jit.load or safetensors reads: zip, the PYTORCH1 preview, a mobile flatbuffer, a
// binary pickle, a tar, a safetensors header. A cheap filter: the inspector decides.
bool looks_like_checkpoint(const unsigned char* bytes, size_t n, uint64_t size);

// A file a walk inspects: named like a checkpoint (`.pt`, `.safetensors`, ...) or, unless
// its name says text or media, whose first 512 bytes look like one. Reads at most 512 bytes.
bool is_checkpoint_candidate(const std::filesystem::path& file);

// Whether a walk keeps a candidate the inspector has read. Containers that also hold other
// data (plain pickles, zips, 7z) count when named like checkpoints or when what they hold
// is dangerous; NumPy arrays are data; what the inspector cannot place is left out.
bool keep_found_file(const CheckpointFile& file);

}  // namespace torchlint::ckpt
