// quantize: what dynamic int8 quantization (torch.ao.quantization.quantize_dynamic's recipe:
// int8 weights, activations quantized on the fly) would give this model: size and latency
// before and after, and how far the outputs move. Information for the deployment checklist
// item, never a finding.
//
// LibTorch has no C++ entry point for quantize_dynamic, so the probe applies the recipe to
// the frozen graph itself: every aten::linear with a constant weight becomes
// quantized::linear_dynamic over a prepacked per-tensor-symmetric int8 weight, every
// aten::lstm becomes aten::quantized_lstm over dynamic cell params. The quantized kernels are
// CPU kernels, so this check runs on a CPU copy.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include "checks.h"

namespace torchlint::probe {

namespace {

c10::IValue call_op(const char* name, const char* overload, std::vector<c10::IValue> args) {
  const c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
  torch::jit::Stack stack(std::move(args));
  op.callBoxed(&stack);
  return stack.at(0);
}

// The engine quantize_dynamic would pick: x86/fbgemm on servers, then oneDNN, then QNNPACK.
std::optional<at::QEngine> pick_engine() {
  const auto& supported = at::globalContext().supportedQEngines();
  for (at::QEngine e : {at::QEngine::X86, at::QEngine::FBGEMM, at::QEngine::ONEDNN, at::QEngine::QNNPACK}) {
    if (std::find(supported.begin(), supported.end(), e) != supported.end()) return e;
  }
  return std::nullopt;
}

struct WeightBytes {
  uint64_t before = 0;  // float weights replaced
  uint64_t after = 0;   // int8 weights + a scale and zero point each
};

// int8, per-tensor symmetric (zero point 0), prepacked for the current engine.
c10::IValue pack_weight(const at::Tensor& w, const c10::optional<at::Tensor>& bias, WeightBytes& bytes) {
  const double max_abs = w.abs().max().item<double>();
  const double scale = max_abs > 0 ? max_abs / 127.0 : 1.0;
  at::Tensor qw = at::quantize_per_tensor(w.to(at::kFloat).contiguous(), scale, 0, at::kQInt8);
  bytes.before += w.nbytes();
  bytes.after += w.numel() + 8;
  return call_op("quantized::linear_prepack", "", {qw, bias ? c10::IValue(*bias) : c10::IValue()});
}

void for_each_node(torch::jit::Block* block, const std::function<void(torch::jit::Node*)>& fn) {
  std::vector<torch::jit::Node*> nodes(block->nodes().begin(), block->nodes().end());  // fn may destroy the node
  for (torch::jit::Node* n : nodes) {
    for (torch::jit::Block* inner : n->blocks()) for_each_node(inner, fn);
    fn(n);
  }
}

struct Rewrite {
  int linear = 0, lstm = 0;
  std::vector<std::string> skipped;  // layers left in float, with the reason
  WeightBytes bytes;
};

void quantize_linear(torch::jit::Graph& graph, torch::jit::Node* node, Rewrite& r) {
  auto weight = torch::jit::toIValue(node->input(1));
  if (!weight || !weight->isTensor() || weight->toTensor().dim() != 2) {
    r.skipped.push_back("aten::linear with a non-constant weight");
    return;
  }
  c10::optional<at::Tensor> bias;
  if (auto b = torch::jit::toIValue(node->input(2)); b && b->isTensor()) bias = b->toTensor().to(at::kFloat);
  torch::jit::WithInsertPoint at_node(node);
  torch::jit::Value* packed = graph.insertConstant(pack_weight(weight->toTensor(), bias, r.bytes));
  torch::jit::Value* out =
      graph.insert(c10::Symbol::fromQualString("quantized::linear_dynamic"), {node->input(0), packed});
  node->output()->replaceAllUsesWith(out);
  node->destroy();
  ++r.linear;
}

void quantize_lstm(torch::jit::Graph& graph, torch::jit::Node* node, Rewrite& r) {
  // aten::lstm.input(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
  auto params = torch::jit::toIValue(node->input(2));
  auto has_biases = torch::jit::toIValue(node->input(3));
  if (node->inputs().size() != 9 || !params || !params->isTensorList() || !has_biases) {
    r.skipped.push_back("aten::lstm with non-constant weights or packed sequences");
    return;
  }
  const auto tensors = params->toTensorVector();
  const size_t per_cell = has_biases->toBool() ? 4 : 2;
  torch::jit::WithInsertPoint at_node(node);
  std::vector<torch::jit::Value*> cells;
  for (size_t i = 0; i + per_cell <= tensors.size(); i += per_cell) {
    c10::IValue w_ih = pack_weight(tensors[i], c10::nullopt, r.bytes);
    c10::IValue w_hh = pack_weight(tensors[i + 1], c10::nullopt, r.bytes);
    at::Tensor b_ih = per_cell == 4 ? tensors[i + 2] : at::zeros({tensors[i].size(0)});
    at::Tensor b_hh = per_cell == 4 ? tensors[i + 3] : at::zeros({tensors[i].size(0)});
    cells.push_back(graph.insertConstant(
        call_op("quantized::make_quantized_cell_params_dynamic", "", {w_ih, w_hh, b_ih, b_hh, false})));
  }
  torch::jit::Node* list = graph.insertNode(graph.createList(cells.front()->type(), cells));
  std::vector<torch::jit::NamedValue> args = {node->input(0), node->input(1), list->output()};
  for (size_t i = 3; i < 9; ++i) args.emplace_back(node->input(i));
  torch::jit::Value* packed =
      graph.insert(c10::Symbol::fromQualString("aten::quantized_lstm"), args,
                   {torch::jit::NamedValue("dtype", at::kQInt8), torch::jit::NamedValue("use_dynamic", true)});
  // A multi-output op comes back packed in a tuple: take its elements, drop the tuple.
  torch::jit::Node* tuple = packed->node();
  for (size_t i = 0; i < node->outputs().size(); ++i) node->output(i)->replaceAllUsesWith(tuple->input(i));
  tuple->destroy();
  node->destroy();
  ++r.lstm;
}

}  // namespace

void quantize_check(CheckRun& run) {
  ProbeSession& s = run.session;
  const ModelInventory& inv = s.inventory();
  if (!inv.has("Linear") && !inv.has("LSTM")) return run.skip("no Linear or LSTM layer to quantize");
  const std::optional<at::QEngine> engine = pick_engine();
  if (!engine) return run.skip("this LibTorch has no quantized engine");
  run.figures()["engine"] = c10::toString(*engine);

  torch::jit::Module cpu_model = s.eval_copy();
  if (s.on_cuda()) cpu_model.to(at::kCPU);
  std::vector<c10::IValue> inputs;
  for (const auto& v : s.inputs()) inputs.emplace_back(v.toTensor().cpu());

  torch::jit::Module baseline, quantized;
  try {
    baseline = torch::jit::freeze(cpu_model);
    quantized = torch::jit::freeze(cpu_model);
  } catch (const std::exception& e) {
    return run.skip("the graph rewrite needs a frozen model, and freeze fails (see export): " + short_error(e));
  }
  const at::QEngine previous = at::globalContext().qEngine();
  at::globalContext().setQEngine(*engine);
  Rewrite r;
  try {
    auto graph = quantized.get_method("forward").graph();
    for_each_node(graph->block(), [&](torch::jit::Node* n) {
      const std::string kind = n->kind().toQualString();
      if (kind == "aten::linear") quantize_linear(*graph, n, r);
      if (kind == "aten::lstm") quantize_lstm(*graph, n, r);
    });
    torch::jit::EliminateDeadCode(graph);
  } catch (...) {
    at::globalContext().setQEngine(previous);
    throw;
  }
  run.figures()["quantized_layers"] = Json{{"linear", r.linear}, {"lstm", r.lstm}};
  run.figures()["left_in_float"] = r.skipped;
  if (r.linear + r.lstm == 0) {
    at::globalContext().setQEngine(previous);
    run.result.headline = "nothing quantizable";
    return;
  }

  const Difference d = compare_outputs(s.run(baseline, inputs), s.run(quantized, inputs));
  const LatencyStats before = s.time_forward(baseline, inputs, 3, 50, 1.0, 5);
  const LatencyStats after = s.time_forward(quantized, inputs, 3, 50, 1.0, 5);
  at::globalContext().setQEngine(previous);

  const uint64_t model_before = inv.parameter_bytes;
  const uint64_t model_after = model_before - r.bytes.before + r.bytes.after;
  run.figures()["weight_bytes"] = Json{{"before", r.bytes.before}, {"after", r.bytes.after}};
  run.figures()["parameter_bytes"] = Json{{"before", model_before}, {"after", model_after}};
  run.figures()["latency_cpu"] = Json{{"before", before.to_json()},
                                      {"after", after.to_json()},
                                      {"speedup", after.p50_ms > 0 ? before.p50_ms / after.p50_ms : 0.0}};
  run.figures()["output_difference"] = d.to_json();
  run.result.headline = std::to_string(r.linear) + " Linear, " + std::to_string(r.lstm) +
                        " LSTM: " + format_bytes(model_before) + " -> " + format_bytes(model_after) + ", p50 " +
                        format_number(before.p50_ms) + " -> " + format_number(after.p50_ms) + " ms, rel error " +
                        format_number(d.max_rel, 2);
}

}  // namespace torchlint::probe
