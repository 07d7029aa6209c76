// TL108 eval-mode-missing (C++): inference (a forward pass under NoGradGuard /
// InferenceMode, in a function that does not train) of a model with dropout or batch
// norm, when nothing in the program puts a model of that class in eval mode.
#include "cpp/torch_api.h"

namespace torchlint::cpp {
namespace tl108 {
using namespace api;

// Dropout and batch norm behave differently in training mode.
bool mode_dependent(const CXXRecordDecl* impl, int depth = 0) {
  if (!impl || depth > 4 || !(impl = impl->getDefinition())) return false;
  static const std::set<std::string> layers = {
      "torch::nn::DropoutImpl",      "torch::nn::Dropout2dImpl",           "torch::nn::Dropout3dImpl",
      "torch::nn::AlphaDropoutImpl", "torch::nn::FeatureAlphaDropoutImpl", "torch::nn::BatchNorm1dImpl",
      "torch::nn::BatchNorm2dImpl",  "torch::nn::BatchNorm3dImpl"};
  if (layers.contains(impl->getQualifiedNameAsString())) return true;
  if (impl->getQualifiedNameAsString().starts_with("torch::")) return false;  // Sequential etc.: contents unknown
  for (const FieldDecl* f : impl->fields()) {
    if (mode_dependent(module_impl(f->getType()), depth + 1)) return true;
  }
  return false;
}

class EvalModeMissing final : public Rule {
 public:
  using Rule::Rule;
  void register_matchers(MatchFinder& f) override {
    f.addMatcher(forward_call().bind("forward"), this);
    f.addMatcher(model_call("eval").bind("eval"), this);
    f.addMatcher(model_call("train").bind("train"), this);
    f.addMatcher(optimizer_call("step").bind("trains"), this);
    f.addMatcher(backward_call().bind("trains"), this);
    f.addMatcher(callExpr(callee(functionDecl(hasAnyName("::torch::load", "::torch::jit::load")))).bind("load"), this);
  }
  void run(const MatchFinder::MatchResult& r) override {
    ASTContext& ast = *r.Context;
    if (auto* c = r.Nodes.getNodeAs<CallExpr>("forward")) forwards_.push_back(c);
    const CXXMemberCallExpr* mode = r.Nodes.getNodeAs<CXXMemberCallExpr>("eval");
    if (auto* t = r.Nodes.getNodeAs<CXXMemberCallExpr>("train");
        t && t->getNumArgs() >= 1 && !isa<CXXDefaultArgExpr>(t->getArg(0)) && !is_true_literal(t->getArg(0))) {
      mode = t;  // train(false), or a mode from a variable: someone decides
    }
    if (mode) {
      if (const CXXRecordDecl* impl = module_impl(mode->getImplicitObjectArgument()->IgnoreImpCasts()->getType()))
        eval_classes_.insert(impl->getCanonicalDecl());
      eval_calls_.push_back(mode);
    }
    if (auto* c = r.Nodes.getNodeAs<CallExpr>("trains")) {
      has_weights_ = true;
      if (const Decl* fn = enclosing_callable(c, ast)) training_functions_.insert(fn);
    }
    if (r.Nodes.getNodeAs<CallExpr>("load")) has_weights_ = true;
  }
  void finish() override {
    if (!has_weights_) return;  // an untrained, unloaded model: nothing to evaluate yet
    ASTContext& ast = ctx_.ast();
    std::set<const ValueDecl*> reported;
    for (const CallExpr* fwd : forwards_) {
      const ValueDecl* model = call_object(fwd);
      if (!model || reported.contains(model)) continue;
      const CXXRecordDecl* impl = module_impl(model->getType());
      if (!impl || eval_classes_.contains(impl->getCanonicalDecl()) || !mode_dependent(impl)) continue;
      const Decl* fn = enclosing_callable(fwd, ast);
      if (!fn || training_functions_.contains(fn) || !in_no_grad_scope(fwd, ast)) continue;
      // The model's own forward calling a submodule is not inference code.
      if (auto* method = dyn_cast<CXXMethodDecl>(fn); method && module_impl(ast.getRecordType(method->getParent())))
        continue;
      reported.insert(model);
      ctx_.report("TL108", fwd,
                  "inference with `" + model->getNameAsString() +
                      "` (dropout/batch norm) in training mode: nothing calls "
                      "`eval()` on it, so dropout stays active and batch norm uses batch statistics; call `" +
                      model->getNameAsString() + "->eval()` first");
    }
  }

 private:
  std::vector<const CallExpr*> forwards_;
  std::vector<const CXXMemberCallExpr*> eval_calls_;
  std::set<const Decl*> eval_classes_;
  std::set<const Decl*> training_functions_;
  bool has_weights_ = false;
};

}  // namespace tl108
std::unique_ptr<Rule> make_eval_mode_missing(Context& c) { return std::make_unique<tl108::EvalModeMissing>(c); }
}  // namespace torchlint::cpp
