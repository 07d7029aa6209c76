#pragma once
// One reader per container. Each fills a CheckpointFile whose bytes, size, extension and
// sniffed format are set: the pickles it finds (each run through the VM and assessed by
// the policy), storages, tensors, metadata and issues. Readers never throw on bad input.
#include "checkpoint.h"
#include "policy.h"

namespace torchlint::ckpt {

struct ReaderOptions {
  Policy policy;
  // Largest zip member the inspector inflates into memory to read a pickle (--max-inflate).
  uint64_t max_inflated_member = 1ull << 30;
};

void read_zip_checkpoint(CheckpointFile& file, const ReaderOptions& options);  // torch zip, TorchScript, npz
void read_pickle_file(CheckpointFile& file, const ReaderOptions& options);     // legacy stacked pickles, raw pickles
void read_legacy_tar(CheckpointFile& file, const ReaderOptions& options);
void read_safetensors(CheckpointFile& file, const ReaderOptions& options);
void read_npy(CheckpointFile& file, const ReaderOptions& options);

// Runs one pickle at `offset` of `bytes` (the file's bytes or an inflated member kept in
// file.buffers) and records it in the file with the policy's assessment.
PickleScan& scan_pickle(CheckpointFile& file, Bytes bytes, size_t offset, uint64_t base_offset, std::string where,
                        PickleDialect dialect, bool loaded_by_torch, const ReaderOptions& options);

// Pickles carried inside pickles as bytes constants (`pickle.loads(b"...")`,
// `torch.load(io.BytesIO(...))`; bypass class B17): walks every bytes value, and every
// protocol-2 `_codecs.encode(str, 'latin1')`, that is itself a pickle, recursively, and
// records each as a pickle of the file that torch does not load itself.
void scan_embedded_pickles(CheckpointFile& file, const ReaderOptions& options);

// The pickles torch.load reads as a stream, read again that way (see ReadMode) when they
// use frames: where the stream reading parts from the buffer reading, a TL812 issue, and
// the stream reading is recorded as a pickle of the file (what torch.load really runs).
void scan_stream_readings(CheckpointFile& file, const ReaderOptions& options);

// Parses a NumPy header dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
  bool object = false;  // descr holds Python objects: a pickle follows
};
std::optional<NpyHeader> parse_npy_header(std::string_view text, std::string& error);

}  // namespace torchlint::ckpt
