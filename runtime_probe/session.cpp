#include "session.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/jit/passes/inliner.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <tuple>

#include "cuda_support.h"
#include "dtypes.h"

namespace torchlint::probe {

namespace {

// `__torch__.torch.nn.modules.linear.___torch_mangle_3.Linear` -> `Linear`, but only for
// torch.nn's own modules: user classes are not layer kinds.
std::optional<std::string> torch_nn_kind(const torch::jit::Module& m) {
  auto name = m.type()->name();
  if (!name) return std::nullopt;
  const std::string qualified = name->qualifiedName();
  if (qualified.rfind("__torch__.torch.nn.", 0) != 0) return std::nullopt;
  return qualified.substr(qualified.rfind('.') + 1);
}

void walk_nodes(torch::jit::Block* block, const std::function<void(torch::jit::Node*)>& visit) {
  for (torch::jit::Node* node : block->nodes()) {
    visit(node);
    for (torch::jit::Block* inner : node->blocks()) walk_nodes(inner, visit);
  }
}

// Devices written into the forward graph as constants (`x.to("cuda:0")`, traced `.cuda()`):
// such a model runs on those devices whatever map_location it was loaded with.
std::vector<std::string> baked_devices(const torch::jit::Module& model) {
  std::set<std::string> devices;
  auto method = model.find_method("forward");
  if (!method) return {};
  auto graph = method->graph()->copy();
  torch::jit::Inline(*graph);
  walk_nodes(graph->block(), [&](torch::jit::Node* node) {
    if (node->kind() != c10::prim::Constant || node->outputs().size() != 1) return;
    if (node->output()->type()->kind() != c10::TypeKind::DeviceObjType) return;
    auto value = torch::jit::toIValue(node->output());
    if (value && value->isDevice() && !value->toDevice().is_cpu()) devices.insert(value->toDevice().str());
  });
  return {devices.begin(), devices.end()};
}

}  // namespace

bool ModelInventory::has(std::string_view kind_prefix) const {
  return std::any_of(layer_kinds.begin(), layer_kinds.end(),
                     [&](const auto& kv) { return kv.first.rfind(kind_prefix, 0) == 0; });
}

ModelInventory take_inventory(const torch::jit::Module& model) {
  ModelInventory inv;
  // Tied weights (an embedding shared with the output layer) are one tensor under two
  // names: count storage ranges, not names (torchinfo and DeepSpeed do the same).
  std::set<std::tuple<const void*, int64_t, int64_t>> seen;
  for (const auto& p : model.named_parameters(/*recurse=*/true)) {
    const at::Tensor& t = p.value;
    auto key = std::make_tuple(t.storage().data(), t.storage_offset(), t.numel());
    if (!seen.insert(key).second) {
      ++inv.tied_tensors;
      continue;
    }
    const uint64_t bytes = t.numel() * t.element_size();
    ++inv.parameter_tensors;
    inv.parameters += t.numel();
    inv.parameter_bytes += bytes;
    inv.bytes_by_dtype[dtype_name(t.scalar_type())] += bytes;
    if (t.requires_grad()) {
      ++inv.trainable_tensors;
      inv.trainable_parameters += t.numel();
      inv.trainable_bytes += bytes;
    }
  }
  for (const auto& b : model.named_buffers(/*recurse=*/true)) {
    const uint64_t bytes = b.value.numel() * b.value.element_size();
    ++inv.buffers;
    inv.buffer_bytes += bytes;
    inv.bytes_by_dtype[dtype_name(b.value.scalar_type())] += bytes;
  }
  for (const auto& m : model.named_modules()) {
    ++inv.modules;
    if (m.value.is_training()) inv.modules_in_train_mode.push_back(m.name.empty() ? "(root)" : m.name);
    if (auto kind = torch_nn_kind(m.value)) ++inv.layer_kinds[*kind];
  }
  inv.device_constants = baked_devices(model);
  return inv;
}

Json ModelInventory::to_json() const {
  Json j;
  j["parameters"] = parameters;
  j["trainable_parameters"] = trainable_parameters;
  j["parameter_tensors"] = parameter_tensors;
  j["parameter_bytes"] = parameter_bytes;
  j["tied_tensors"] = tied_tensors;
  j["buffers"] = buffers;
  j["buffer_bytes"] = buffer_bytes;
  j["bytes_by_dtype"] = Json::object();
  for (const auto& [dtype, bytes] : bytes_by_dtype) j["bytes_by_dtype"][dtype] = bytes;
  j["modules"] = modules;
  j["modules_in_train_mode"] = modules_in_train_mode;
  j["layer_kinds"] = Json::object();
  for (const auto& [kind, n] : layer_kinds) j["layer_kinds"][kind] = n;
  j["device_constants"] = device_constants;
  return j;
}

std::vector<at::Tensor> output_tensors(const c10::IValue& output) {
  std::vector<at::Tensor> out;
  std::function<void(const c10::IValue&)> collect = [&](const c10::IValue& v) {
    if (v.isTensor()) {
      out.push_back(v.toTensor());
    } else if (v.isTuple()) {
      for (const auto& e : v.toTupleRef().elements()) collect(e);
    } else if (v.isList()) {
      for (const auto& e : v.toListRef()) collect(e);
    } else if (v.isGenericDict()) {
      for (const auto& kv : v.toGenericDict()) collect(kv.value());
    }
  };
  collect(output);
  return out;
}

Json Difference::to_json() const {
  Json j;
  j["comparable"] = comparable;
  if (!comparable) {
    j["why"] = why;
    return j;
  }
  j["bitwise_equal"] = bitwise_equal;
  j["allclose"] = allclose;
  j["max_abs"] = max_abs;
  j["max_rel"] = max_rel;
  j["cosine"] = cosine;
  j["nonfinite_reference"] = nonfinite_reference;
  j["nonfinite_other"] = nonfinite_other;
  j["argmax_agreement"] = argmax_agreement ? Json(*argmax_agreement) : Json(nullptr);
  return j;
}

Difference compare_outputs(const c10::IValue& reference, const c10::IValue& other, double rtol, double atol) {
  Difference d;
  const auto refs = output_tensors(reference);
  const auto others = output_tensors(other);
  if (refs.size() != others.size()) {
    d.comparable = false;
    d.why = std::to_string(refs.size()) + " output tensors against " + std::to_string(others.size());
    return d;
  }
  d.bitwise_equal = true;
  d.allclose = true;
  double max_ref = 0, dot = 0, norm_ref = 0, norm_other = 0;
  for (size_t i = 0; i < refs.size(); ++i) {
    if (refs[i].sizes() != others[i].sizes()) {
      d.comparable = false;
      d.why = "output " + std::to_string(i) + " has shape " + c10::str(others[i].sizes()) + " instead of " +
              c10::str(refs[i].sizes());
      return d;
    }
    if (refs[i].scalar_type() != others[i].scalar_type()) {
      d.bitwise_equal = false;
    } else if (d.bitwise_equal) {
      // at::equal says NaN != NaN; two runs that both give NaN at the same place are equal here.
      const at::Tensor r = refs[i], o = others[i].to(refs[i].device());
      d.bitwise_equal = at::isFloatingType(r.scalar_type())
                            ? ((r == o) | (at::isnan(r) & at::isnan(o))).all().item<bool>()
                            : at::equal(r, o);
    }
    at::Tensor a = refs[i].detach().to(at::kCPU, at::kDouble);
    at::Tensor b = others[i].detach().to(at::kCPU, at::kDouble);
    at::Tensor fa = at::isfinite(a), fb = at::isfinite(b);
    d.nonfinite_reference += a.numel() - fa.sum().item<int64_t>();
    d.nonfinite_other += b.numel() - fb.sum().item<int64_t>();
    // Non-finite values count as close only where both runs have the same one (NaN with NaN).
    at::Tensor both = fa & fb;
    at::Tensor neither = (~fa) & (~fb);
    at::Tensor same = (a == b) | (at::isnan(a) & at::isnan(b));
    if (!at::equal(fa, fb) || (neither & ~same).any().item<bool>()) d.allclose = false;
    if (a.numel() == 0) continue;
    at::Tensor av = a.masked_select(both), bv = b.masked_select(both);
    if (av.numel() > 0) {
      at::Tensor diff = (av - bv).abs();
      d.max_abs = std::max(d.max_abs, diff.max().item<double>());
      if ((diff > atol + rtol * av.abs()).any().item<bool>()) d.allclose = false;
      dot += (av * bv).sum().item<double>();
      norm_ref += (av * av).sum().item<double>();
      norm_other += (bv * bv).sum().item<double>();
    }
    at::Tensor finite_ref = a.masked_select(fa);
    if (finite_ref.numel() > 0) max_ref = std::max(max_ref, finite_ref.abs().max().item<double>());
    if (!d.argmax_agreement && a.dim() == 2 && a.size(1) >= 2 && a.size(0) > 0) {
      d.argmax_agreement = (a.argmax(1) == b.argmax(1)).to(at::kDouble).mean().item<double>();
    }
  }
  d.max_rel = max_ref > 0 ? d.max_abs / max_ref : (d.max_abs > 0 ? INFINITY : 0.0);
  if (norm_ref > 0 && norm_other > 0) {
    d.cosine = dot / std::sqrt(norm_ref * norm_other);
  } else {
    d.cosine = (norm_ref == 0 && norm_other == 0) ? 1.0 : 0.0;
  }
  return d;
}

Json LatencyStats::to_json() const {
  Json j;
  j["runs"] = runs;
  j["p50_ms"] = p50_ms;
  j["p99_ms"] = p99_ms;
  j["mean_ms"] = mean_ms;
  j["min_ms"] = min_ms;
  j["cv"] = cv;
  return j;
}

namespace {

// Module::deepcopy clones every tensor; under grad mode a clone of a parameter that requires
// grad is a non-leaf, whose .grad backward() never fills. Copy without autograd, then give
// the parameters back their requires_grad flags: leaves, like the original's.
torch::jit::Module copy_module(const torch::jit::Module& m) {
  torch::jit::Module copy;
  {
    torch::NoGradGuard no_grad;
    copy = m.deepcopy();
  }
  auto originals = m.parameters(/*recurse=*/true);
  auto copies = copy.parameters(/*recurse=*/true);
  for (auto o = originals.begin(), c = copies.begin(); o != originals.end() && c != copies.end(); ++o, ++c) {
    (*c).requires_grad_((*o).requires_grad());
  }
  return copy;
}

}  // namespace

ProbeSession::ProbeSession(const ProbeOptions& options, c10::Device device, torch::jit::Module model)
    : options_(options), device_(device), model_(std::move(model)) {
  eval_model_ = eval_copy();
  inventory_ = take_inventory(model_);
}

torch::jit::Module ProbeSession::eval_copy() const {
  torch::jit::Module m = copy_module(model_);
  m.eval();
  return m;
}

torch::jit::Module ProbeSession::train_copy() const {
  torch::jit::Module m = copy_module(model_);
  m.train(true);
  return m;
}

std::vector<c10::IValue> ProbeSession::inputs_at(std::optional<int64_t> batch) const {
  std::vector<c10::IValue> values;
  for (size_t i = 0; i < options_.inputs.size(); ++i) {
    const InputSpec& spec = options_.inputs[i];
    std::vector<int64_t> shape = spec.shape;
    if (batch && !shape.empty()) shape[0] = *batch;
    const at::ScalarType dtype = scalar_type(spec.dtype);
    // One generator per input, seeded from --seed and the input's position: the values do
    // not depend on which check asks, or on the global generator's state.
    at::Generator gen = at::detail::createCPUGenerator(options_.seed * 7919 + i + 1);
    at::Tensor t;
    if (at::isFloatingType(dtype)) {
      t = spec.low ? at::empty(shape, at::kFloat).uniform_(*spec.low, *spec.high, gen) : at::randn(shape, gen);
    } else {
      const int64_t low = spec.low ? static_cast<int64_t>(*spec.low) : 0;
      const int64_t high = spec.high ? static_cast<int64_t>(*spec.high) : 2;
      t = at::randint(low, high, shape, gen, at::TensorOptions().dtype(at::kLong));
    }
    values.emplace_back(t.to(device_, dtype));
  }
  return values;
}

std::vector<int64_t> ProbeSession::batch_sizes() const {
  if (!options_.batch_sizes.empty()) return options_.batch_sizes;
  if (!options_.inputs.empty() && !options_.inputs[0].shape.empty()) return {options_.inputs[0].shape[0]};
  return {1};
}

void ProbeSession::reseed() const { at::manual_seed(options_.seed); }

void ProbeSession::synchronize() const {
  if (on_cuda()) cuda::synchronize(device_.index());
}

c10::IValue ProbeSession::run(torch::jit::Module& module, const std::vector<c10::IValue>& inputs) const {
  reseed();
  torch::NoGradGuard no_grad;
  c10::IValue out = module.forward(inputs);
  synchronize();
  return out;
}

at::Tensor ProbeSession::surrogate_loss(const c10::IValue& output) const {
  at::Generator gen = at::detail::createCPUGenerator(options_.seed + 104729);
  at::Tensor loss;
  for (const at::Tensor& t : output_tensors(output)) {
    if (!at::isFloatingType(t.scalar_type()) || !t.requires_grad()) continue;
    at::Tensor weights = at::randn(t.sizes(), gen).to(t.device());
    at::Tensor term = (t.to(at::kFloat) * weights).sum();
    loss = loss.defined() ? loss + term : term;
  }
  return loss;
}

LatencyStats ProbeSession::time_forward(torch::jit::Module& module, const std::vector<c10::IValue>& inputs, int warmup,
                                        int runs, double seconds, int min_runs) const {
  using Clock = std::chrono::steady_clock;
  c10::InferenceMode inference;
  const auto seconds_since = [](Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  // Warm-up pays for lazy initialisation, the profiling executor's first runs and (on GPU)
  // cuDNN autotuning; it gets at most a third of the time budget.
  const auto warm_start = Clock::now();
  for (int i = 0; i < warmup && (i == 0 || seconds_since(warm_start) < seconds / 3); ++i) module.forward(inputs);
  synchronize();

  std::vector<double> ms;
  const auto start = Clock::now();
  while (static_cast<int>(ms.size()) < runs &&
         (static_cast<int>(ms.size()) < min_runs || seconds_since(start) < seconds)) {
    if (on_cuda()) {
      ms.push_back(cuda::time_ms(device_.index(), [&] { module.forward(inputs); }));
    } else {
      const auto t0 = Clock::now();
      module.forward(inputs);
      ms.push_back(seconds_since(t0) * 1e3);
    }
  }
  LatencyStats s;
  s.runs = static_cast<int>(ms.size());
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  const auto nearest_rank = [&](double q) {
    size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(ms.size())));
    return ms[std::min(ms.size(), std::max<size_t>(rank, 1)) - 1];
  };
  s.p50_ms = nearest_rank(0.50);
  s.p99_ms = nearest_rank(0.99);
  s.min_ms = ms.front();
  double sum = 0, sq = 0;
  for (double v : ms) sum += v;
  s.mean_ms = sum / static_cast<double>(ms.size());
  for (double v : ms) sq += (v - s.mean_ms) * (v - s.mean_ms);
  s.cv = s.mean_ms > 0 ? std::sqrt(sq / static_cast<double>(ms.size())) / s.mean_ms : 0;
  return s;
}

std::string short_error(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  std::string text = c10_error ? c10_error->what_without_backtrace() : e.what();
  // The TorchScript interpreter wraps the real error after a traceback of the scripted code:
  // the last "...Error: " line is the one that says what happened.
  std::string line;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    std::string candidate = text.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
    if (auto colon = candidate.find("Error: "); colon != std::string::npos && candidate.find(' ') > colon) {
      line = candidate.substr(colon + 7);
    }
    if (eol == std::string::npos) break;
    pos = eol + 1;
  }
  if (line.empty()) {
    size_t start = text.find_first_not_of(" \n");
    line = start == std::string::npos ? "" : text.substr(start, text.find('\n', start) - start);
  }
  if (line.size() > 300) line = line.substr(0, 297) + "...";
  return line;
}

}  // namespace torchlint::probe
