// torchlint-probe on the fixture models of fixtures/models/make.py (made by the real torch
// into the build tree): every CPU check, with assertions on its figures, and the command
// line's exit codes and JSON. Runs in-process through run_probe (the light interface: this
// file does not include LibTorch), plus a few runs of the binary.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "catalog.h"
#include "findings.h"
#include "options.h"
#include "probe.h"

using namespace torchlint::probe;

namespace {

const std::string kModels = TORCHLINT_PROBE_MODELS;

InputSpec spec(const std::string& text) {
  std::string error;
  auto s = parse_input_spec(text, error);
  REQUIRE_MESSAGE(s, error);
  return *s;
}

ProbeOptions options_for(const std::string& model, const std::string& input, std::vector<std::string> checks = {}) {
  ProbeOptions o;
  o.model_path = kModels + "/" + model;
  o.inputs = {spec(input)};
  o.checks = std::move(checks);
  // Short latency runs: the figures are asserted for shape, not for speed.
  o.warmup_runs = 2;
  o.timed_runs = 20;
  o.seconds_per_batch = 0.1;
  return o;
}

Report probe(const ProbeOptions& o) {
  Report r = run_probe(o);
  INFO("fatal: " << r.fatal);
  return r;
}

const CheckResult& check(const Report& r, const std::string& name) {
  for (const auto& c : r.checks) {
    if (c.name == name) return c;
  }
  FAIL("no check " << name);
  throw std::logic_error("unreachable");
}

std::vector<std::string> codes(const Report& r) {
  std::vector<std::string> out;
  for (const auto& f : r.findings) out.push_back(f.code);
  return out;
}

bool has_code(const Report& r, const std::string& code) {
  auto c = codes(r);
  return std::find(c.begin(), c.end(), code) != c.end();
}

std::string message_of(const Report& r, const std::string& code) {
  for (const auto& f : r.findings) {
    if (f.code == code) return f.message;
  }
  return "";
}

// Runs the binary; returns its exit status and stdout.
std::pair<int, std::string> run_cli(const std::string& args) {
  const std::string out_path = "probe_cli_out.txt";
  const int status =
      std::system((std::string(TORCHLINT_PROBE_BINARY) + " " + args + " > " + out_path + " 2>/dev/null").c_str());
  std::ifstream in(out_path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::remove(out_path.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ss.str()};
}

}  // namespace

TEST_CASE("option values parse, and bad ones say why") {
  std::string error;
  auto x = parse_input_spec("x:1x3x224x224:float32", error);
  REQUIRE(x);
  CHECK(x->name == "x");
  CHECK(x->shape == std::vector<int64_t>{1, 3, 224, 224});
  CHECK(x->dtype == "float32");
  auto tokens = parse_input_spec("tokens:8x128:int64:0..32000", error);
  REQUIRE(tokens);
  CHECK(*tokens->low == 0);
  CHECK(*tokens->high == 32000);
  CHECK(parse_input_spec("x:4x16", error)->dtype == "float32");
  CHECK_FALSE(parse_input_spec("x", error));
  CHECK_FALSE(parse_input_spec("x:4x0", error));
  CHECK_FALSE(parse_input_spec("x:4x16:float8", error));
  CHECK(error.find("unknown dtype") != std::string::npos);
  CHECK_FALSE(parse_input_spec("x:4x16:int64:5..1", error));
  CHECK_FALSE(parse_input_spec("1x:4", error));

  CHECK(*parse_byte_size("16GiB", error) == 16ull << 30);
  CHECK(*parse_byte_size("16G", error) == 16ull << 30);
  CHECK(*parse_byte_size("2GB", error) == 2'000'000'000ull);
  CHECK(*parse_byte_size("1.5KiB", error) == 1536);
  CHECK(*parse_byte_size("4096", error) == 4096);
  CHECK_FALSE(parse_byte_size("lots", error));
  CHECK_FALSE(parse_byte_size("16 parsecs", error));

  CHECK(*parse_batch_sizes("1,8,32,8", error) == std::vector<int64_t>{1, 8, 32});
  CHECK_FALSE(parse_batch_sizes("1,0", error));
  CHECK(parse_check_list("amp,memory", error)->size() == 2);
  CHECK(parse_check_list("all", error)->size() == std::size(kCheckNames));
  CHECK_FALSE(parse_check_list("amp,speed", error));
  CHECK(*parse_optimizer("adamw", error) == OptimizerKind::kAdamW);
  CHECK_FALSE(parse_optimizer("lion", error));
}

TEST_CASE("a finding takes its name and severity from the catalog") {
  const Finding f = make_finding(kNonFiniteOutput, "finite", "NaN");
  CHECK(f.name == "non-finite-output");
  CHECK(f.severity == torchlint::Severity::kError);
  CHECK_THROWS(make_finding("TL999", "finite", "undeclared"));
}

TEST_CASE("a clean MLP passes every CPU check, with the expected figures") {
  const Report r = probe(options_for("mlp.pt", "x:4x16:float32"));
  REQUIRE(r.fatal.empty());
  CHECK(r.exit_code() == 0);
  CHECK(codes(r) == std::vector<std::string>{"TL908"});

  // Summary: Linear(16, 32) + Linear(32, 4).
  CHECK(r.summary["parameters"] == 676);
  CHECK(r.summary["parameter_bytes"] == 2704);
  CHECK(r.summary["parameter_tensors"] == 4);
  CHECK(r.summary["modules"] == 3);
  CHECK(r.summary["layer_kinds"]["Linear"] == 2);
  CHECK(r.summary["modules_in_train_mode"].empty());
  CHECK(r.model["forward"] == "forward(x)");
  CHECK(r.model["outputs"][0]["shape"] == Json::array({4, 4}));

  for (const char* name : {"mode", "finite", "determinism", "amp", "memory", "export", "quantize", "latency"}) {
    CAPTURE(name);
    CHECK(check(r, name).status == CheckStatus::kPassed);
  }
  // Every probe rule of the catalog is reported by exactly one check, and the report says
  // which (the audit reads it there instead of keeping its own table).
  std::map<std::string, int> checks_per_rule;
  for (const CheckResult& c : r.checks) {
    if (c.rule.empty()) continue;
    CAPTURE(c.name);
    const torchlint::RuleInfo& info = torchlint::catalog_entry(c.rule);
    CHECK(info.languages == std::vector<torchlint::Language>{torchlint::Language::kProbe});
    CHECK_FALSE(info.doc.empty());
    ++checks_per_rule[info.code];
  }
  for (const torchlint::RuleInfo& info : torchlint::rule_catalog()) {
    if (info.languages != std::vector<torchlint::Language>{torchlint::Language::kProbe}) continue;
    CAPTURE(info.code);
    CHECK(checks_per_rule[info.code] == 1);
  }
  CHECK(r.to_json()["checks"]["amp"]["rule"] == "TL901");
  const Json& amp = check(r, "amp").figures["cpu_bfloat16"];
  CHECK(amp["passed"] == true);
  CHECK(amp["max_rel"].get<double>() > 0);  // bf16 does round
  CHECK(amp["max_rel"].get<double>() < 0.05);
  CHECK(amp["output_dtypes"][0] == "bfloat16");

  const Json& grads = check(r, "finite").figures["gradients"];
  CHECK(grads["mode"] == "train");
  CHECK(grads["unused_parameters"].empty());
  CHECK(grads["nonfinite_parameters"].empty());

  const Json& det = check(r, "determinism").figures;
  CHECK(det["eval_repeatable"] == true);
  CHECK(det["eval_repeatable_with_seed"] == true);
  CHECK(det["train_repeatable_with_seed"] == true);
  CHECK(det["deterministic_algorithms"]["ok"] == true);

  const Json& steps = check(r, "export").figures["steps"];
  for (const char* step : {"save_load", "freeze", "optimize_for_inference", "mobile", "mobile_flatbuffer"}) {
    CAPTURE(step);
    CHECK(steps[step]["ok"] == true);
  }
  CHECK(steps["save_load"]["max_abs"] == 0.0);
  CHECK(steps["freeze"]["parameters_left"] == 0);
  CHECK(steps["mobile"]["operators"].size() >= 2);
  CHECK(steps["onnx"]["ok"].is_null());

  const Json& q = check(r, "quantize").figures;
  CHECK(q["quantized_layers"]["linear"] == 2);
  CHECK(q["parameter_bytes"]["before"] == 2704);
  CHECK(q["parameter_bytes"]["after"] == 2704 - 2560 + 640 + 16);  // int8 weights + scale/zero point each
  CHECK(q["output_difference"]["max_rel"].get<double>() < 0.05);

  const Json& lat = check(r, "latency").figures["per_batch"];
  REQUIRE(lat.size() == 1);
  CHECK(lat[0]["batch"] == 4);
  CHECK(lat[0]["runs"].get<int>() >= 10);
  CHECK(lat[0]["p50_ms"].get<double>() > 0);
  CHECK(lat[0]["p99_ms"].get<double>() >= lat[0]["p50_ms"].get<double>());
  CHECK(lat[0]["throughput_per_s"].get<double>() > 0);

  CHECK(check(r, "benchmark").status == CheckStatus::kSkipped);
  CHECK(check(r, "benchmark").reason.find("needs CUDA") != std::string::npos);
}

TEST_CASE("memory: the static estimate for an MLP follows the optimizer formulas exactly") {
  // 676 fp32 parameters in 4 tensors: weights 2704 B, gradients 2704 B.
  const std::map<OptimizerKind, uint64_t> optimizer_bytes = {
      {OptimizerKind::kSgd, 0},
      {OptimizerKind::kMomentum, 2704},          // momentum_buffer
      {OptimizerKind::kAdam, 2 * 2704 + 4 * 4},  // exp_avg, exp_avg_sq + a 4-byte step per tensor
      {OptimizerKind::kAdamW, 2 * 2704 + 4 * 4},
      {OptimizerKind::kAmsgrad, 3 * 2704 + 4 * 4},  // + max_exp_avg_sq
  };
  for (const auto& [kind, bytes] : optimizer_bytes) {
    ProbeOptions o = options_for("mlp.pt", "x:4x16:float32", {"memory"});
    o.optimizer = kind;
    const Report r = probe(o);
    const Json& f = check(r, "memory").figures;
    CHECK(f["static"]["weights_and_buffers_bytes"] == 2704);
    CHECK(f["static"]["gradient_bytes"] == 2704);
    CHECK(f["static"]["optimizer_state_bytes"] == bytes);
    CHECK(f["static"]["static_training_bytes"] == 2704 + 2704 + bytes);
    CHECK(f["static"]["amp_cast_cache_bytes"] == 2 * 676);
    // Measured at batch 4 (and 8 for the line): the training prediction is weights +
    // optimizer state + the measured forward+backward peak, which holds the gradients.
    const Json& b4 = f["per_batch"][0];
    REQUIRE(b4["measured"] == true);
    CHECK(b4["forward_backward_peak_bytes"].get<int64_t>() >= 2704);
    CHECK(b4["forward_peak_bytes"].get<int64_t>() >= 4 * 32 * 4);  // at least the hidden activations
    CHECK(b4["predicted_training_bytes"] == 2704 + bytes + b4["forward_backward_peak_bytes"].get<int64_t>());
  }
}

TEST_CASE("memory: over the budget is TL902, with the largest batch that fits") {
  ProbeOptions o = options_for("mlp.pt", "x:4x16:float32", {"memory"});
  o.batch_sizes = {4, 64};
  o.memory_budget = 8 * 1024;  // less than weights + Adam state (8128 B) + anything
  Report r = probe(o);
  CHECK(has_code(r, "TL902"));
  CHECK(r.exit_code() == 1);
  CHECK(check(r, "memory").figures["max_batch"] == 0);
  CHECK(message_of(r, "TL902").find("over the budget of 8.0 KiB") != std::string::npos);

  o.memory_budget = 1ull << 30;
  r = probe(o);
  CHECK_FALSE(has_code(r, "TL902"));
  const Json& f = check(r, "memory").figures;
  CHECK(f["activation_bytes_per_sample"]["forward_backward"].get<double>() > 0);
  CHECK(f["max_batch"].get<int64_t>() > 100000);
  // Both requested sizes were measured: they are the two points of the line.
  CHECK(f["per_batch"][1]["measured"] == true);
  CHECK(f["per_batch"][1]["forward_backward_peak_bytes"].get<int64_t>() >
        f["per_batch"][0]["forward_backward_peak_bytes"].get<int64_t>());
}

TEST_CASE("amp: the fp16-overflow model is TL901 under CPU bfloat16") {
  const Report r = probe(options_for("overflow.pt", "x:4x16:float32", {"amp"}));
  CHECK(has_code(r, "TL901"));
  CHECK(r.exit_code() == 1);
  CHECK(check(r, "amp").status == CheckStatus::kFailed);
  const Json& bf16 = check(r, "amp").figures["cpu_bfloat16"];
  CHECK(bf16["passed"] == false);
  CHECK(bf16["max_rel"].get<double>() > 0.05);
  CHECK(message_of(r, "TL901").find("autocast bfloat16 (cpu)") != std::string::npos);
}

TEST_CASE("mode: a model saved in training mode is TL906; it is still probed in eval mode") {
  const Report r = probe(options_for("train_mode.pt", "x:4x16:float32", {"mode", "export", "determinism"}));
  CHECK(codes(r) == std::vector<std::string>{"TL906"});
  const Json& f = check(r, "mode").figures;
  CHECK(f["modules_in_train_mode"].size() == 5);
  CHECK(f["modules_in_train_mode"][0] == "(root)");
  CHECK(f["mode_dependent_layers"].contains("BatchNorm1d"));
  CHECK(f["mode_dependent_layers"].contains("Dropout"));
  CHECK(f["train_vs_eval"]["max_abs"].get<double>() > 0);
  CHECK(check(r, "export").status == CheckStatus::kPassed);  // exported after .eval()
}

TEST_CASE("mode: eval-mode dropout and batch norm differ from training mode without a finding") {
  const Report r = probe(options_for("cnn.pt", "x:2x3x16x16:float32", {"mode", "memory", "benchmark"}));
  CHECK(codes(r).empty());
  // A convolutional model, but no CUDA: cuDNN benchmark mode cannot be measured, so no TL903
  // (scripts/gpu-check.sh exercises it on a GPU).
  CHECK(check(r, "benchmark").status == CheckStatus::kSkipped);
  CHECK_FALSE(has_code(r, "TL903"));
  const Json& f = check(r, "mode").figures;
  CHECK(f["train_vs_eval"]["max_abs"].get<double>() > 0);
  CHECK(f["training_flag_read_by_code"] == false);
  CHECK(r.summary["buffers"] == 3);  // running_mean, running_var, num_batches_tracked
  CHECK(check(r, "memory").figures["activation_bytes_per_sample"]["forward"].get<double>() > 0);
}

TEST_CASE("determinism: random numbers in eval mode are TL905, naming the op") {
  const Report r = probe(options_for("random_in_eval.pt", "x:4x16:float32", {"determinism", "amp", "export"}));
  CHECK(codes(r) == std::vector<std::string>{"TL905"});
  const Json& f = check(r, "determinism").figures;
  CHECK(f["eval_repeatable"] == false);
  CHECK(f["eval_repeatable_with_seed"] == true);
  CHECK(f["random_ops"] == Json::array({"aten::dropout (train=True)"}));
  CHECK(message_of(r, "TL905").find("draws random numbers in eval mode") != std::string::npos);
  // Runs compared with each other are re-seeded, so the randomness is no AMP or export failure.
  CHECK(check(r, "amp").status == CheckStatus::kPassed);
  CHECK(check(r, "export").status == CheckStatus::kPassed);
}

TEST_CASE("export: a model freeze() refuses is TL904; quantization is skipped, not an error") {
  const Report r = probe(options_for("unfreezable.pt", "x:4x16:float32", {"export", "quantize", "finite"}));
  CHECK(has_code(r, "TL904"));
  CHECK(r.exit_code() == 1);
  const Json& steps = check(r, "export").figures["steps"];
  CHECK(steps["save_load"]["ok"] == true);
  CHECK(steps["freeze"]["ok"] == false);
  CHECK(steps["freeze"]["error"].get<std::string>().find("ModuleContainerIndex") != std::string::npos);
  CHECK(steps["optimize_for_inference"]["ok"] == false);
  CHECK(message_of(r, "TL904").find("freeze fails") != std::string::npos);
  CHECK(check(r, "quantize").status == CheckStatus::kSkipped);
  // Only one of the two heads runs for a given input: the other gets no gradient.
  CHECK(check(r, "finite").figures["gradients"]["unused_parameters"].size() == 2);
}

TEST_CASE("finite: NaN outputs are TL907, naming the first op that produced one") {
  const Report r = probe(options_for("nan_output.pt", "x:4x16:float32", {"finite", "determinism", "export"}));
  CHECK(codes(r) == std::vector<std::string>{"TL907"});  // NaN == NaN for repeatability and export
  CHECK(r.exit_code() == 1);
  const Json& f = check(r, "finite").figures;
  CHECK(f["nonfinite_outputs"].get<int64_t>() > 0);
  CHECK(f["first_nonfinite_op"] == "aten::log");
  CHECK(message_of(r, "TL907").find("`aten::log`") != std::string::npos);
}

TEST_CASE("quantize: Linear and LSTM layers are quantized dynamically") {
  const Report r = probe(options_for("lstm.pt", "x:2x5x8:float32", {"quantize"}));
  const Json& f = check(r, "quantize").figures;
  REQUIRE(check(r, "quantize").status == CheckStatus::kPassed);
  CHECK(f["quantized_layers"]["linear"] == 1);
  CHECK(f["quantized_layers"]["lstm"] == 1);
  CHECK(f["parameter_bytes"]["after"].get<uint64_t>() < f["parameter_bytes"]["before"].get<uint64_t>() / 2);
  CHECK(f["output_difference"]["comparable"] == true);
  CHECK(f["latency_cpu"]["after"]["runs"].get<int>() >= 5);
}

TEST_CASE("--checkpoint loads a state dict or a training checkpoint without unpickling") {
  for (const char* ckpt : {"mlp_b_state_dict.pt", "mlp_b_training.pt"}) {
    CAPTURE(ckpt);
    ProbeOptions o = options_for("mlp.pt", "x:4x16:float32", {"compare"});
    o.checkpoint_path = kModels + "/" + ckpt;
    o.compare_path = kModels + "/mlp_b.pt";  // the same weights, scripted
    const Report r = probe(o);
    REQUIRE(r.fatal.empty());
    CHECK(r.model["checkpoint"]["tensors_loaded"] == 4);
    CHECK(check(r, "compare").figures["outputs"]["bitwise_equal"] == true);
  }
  ProbeOptions o = options_for("mlp.pt", "x:4x16:float32", {"compare"});
  o.checkpoint_path = kModels + "/mlp_b_training.pt";
  o.compare_path = kModels + "/mlp_b.pt";
  const Report r = probe(o);
  CHECK(r.model["checkpoint"]["weights_at"] == "model_state_dict");
  CHECK(r.model["checkpoint"]["optimizer"] == "Adam/AdamW");

  // Without the checkpoint the two models differ.
  ProbeOptions plain = options_for("mlp.pt", "x:4x16:float32", {"compare"});
  plain.compare_path = kModels + "/mlp_b.pt";
  const Report differ = probe(plain);
  CHECK(check(differ, "compare").figures["outputs"]["max_abs"].get<double>() > 0);
  CHECK(check(differ, "compare").figures["latency_ratio"].get<double>() > 0);

  // A checkpoint of another architecture does not fit.
  ProbeOptions wrong = options_for("cnn.pt", "x:2x3x16x16:float32", {"mode"});
  wrong.checkpoint_path = kModels + "/mlp_b_state_dict.pt";
  const Report bad = probe(wrong);
  CHECK(bad.exit_code() == 2);
  CHECK(bad.fatal.find("mlp_b_state_dict.pt") != std::string::npos);
}

TEST_CASE("inputs the probe cannot run are fatal (exit 2) with the reason") {
  const std::map<std::string, std::string> expected = {
      {"whole_model.pt", "pickled whole model"},
      {"exported.pt2", "torch.export"},
      {"mlp_b_state_dict.pt", "not a model"},
      {"missing.pt", "No such file"},
  };
  for (const auto& [file, reason] : expected) {
    CAPTURE(file);
    const Report r = probe(options_for(file, "x:4x16:float32"));
    CHECK(r.exit_code() == 2);
    CHECK(r.fatal.find(reason) != std::string::npos);
  }
  ProbeOptions two = options_for("mlp.pt", "x:4x16:float32");
  two.inputs.push_back(spec("y:4x16"));
  CHECK(probe(two).fatal.find("forward takes 1 inputs") != std::string::npos);
  CHECK(probe(options_for("mlp.pt", "x:4x15")).fatal.find("forward fails on the given inputs") != std::string::npos);
  ProbeOptions gpu = options_for("mlp.pt", "x:4x16");
  gpu.device = "cuda";
  CHECK(probe(gpu).exit_code() == 2);
}

TEST_CASE("the command line: exit codes, JSON schema, text") {
  const std::string mlp = kModels + "/mlp.pt --input x:4x16 --seconds-per-batch 0.1 --timed-runs 20";
  auto [ok, json_text] = run_cli(mlp + " --checks mode,latency --output-format json");
  CHECK(ok == 0);
  const Json j = Json::parse(json_text);
  CHECK(j["schema"] == kSchema);
  for (const char* key :
       {"tool", "exit_code", "fatal", "seconds", "environment", "model", "summary", "checks", "findings", "warnings"}) {
    CAPTURE(key);
    CHECK(j.contains(key));
  }
  CHECK(j["checks"]["mode"]["status"] == "passed");
  CHECK(j["checks"]["latency"]["figures"]["per_batch"][0]["batch"] == 4);
  CHECK(j["findings"][0]["code"] == "TL908");
  CHECK(j["findings"][0]["severity"] == "info");

  auto [found, text] = run_cli(kModels + "/overflow.pt --input x:4x16 --checks amp");
  CHECK(found == 1);
  CHECK(text.find("TL901") != std::string::npos);
  CHECK(text.find("\x1b[") == std::string::npos);  // no colours into a file

  CHECK(run_cli(kModels + "/mlp.pt --input x:4x16:float8").first == 2);
  CHECK(run_cli(kModels + "/mlp.pt").first == 2);  // --input is required
  CHECK(run_cli(kModels + "/mlp.pt --input x:4x16 --checks speed").first == 2);
  auto [fatal, fatal_json] = run_cli(kModels + "/whole_model.pt --input x:4x16 --output-format json");
  CHECK(fatal == 2);
  CHECK(Json::parse(fatal_json)["fatal"].get<std::string>().find("pickled whole model") != std::string::npos);
}
