// determinism: the same input gives the same output in eval mode, run after run (does the
// model draw random numbers, or keep state?), and with the same seed; whether training mode
// is repeatable after re-seeding; and whether torch.use_deterministic_algorithms(True) can
// run it (an op without a deterministic kernel throws there).
#include <torch/csrc/jit/passes/inliner.h>

#include <set>

#include "checks.h"

namespace torchlint::probe {

namespace {

// Ops that draw from a generator. Dropout-like ops only count when their `train` argument
// is the constant True (F.dropout(x, p, True)): otherwise it follows self.training.
std::vector<std::string> random_ops(const torch::jit::Module& model) {
  static const std::set<std::string> kAlwaysRandom = {
      "aten::rand",       "aten::rand_like",    "aten::randn",    "aten::randn_like",
      "aten::randint",    "aten::randint_like", "aten::randperm", "aten::bernoulli",
      "aten::bernoulli_", "aten::multinomial",  "aten::normal",   "aten::normal_",
      "aten::uniform_",   "aten::exponential_", "aten::poisson",  "aten::rrelu"};
  static const std::set<std::string> kDropouts = {"aten::dropout", "aten::feature_dropout", "aten::alpha_dropout",
                                                  "aten::feature_alpha_dropout", "aten::native_dropout"};
  std::set<std::string> found;
  auto method = model.find_method("forward");
  if (!method) return {};
  auto graph = method->graph()->copy();
  torch::jit::Inline(*graph);
  std::function<void(torch::jit::Block*)> walk = [&](torch::jit::Block* block) {
    for (torch::jit::Node* node : block->nodes()) {
      const std::string kind = node->kind().toQualString();
      if (kAlwaysRandom.count(kind)) found.insert(kind);
      if (kDropouts.count(kind) && node->inputs().size() >= 3) {
        auto train = torch::jit::toIValue(node->input(2));
        if (train && train->isBool() && train->toBool()) found.insert(kind + " (train=True)");
      }
      for (torch::jit::Block* inner : node->blocks()) walk(inner);
    }
  };
  walk(graph->block());
  return {found.begin(), found.end()};
}

std::vector<std::pair<std::string, at::Tensor>> snapshot_buffers(const torch::jit::Module& m) {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& b : m.named_buffers(true)) out.emplace_back(b.name, b.value.clone());
  return out;
}

std::vector<std::string> changed_buffers(const torch::jit::Module& m,
                                         const std::vector<std::pair<std::string, at::Tensor>>& before) {
  std::vector<std::string> changed;
  size_t i = 0;
  for (const auto& b : m.named_buffers(true)) {
    if (i < before.size() && !at::equal(before[i].second, b.value)) changed.push_back(b.name);
    ++i;
  }
  return changed;
}

// "foo_backward_out_cuda does not have a deterministic implementation, but ..." -> the op.
std::string nondeterministic_op(const std::string& message) {
  auto end = message.find(" does not have a deterministic implementation");
  return end == std::string::npos ? message : message.substr(0, end);
}

}  // namespace

void determinism_check(CheckRun& run) {
  ProbeSession& s = run.session;
  torch::jit::Module m = s.eval_copy();
  const auto before = snapshot_buffers(m);

  // Back to back without re-seeding: the generators move on between the runs.
  c10::IValue first, second;
  s.reseed();
  {
    torch::NoGradGuard no_grad;
    first = m.forward(s.inputs());
    second = m.forward(s.inputs());
    s.synchronize();
  }
  const Difference unseeded = compare_outputs(first, second, 0, 0);
  const std::vector<std::string> buffers = changed_buffers(m, before);
  // Re-seeded before each run.
  const Difference seeded = compare_outputs(s.run(m), s.run(m), 0, 0);
  const std::vector<std::string> rng_ops = random_ops(s.model());

  run.figures()["eval_repeatable"] = unseeded.bitwise_equal;
  run.figures()["eval_repeatable_with_seed"] = seeded.bitwise_equal;
  run.figures()["eval_max_abs_difference"] = std::max(unseeded.max_abs, seeded.max_abs);
  run.figures()["random_ops"] = rng_ops;
  run.figures()["buffers_changed_by_eval"] = buffers;

  try {
    torch::jit::Module a = s.train_copy(), b = s.train_copy();
    run.figures()["train_repeatable_with_seed"] = compare_outputs(s.run(a), s.run(b), 0, 0).bitwise_equal;
  } catch (const std::exception& e) {
    run.figures()["train_repeatable_with_seed"] = Json{{"error", short_error(e)}};
  }

  run.result.headline = seeded.bitwise_equal && unseeded.bitwise_equal ? "eval outputs repeatable"
                        : seeded.bitwise_equal                         ? "eval outputs repeatable only with a seed"
                                                                       : "eval outputs not repeatable";
  if (!seeded.bitwise_equal) {
    run.find(kNondeterministic,
             "same input, same seed, different eval outputs (max |difference| " + format_number(seeded.max_abs) + ")" +
                 (buffers.empty() ? "" : "; the forward pass changes buffer `" + buffers.front() + "`"));
  } else if (!unseeded.bitwise_equal) {
    std::string why = !rng_ops.empty()   ? "the model draws random numbers in eval mode (" + rng_ops.front() + ")"
                      : !buffers.empty() ? "the forward pass changes buffer `" + buffers.front() + "`"
                                         : "the outputs depend on the random generator's state";
    run.find(kNondeterministic, "eval outputs change from run to run for the same input (max |difference| " +
                                    format_number(unseeded.max_abs) + "): " + why);
  }

  // torch.use_deterministic_algorithms(True) with cuDNN pinned to deterministic kernels.
  auto& ctx = at::globalContext();
  const bool prev_det = ctx.deterministicAlgorithms(), prev_warn = ctx.deterministicAlgorithmsWarnOnly();
  const bool prev_cudnn_det = ctx.deterministicCuDNN(), prev_bench = ctx.benchmarkCuDNN();
  ctx.setDeterministicAlgorithms(true, /*warn_only=*/false);
  ctx.setDeterministicCuDNN(true);
  ctx.setBenchmarkCuDNN(false);
  std::string failure;
  try {
    torch::jit::Module d = s.eval_copy();
    s.reseed();
    at::Tensor loss = s.surrogate_loss(d.forward(s.inputs()));
    if (loss.defined()) loss.backward();
    s.synchronize();
  } catch (const std::exception& e) {
    failure = short_error(e);
  }
  ctx.setDeterministicAlgorithms(prev_det, prev_warn);
  ctx.setDeterministicCuDNN(prev_cudnn_det);
  ctx.setBenchmarkCuDNN(prev_bench);
  const bool refused = failure.find("deterministic") != std::string::npos;
  Json algorithms{{"ok", failure.empty()}};
  if (refused) algorithms["op"] = nondeterministic_op(failure);
  if (!failure.empty() && !refused) algorithms["error"] = failure;  // failed for another reason: not a finding
  run.figures()["deterministic_algorithms"] = algorithms;
  if (refused) {
    run.find(kNondeterministic, "torch.use_deterministic_algorithms(True) fails on " + s.device().str() + ": " +
                                    nondeterministic_op(failure) + " has no deterministic implementation");
  }
}

}  // namespace torchlint::probe
