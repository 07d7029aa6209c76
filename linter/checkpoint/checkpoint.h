#pragma once
// The result of inspecting checkpoint files: what each file is (container, pickles,
// storages, tensors, problems) and, for a training checkpoint spread over a directory
// (Hugging Face Trainer's `checkpoint-N/`), the files taken together. Rules read these;
// nothing here ever executes anything from a file.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dims.h"
#include "dtype.h"
#include "issues.h"
#include "mapped_file.h"
#include "pickle_vm.h"
#include "policy.h"
#include "value_graph.h"

namespace torchlint::ckpt {

enum class Format : uint8_t {
  kUnknown,
  kEmpty,
  kTorchZip,          // torch.save (>= 1.6): zip with <prefix>/data.pkl
  kTorchScript,       // torch.jit.save: zip with constants.pkl and code/
  kTorchMobile,       // lite interpreter: zip with bytecode.pkl
  kMobileFlatbuffer,  // PTMF flatbuffer (no pickle)
  kPreviewZip,        // PYTORCH1 preview format (torch refuses it)
  kLegacyPickle,      // torch.save before 1.6 / _use_new_zipfile_serialization=False
  kLegacyTar,         // torch <= 0.1.x tar of pickles
  kRawPickle,         // a bare pickle (or stacked pickles)
  kSafetensors,
  kNpy,
  kNpz,  // zip of .npy members
  kZip,  // some other zip
  kSevenZip,
};
std::string_view format_name(Format f);

struct StorageInfo {  // (small fields last: 200 000 of these in a big checkpoint)
  std::string key;
  std::string location;           // "cpu", "cuda:0", ...
  uint64_t numel = 0;             // declared, in elements of `dtype`
  uint64_t available_bytes = 0;   // bytes the file has for it
  uint64_t data_offset = 0;       // where they start in the file
  uint64_t compressed_bytes = 0;  // nonzero: a deflated zip member of this many bytes
  uint32_t tensors = 0;           // tensors viewing it
  DType dtype = DType::kUnknown;
  bool found = false;  // its bytes exist in the file
  bool big_endian = false;
  uint64_t nbytes() const { return numel * dtype_bytes(dtype); }
};

struct TensorInfo {
  std::string name;      // where it sits in the object: "model_state_dict.fc.weight"
  int32_t storage = -1;  // index into storages; -1: no storage (meta tensors)
  DType dtype = DType::kUnknown;
  Dims shape;
  Dims stride;
  int64_t storage_offset = 0;  // in elements of dtype
  uint64_t numel = 0;
  bool requires_grad = false;
  bool parameter = false;
  bool quantized = false;
  bool bounds_ok = true;  // fits in its storage (else a TL813 issue was raised)
  uint64_t nbytes() const { return numel * dtype_bytes(dtype); }
  bool contiguous() const;
};

struct ValueStats {
  bool scanned = false;
  std::string error;  // why it could not be scanned
  uint64_t nan = 0, inf = 0, finite = 0;
  double min = 0, max = 0, mean = 0;
};

// One pickle found in a file.
struct PickleScan {
  std::string where;  // "data.pkl", "pickle 4 of 5", "zip member extra/x.pkl"
  PickleRun run;
  PickleSafety safety;
  PickleDialect dialect = PickleDialect::kTorchLoad;
  bool loaded_by_torch = true;  // torch.load / torch.jit.load unpickles it
  // The bytes the pickle was run from (a view of the file or of an inflated member kept
  // in the file's buffers), to read it again as torch's stream reader does.
  Bytes input;
  size_t input_start = 0;
  uint64_t input_base = 0;
};

struct CheckpointFile {
  std::string path;       // as opened
  std::string display;    // as reported
  std::string extension;  // ".pt", ".pth.tar", "" ...
  uint64_t size = 0;
  Format format = Format::kUnknown;
  std::string format_detail;               // "records under `archive/`, version 3"
  std::vector<std::string> version_hints;  // "torch >= 2.1 (byteorder record)"
  std::shared_ptr<const MappedFile> bytes;

  std::vector<std::unique_ptr<PickleScan>> pickles;
  int main_pickle = -1;  // the object torch.load returns
  std::vector<StorageInfo> storages;
  std::vector<TensorInfo> tensors;
  // Main-pickle values that are tensors and are not calls (tar persistent ids); calls
  // carry their tensor in CallRecord::tensor.
  std::unordered_map<ValueId, uint32_t> tensor_of_value;
  std::vector<std::pair<std::string, std::string>> metadata;  // safetensors __metadata__, npy header
  uint32_t code_files = 0;                                    // TorchScript code/ members
  std::vector<Issue> issues;
  std::vector<std::unique_ptr<std::string>> buffers;          // inflated members the pickles point into
  std::vector<std::shared_ptr<const MappedFile>> keep_alive;  // other bytes the pickles point into
  std::vector<ValueStats> stats;                              // parallel to tensors, after a value scan
  bool values_scanned = false;

  bool fatal() const;
  ValueRef root() const;
  const PickleScan* main() const { return main_pickle >= 0 ? pickles[main_pickle].get() : nullptr; }
  // The tensor a value of the main pickle is, if it is one.
  const TensorInfo* tensor(ValueRef v) const;
  // The index of the tensor value `id` of the main pickle is, if it is one.
  std::optional<uint32_t> tensor_index(ValueId id) const;
  bool is_torchscript() const { return format == Format::kTorchScript || format == Format::kTorchMobile; }
};

// A training checkpoint: one file, or the files of one checkpoint directory.
struct Checkpoint {
  std::string display;  // the file, or the directory
  bool directory = false;
  std::vector<CheckpointFile*> files;
  std::vector<std::string> roles;  // parallel to files: "weights", "optimizer", ... ("" for a single file)
  // From trainer_state.json, for directories.
  bool has_trainer_state = false;
  std::optional<int64_t> trainer_global_step;
  std::optional<double> trainer_epoch;
  std::vector<std::string> other_files;  // JSON and other non-checkpoint files of the directory
};

}  // namespace torchlint::ckpt
