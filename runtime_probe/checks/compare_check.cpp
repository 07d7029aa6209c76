// compare: the A/B comparison the checklist asks for before a rollout. Both models run on the
// same inputs (same seed); the report gives how far the outputs move and the latency ratio.
// Information only: whether the change is acceptable is the reader's call.
#include <torch/csrc/jit/serialization/import.h>

#include "artifact.h"
#include "checks.h"

namespace torchlint::probe {

void compare_check(CheckRun& run) {
  ProbeSession& s = run.session;
  const std::string& path = s.options().compare_path;
  if (path.empty()) return run.skip("no --compare model given");
  const Artifact artifact = identify_model_file(path);
  if (!artifact.unsupported.empty()) throw std::runtime_error(path + ": " + artifact.unsupported);
  torch::jit::Module other = torch::jit::load(path, s.device());
  other.eval();

  const Difference d = compare_outputs(s.run(s.eval_model()), s.run(other));
  const std::vector<c10::IValue> inputs = s.inputs();
  const LatencyStats a = s.time_forward(s.eval_model(), inputs, 5, 50, 1.0, 5);
  const LatencyStats b = s.time_forward(other, inputs, 5, 50, 1.0, 5);
  const double ratio = a.p50_ms > 0 ? b.p50_ms / a.p50_ms : 0;
  run.figures()["other"] = path;
  run.figures()["outputs"] = d.to_json();
  run.figures()["latency_model"] = a.to_json();
  run.figures()["latency_other"] = b.to_json();
  run.figures()["latency_ratio"] = ratio;
  run.result.headline = d.comparable
                            ? "max |difference| " + format_number(d.max_abs) + ", latency ratio " + format_number(ratio)
                            : "outputs not comparable: " + d.why;
}

}  // namespace torchlint::probe
