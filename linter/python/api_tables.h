#pragma once
// What torchlint knows about the APIs of torch and the libraries around it, as data.
// Every public spelling of an API maps to one canonical qualified name, so rules compare
// against one string whatever the user imported.
#include <optional>
#include <string>
#include <span>
#include <string_view>

#include "core/name_table.h"

namespace torchlint::python::api {

// Canonical names rules compare against.
inline constexpr std::string_view kDataParallel = "torch.nn.parallel.data_parallel.DataParallel";
inline constexpr std::string_view kDataParallelFunction = "torch.nn.parallel.data_parallel.data_parallel";
inline constexpr std::string_view kDistributedDataParallel = "torch.nn.parallel.distributed.DistributedDataParallel";
inline constexpr std::string_view kDataLoaderClass = "torch.utils.data.dataloader.DataLoader";
inline constexpr std::string_view kTorchLoad = "torch.serialization.load";
inline constexpr std::string_view kTorchSave = "torch.serialization.save";
inline constexpr std::string_view kNoGrad = "torch.autograd.grad_mode.no_grad";
inline constexpr std::string_view kEnableGrad = "torch.autograd.grad_mode.enable_grad";
inline constexpr std::string_view kInferenceMode = "torch.autograd.grad_mode.inference_mode";
inline constexpr std::string_view kSetGradEnabled = "torch.autograd.grad_mode.set_grad_enabled";
inline constexpr std::string_view kAutocast = "torch.amp.autocast_mode.autocast";
inline constexpr std::string_view kSetDetectAnomaly = "torch.autograd.anomaly_mode.set_detect_anomaly";
inline constexpr std::string_view kDetectAnomaly = "torch.autograd.anomaly_mode.detect_anomaly";
inline constexpr std::string_view kAutogradGrad = "torch.autograd.grad";
inline constexpr std::string_view kTorchDevice = "torch.device";
inline constexpr std::string_view kModule = "torch.nn.modules.module.Module";

// The named sets of API names in api_names.def, which says what each holds: `api::id()` is
// set `id`, built once on first use, and `api::names::id` its names in the order given (a
// rule's kTriggers). Inline: rules ask the sets on every call event, and a call into
// api_tables.cpp would add to each lookup.
namespace names {
#define API_NAME_SET(id, ...) inline constexpr std::string_view id[] = {__VA_ARGS__};
#include "api_names.def"
#undef API_NAME_SET
}  // namespace names

#define API_NAME_SET(id, ...)            \
  inline const NameSet& id() {           \
    static const NameSet set(names::id); \
    return set;                          \
  }
#include "api_names.def"
#undef API_NAME_SET

// Maps a fully spelled dotted name to its canonical form (identity when unknown).
std::string canonical_name(std::string name);

enum class ValueKind : uint8_t {
  kUnknown,
  kModel,  // an nn.Module used as a model (not a loss)
  kLoss,   // an nn.Module loss criterion
  kOptimizer,
  kScheduler,
  kDataLoader,
  kGradScaler,
  kDevice,
  kTensor,
  kInstance,         // an instance of a class defined in the project
  kInMemoryDataset,  // a dataset whose items are slices of tensors in memory (TensorDataset)
};
std::string_view value_kind_name(ValueKind kind);

// Whether a receiver's name reads as an optimizer (`opt`, `optimizer_g`, `self.optim`,
// never a scheduler): the engine's and the loop rules' one notion of it, for the receiver
// of an optimizer-like call (`.step()`, `.zero_grad()`). A bare variable is judged by the
// stricter variable_names_optimizer (python/training_checkpoint.h).
bool receiver_names_optimizer(std::string_view receiver);

// What calling `qualname` returns, from the API tables.
ValueKind classify_call(std::string_view qualname);
// A factory of made-up tensors (`torch.randn`, `torch.zeros`, `torch.ones_like`): input
// built from one is a shape or smoke check, not data.
bool makes_synthetic_tensor(std::string_view qualname);
// A call that names or selects a GPU: `torch.cuda.set_device`, `torch.accelerator.*`,
// CUDA streams and events, `torch.cuda.current_device()`.
bool names_gpu(std::string_view qualname);
// A framework trainer that runs the training loop itself (Lightning's `Trainer`, HF
// `transformers.Trainer` and its subclasses such as `Seq2SeqTrainer`, TRL's trainers):
// `trainer.fit(model)` / `trainer.train()` trains.
bool is_framework_trainer(std::string_view qualname);
// The hooks a framework trainer calls on the module it is given.
std::span<const std::string_view> lightning_hooks();
// A call whose result is the device to run on, CUDA when there is one:
// `torch.accelerator.current_accelerator()`, `torch.cuda.current_device()`.
bool returns_gpu_device(std::string_view qualname);

// Whether `qualname` names a class deriving from torch.nn.Module (so subclasses are models).
bool is_module_base(std::string_view qualname);

enum class Rng : uint8_t { kNone, kTorch, kNumpy, kRandom, kAll };
// Seeding functions and which generator they seed.
Rng seeded_by(std::string_view qualname);
// Module-level functions that draw from a global generator (numpy.random.rand, random.shuffle).
Rng draws_from(std::string_view qualname);

// Deprecated automatic-mixed-precision APIs (deprecated in torch 2.4).
struct DeprecatedAmp {
  std::string_view replacement;  // "torch.amp.autocast"
  std::string_view device;       // "cuda" or "cpu"
  bool decorator_keyword;        // custom_fwd/custom_bwd take device_type= as keyword
  bool positional_shift_safe;    // inserting the device as the first positional keeps meaning
};
std::optional<DeprecatedAmp> deprecated_amp(std::string_view qualname);

// What calling `qualname` says about the program, for the audit's applicability checks
// ("serves-http", "uses-dataloader", ...); empty when nothing.
std::string_view usage_fact(std::string_view qualname);

// Top-level packages that are never part of the linted project (their calls are not
// recorded as project call edges).
bool is_external_package(std::string_view top_level);

}  // namespace torchlint::python::api
