// TL304 unsafe-torch-load: torch.load that may unpickle arbitrary objects.
#include <unordered_set>

#include "catalog.h"
#include "python/rule.h"
#include "python/shared/call_edit.h"

namespace torchlint {
namespace python {
namespace {

constexpr TorchVersion kWeightsOnlyDefault{2, 6};  // torch.load defaults to weights_only=True from here

// `, weights_only=True` after the last argument (none for `torch.load()`, broken anyway).
std::optional<Fix> add_weights_only(const CallEvent& call) {
  return append_argument(call, "weights_only=True", "Add `weights_only=True`");
}

class UnsafeTorchLoad final : public Rule {
 public:
  // `torch.load` is judged; an earlier `torch.save` to the same constant path says the
  // program reads back its own output.
  static constexpr std::string_view kTriggers[] = {"load", "save"};

  void on_assign(const AssignEvent& event, RuleContext& ctx) override {
    const Syntax& syn = Syntax::get();
    if (ts_node_is_null(event.value) || syn.kind(event.target) != Kind::kIdentifier) return;
    std::string name(ctx.text(event.target));
    // `PATH = "./cifar_net.pth"`; rebound to anything else, it is no longer a constant.
    if (syn.kind(event.value) == Kind::kString && event.op == "=")
      constant_paths_.insert(name);
    else
      constant_paths_.erase(name);
    saved_.erase("=" + name);
  }

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    if (call.qualname == api::kTorchSave) {
      TSNode path = call.keyword("f", ctx.model().source());
      if (ts_node_is_null(path)) path = call.positional(1);
      if (constant_path(path, ctx)) saved_.insert(path_key(path, ctx));
      return;
    }
    if (call.qualname != api::kTorchLoad) return;
    // The tutorial's `torch.save(net.state_dict(), PATH)` ... `torch.load(PATH)`: the file
    // was written by this program a moment before (a resume that loads before any save is
    // still judged: that file may come from anywhere).
    TSNode path = call.keyword("f", ctx.model().source());
    if (ts_node_is_null(path)) path = call.positional(0);
    if (constant_path(path, ctx) && saved_.contains(path_key(path, ctx))) return;
    TSNode weights_only = call.keyword("weights_only", ctx.model().source());
    if (!ts_node_is_null(weights_only)) {
      if (Syntax::get().kind(weights_only) == Kind::kFalse) {
        pending_.push_back({call.node,
                            "`torch.load(..., weights_only=False)` unpickles arbitrary objects: loading an untrusted "
                            "checkpoint runs its code; load with `weights_only=True` (allowlist extra types with "
                            "`torch.serialization.add_safe_globals`)",
                            std::nullopt});
      }
      return;  // True, or a value torchlint cannot decide
    }
    if (call.has_kwargs_splat || ctx.options().target_torch >= kWeightsOnlyDefault) return;
    bool pickle_module = !ts_node_is_null(call.keyword("pickle_module", ctx.model().source())) ||
                         call.positional_count() >= 3 || call.has_args_splat;
    pending_.push_back({call.node,
                        "`torch.load` without `weights_only=True` unpickles arbitrary objects before torch 2.6 "
                        "(target-torch " +
                            ctx.options().target_torch.str() + "): loading an untrusted checkpoint runs its code",
                        pickle_module ? std::nullopt : add_weights_only(call)});
  }

  // A pytest module (a test file by name that defines `test_*` functions) loads the
  // fixtures its tests are given: not where untrusted files arrive. A script that is only
  // named `test_*.py` (`test_on_image.py`) is still judged.
  void on_function_end(const FunctionState& fn, RuleContext&) override {
    if (fn.name.starts_with("test")) defines_tests_ = true;
  }

  void on_module_end(RuleContext& ctx) override {
    if (!(ctx.model().is_pytest_file() && defines_tests_)) {
      for (auto& p : pending_) ctx.report(p.node, std::move(p.message), std::move(p.fix));
    }
    pending_.clear();
    defines_tests_ = false;
    saved_.clear();
    constant_paths_.clear();
  }

 private:
  // What a constant path is compared by: a literal's value (quotes do not matter), or the
  // name bound to one ("=PATH").
  static std::string path_key(TSNode path, RuleContext& ctx) {
    std::string_view value;
    if (string_literal_value(path, ctx.model().source(), value)) return std::string(value);
    return "=" + std::string(ctx.text(path));
  }

  // A string literal, or a name bound only to one so far in this file.
  bool constant_path(TSNode path, RuleContext& ctx) const {
    if (ts_node_is_null(path)) return false;
    Kind k = Syntax::get().kind(path);
    return k == Kind::kString || (k == Kind::kIdentifier && constant_paths_.contains(std::string(ctx.text(path))));
  }

  struct Pending {
    TSNode node;
    std::string message;
    std::optional<Fix> fix;
  };
  std::vector<Pending> pending_;
  bool defines_tests_ = false;
  std::unordered_set<std::string> saved_;           // constant paths torch.save wrote so far
  std::unordered_set<std::string> constant_paths_;  // names bound to a string literal
};

}  // namespace
}  // namespace python

python::RuleEntry unsafe_torch_load_rule() {
  return python::rule_entry<python::UnsafeTorchLoad>(catalog_entry("TL304"));
}

}  // namespace torchlint
