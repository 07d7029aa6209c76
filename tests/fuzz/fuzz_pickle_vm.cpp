// libFuzzer target: the pickle machine (read as a buffer and as torch.load's stream), the
// policy and its dotted-name resolution, and --allow-global's check, on arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "checkpoint/pickle_vm.h"
#include "checkpoint/policy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  using namespace torchlint::ckpt;
  auto run = run_pickle(bytes);
  auto safety = assess(run, {}, PickleDialect::kTorchLoad);
  (void)safety;
  if (run.complete()) (void)run.root_ref().describe();
  PickleLimits limits = PickleLimits::for_size(bytes.size());
  limits.mode = ReadMode::kStream;
  auto stream = run_pickle(bytes, 0, 0, limits);
  (void)assess(stream, {}, PickleDialect::kTorchLoad);
  // Arbitrary text as a dotted global name and as an --allow-global argument.
  size_t nl = bytes.find('\n');
  if (nl != std::string_view::npos) {
    GlobalName name{std::string(bytes.substr(0, nl)), std::string(bytes.substr(nl + 1, 256))};
    (void)Policy{}.classify(name, PickleDialect::kTorchLoad, 4);
    std::string why;
    (void)Policy::may_allow(name.qualified(), why);
  }
  return 0;
}
