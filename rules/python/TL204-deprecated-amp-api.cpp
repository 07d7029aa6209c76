// TL204 deprecated-amp-api: torch.cuda.amp / torch.cpu.amp names deprecated in torch 2.4.
#include "catalog.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

constexpr TorchVersion kDeprecatedSince{2, 4};

// "torch.cuda.amp.autocast_mode.autocast" -> "autocast"
std::string_view api_name(std::string_view q) { return q.substr(q.rfind('.') + 1); }

// The callee is spelled `<torch>.<device>.amp.<name>` with `<torch>` bound to torch, so
// the replacement can reuse the user's own alias for torch.
std::optional<std::string> torch_alias(TSNode callee, const SemanticModel& model, const api::DeprecatedAmp& amp,
                                       std::string_view name) {
  std::string_view text = model.text(callee);
  std::string suffix = "." + std::string(amp.device) + ".amp." + std::string(name);
  if (!text.ends_with(suffix)) return std::nullopt;
  std::string_view root = text.substr(0, text.size() - suffix.size());
  const Binding* b = model.lookup(root);
  if (!b || b->kind != BindingKind::kImport || b->qualified_name != "torch") return std::nullopt;
  return std::string(root);
}

class DeprecatedAmpApi final : public Rule {
 public:
  // Every deprecated API lives in `torch.cuda.amp` or `torch.cpu.amp`.
  static constexpr std::string_view kTriggers[] = {"amp"};

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    if (!call.qualname || ctx.options().target_torch < kDeprecatedSince) return;
    auto amp = api::deprecated_amp(*call.qualname);
    if (!amp) return;
    std::string_view name = api_name(*call.qualname);
    std::optional<Fix> fix;
    auto root = torch_alias(call.callee, ctx.model(), *amp, name);
    bool args_ok = !call.has_args_splat && !ts_node_is_null(call.arguments) &&
                   (amp->positional_shift_safe || amp->decorator_keyword || call.positional_count() == 0);
    if (root && args_ok) {
      Fix f;
      f.message = "Use `" + std::string(amp->replacement) + "`";
      f.edits.push_back({ts_node_start_byte(call.callee), ts_node_end_byte(call.callee),
                         *root + std::string(amp->replacement).substr(5)});
      std::string device_arg = amp->decorator_keyword ? "device_type=\"" + std::string(amp->device) + "\""
                                                      : "\"" + std::string(amp->device) + "\"";
      bool empty = ts_node_named_child_count(call.arguments) == 0;
      uint32_t at = ts_node_start_byte(call.arguments) + 1;
      f.edits.push_back({at, at, empty ? device_arg : device_arg + ", "});
      fix = std::move(f);
    }
    ctx.report(call.node, message(*amp, name), std::move(fix));
  }

  void on_decorator(const DecoratorEvent& dec, RuleContext& ctx) override {
    if (!dec.qualname || ctx.options().target_torch < kDeprecatedSince) return;
    auto amp = api::deprecated_amp(*dec.qualname);
    if (!amp) return;
    std::string_view name = api_name(*dec.qualname);
    std::optional<Fix> fix;
    if (auto root = torch_alias(dec.node, ctx.model(), *amp, name); root && amp->decorator_keyword) {
      Fix f;
      f.message = "Use `" + std::string(amp->replacement) + "(device_type=\"" + std::string(amp->device) + "\")`";
      f.edits.push_back(
          {ts_node_start_byte(dec.node), ts_node_end_byte(dec.node),
           *root + std::string(amp->replacement).substr(5) + "(device_type=\"" + std::string(amp->device) + "\")"});
      fix = std::move(f);
    }
    ctx.report(dec.node, message(*amp, name), std::move(fix));
  }

 private:
  static std::string message(const api::DeprecatedAmp& amp, std::string_view name) {
    std::string old = "torch." + std::string(amp.device) + ".amp." + std::string(name);
    std::string replacement = amp.decorator_keyword
                                  ? std::string(amp.replacement) + "(device_type=\"" + std::string(amp.device) + "\")"
                                  : std::string(amp.replacement) + "(\"" + std::string(amp.device) + "\", ...)";
    return "`" + old + "` is deprecated since torch 2.4; use `" + replacement + "`";
  }
};

}  // namespace
}  // namespace python

python::RuleEntry deprecated_amp_api_rule() {
  return python::rule_entry<python::DeprecatedAmpApi>(catalog_entry("TL204"));
}

}  // namespace torchlint
