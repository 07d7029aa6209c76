// libFuzzer target: the whole inspector (sniffing, every reader, value scan), the rules
// and the summary, on arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "registry/checkpoint_rules.h"
#include "checkpoint/inspector.h"
#include "checkpoint/summary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchlint::ckpt;
  InspectOptions options;
  options.scan_values = true;
  auto file = inspect_bytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz.pt", options);
  Checkpoint cp;
  cp.display = "fuzz.pt";
  cp.files.push_back(file.get());
  cp.roles.push_back("");
  auto diagnostics = run_checkpoint_rules(cp, torchlint::checkpoint_rules(), [](const std::string&) { return true; });
  (void)render_summary(cp, analyze_training_state(cp), {});
  return 0;
}
