// libFuzzer target: the pickle machine and the policy on arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "checkpoint/pickle_vm.h"
#include "checkpoint/policy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto run = torchlint::ckpt::run_pickle(bytes);
  auto safety = torchlint::ckpt::assess(run, {}, torchlint::ckpt::PickleDialect::kTorchLoad);
  (void)safety;
  if (run.complete()) (void)run.root_ref().describe();
  return 0;
}
