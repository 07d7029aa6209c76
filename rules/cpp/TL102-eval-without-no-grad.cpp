// TL102 eval-without-no-grad (C++): a forward pass in evaluation code outside a
// torch::NoGradGuard / c10::InferenceMode scope. Evaluation code, as on the Python side
// (rules/python/TL102): after `model->eval()` in the same function, in a function named
// for evaluation, or in a function every caller of which runs it in eval mode.
#include "cpp/torch_api.h"

namespace torchlint::cpp {
namespace tl102 {
using namespace api;

// The function's name says it evaluates (`evaluate`, `run_validation`, `testEpoch`):
// words split at underscores and at lower-to-upper case changes, as the Python rule's
// list. Generic verbs count only as the whole name (`generate_inputs` builds inputs).
bool has_evaluation_role(const std::string& name) {
  static const std::set<std::string> words = {"eval",        "evaluate",  "evaluation", "evaluating", "validate",
                                              "validation",  "valid",     "val",        "predict",    "prediction",
                                              "predictions", "inference", "infer",      "test",       "testing"};
  std::string all = ascii_lower(name);
  if (all == "sample" || all == "generate" || all == "sampling") return true;
  std::string word;
  for (size_t i = 0; i <= name.size(); ++i) {
    bool boundary = i == name.size() || name[i] == '_' ||
                    (i > 0 && std::isupper(static_cast<unsigned char>(name[i])) &&
                     std::islower(static_cast<unsigned char>(name[i - 1])));
    if (boundary) {
      if (words.contains(ascii_lower(word))) return true;
      word.clear();
    }
    if (i < name.size() && name[i] != '_') word += name[i];
  }
  return false;
}

// A made-up input of a literal shape (`torch::randn({1, 3, 32, 32})`), fed once outside
// any loop: a shape or smoke check, not an evaluation whose activations pile up.
bool is_literal_shape_tensor(const Expr* e) {
  for (int depth = 0; e && depth < 6; ++depth) {
    e = e->IgnoreImplicit()->IgnoreParens();
    if (auto* c = dyn_cast<CXXConstructExpr>(e); c && c->getNumArgs() == 1) {
      e = c->getArg(0);
      continue;
    }
    if (auto* ref = dyn_cast<DeclRefExpr>(e)) {  // a name bound to one
      auto* v = dyn_cast<VarDecl>(ref->getDecl());
      e = v && v->isLocalVarDecl() ? v->getInit() : nullptr;
      continue;
    }
    auto* call = dyn_cast<CallExpr>(e);
    const FunctionDecl* fn = call ? call->getDirectCallee() : nullptr;
    if (!fn) return false;
    static const std::set<std::string> makers = {"randn", "rand", "zeros", "ones", "empty", "full", "randint"};
    std::string q = fn->getQualifiedNameAsString();
    if (!(q.starts_with("at::") || q.starts_with("torch::")) || !makers.contains(fn->getNameAsString()) ||
        call->getNumArgs() == 0)
      return false;
    const Expr* shape = call->getArg(0)->IgnoreImplicit();
    while (auto* c = dyn_cast<CXXConstructExpr>(shape)) {
      if (c->getNumArgs() == 0) return false;
      shape = c->getArg(0)->IgnoreImplicit();
    }
    if (auto* s = dyn_cast<CXXStdInitializerListExpr>(shape)) shape = s->getSubExpr()->IgnoreImplicit();
    auto* list = dyn_cast<InitListExpr>(shape);
    if (!list || list->getNumInits() == 0) return false;
    for (const Expr* dim : list->inits()) {
      if (!isa<IntegerLiteral>(dim->IgnoreParenImpCasts())) return false;
    }
    return true;
  }
  return false;
}

const Expr* forward_input(const CallExpr* c) {
  if (isa<CXXOperatorCallExpr>(c)) return c->getNumArgs() >= 2 ? c->getArg(1) : nullptr;
  return c->getNumArgs() >= 1 ? c->getArg(0) : nullptr;
}

class EvalWithoutNoGrad final : public Rule {
 public:
  using Rule::Rule;
  void register_matchers(MatchFinder& f) override {
    graph_.add_matchers(f, this);
    f.addMatcher(model_call("eval").bind("eval"), this);
    f.addMatcher(model_call("train").bind("train"), this);
    f.addMatcher(forward_call().bind("forward"), this);
    f.addMatcher(callExpr(callee(functionDecl(hasName("::c10::GradMode::set_enabled")))).bind("grad_mode"), this);
    // Gradients are wanted where these run: fine-tuning with batch norm frozen by eval(),
    // saliency maps, style transfer through a frozen feature extractor.
    f.addMatcher(backward_call().bind("grad"), this);
    f.addMatcher(optimizer_call("step").bind("grad"), this);
    f.addMatcher(callExpr(callee(functionDecl(hasName("::torch::autograd::grad")))).bind("grad"), this);
  }
  void run(const MatchFinder::MatchResult& r) override {
    ASTContext& ast = *r.Context;
    if (graph_.on_match(r)) return;
    if (auto* c = r.Nodes.getNodeAs<CXXMemberCallExpr>("eval")) add(c, Kind::kEval, ast);
    if (auto* c = r.Nodes.getNodeAs<CXXMemberCallExpr>("train")) {
      bool off = c->getNumArgs() >= 1 && !isa<CXXDefaultArgExpr>(c->getArg(0)) && is_false_literal(c->getArg(0));
      add(c, off ? Kind::kEval : Kind::kTrain, ast);
    }
    if (auto* c = r.Nodes.getNodeAs<CallExpr>("forward")) add(c, Kind::kForward, ast);
    // Grad mode switched by hand anywhere in the function: not ours to judge.
    if (auto* c = r.Nodes.getNodeAs<CallExpr>("grad_mode")) {
      if (const Decl* fn = enclosing_callable(c, ast)) manual_.insert(fn->getCanonicalDecl());
    }
    if (auto* c = r.Nodes.getNodeAs<CallExpr>("grad")) {
      if (const Decl* fn = enclosing_callable(c, ast)) gradients_.insert(fn->getCanonicalDecl());
    }
  }
  void finish() override {
    ASTContext& ast = ctx_.ast();
    for (auto& [fn, events] : functions_) {
      std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.order < b.order; });
    }
    for (const auto& [fn, events] : functions_) {
      if (manual_.contains(fn) || gradients_.contains(fn)) continue;
      // A model's own forward calling its layers is not evaluation code.
      if (auto* m = dyn_cast<CXXMethodDecl>(fn); m && module_impl(ast.getRecordType(m->getParent()))) continue;
      auto* named = dyn_cast<FunctionDecl>(fn);
      // A lambda's operator() has no name; a gtest body is a unit test, not an evaluation.
      bool role = named && named->getIdentifier() && named->getName() != "TestBody" &&
                  has_evaluation_role(named->getNameAsString());
      bool sets_train =
          std::any_of(events.begin(), events.end(), [](const Event& e) { return e.kind == Kind::kTrain; });
      std::map<const ValueDecl*, Kind> mode;
      std::set<const ValueDecl*> reported;
      for (const Event& e : events) {
        if (!e.object) continue;
        if (e.kind != Kind::kForward) {
          mode[e.object] = e.kind;
          continue;
        }
        if (reported.contains(e.object) || in_no_grad_scope(e.call, ast)) continue;
        auto it = mode.find(e.object);
        bool after_eval = it != mode.end() && it->second == Kind::kEval;
        if (!after_eval && it != mode.end()) continue;  // train() on it first: training code
        bool by_callers = !after_eval && !role;
        // Judged by its callers, a helper that puts a model back in train mode serves training.
        if (by_callers && sets_train) continue;
        if (innermost_loop(e.call, ast) == nullptr && is_literal_shape_tensor(forward_input(e.call))) continue;
        if (always_called(fn, Where::kNoGrad)) continue;
        if (by_callers && !always_called(fn, Where::kEvalMode)) continue;
        reported.insert(e.object);
        std::string where = after_eval ? "after `eval()`"
                            : role     ? "in evaluation function `" + named->getNameAsString() + "`"
                                       : "in `" + named->getNameAsString() + "` (every caller runs it in eval mode)";
        ctx_.report("TL102", e.call,
                    "forward pass of `" + e.object->getNameAsString() + "` " + where +
                        " outside a no-grad scope: autograd "
                        "records the graph and keeps activations alive; declare `torch::NoGradGuard no_grad;` (or "
                        "`c10::InferenceMode guard;`) first");
      }
    }
  }

 private:
  enum class Kind { kEval, kTrain, kForward };
  enum class Where { kNoGrad, kEvalMode };
  struct Event {
    Kind kind;
    const CallExpr* call;
    const ValueDecl* object;
    unsigned order;
  };
  void add(const CallExpr* c, Kind k, ASTContext& ast) {
    const Decl* fn = enclosing_callable(c, ast);
    if (!fn) return;
    functions_[fn->getCanonicalDecl()].push_back({k, c, call_object(c), order(c, ast)});
  }

  // Some model is in eval mode at `call` in its function: eval() earlier with no train()
  // on it since, or the function itself always runs in eval mode and has not switched a
  // model back to training before the call.
  bool eval_mode_at(const CallExpr* call, const Decl* fn, std::set<const Decl*>& visiting) {
    unsigned at = order(call, ctx_.ast());
    std::map<const ValueDecl*, Kind> mode;
    bool trained = false;
    if (auto it = functions_.find(fn); it != functions_.end()) {
      for (const Event& e : it->second) {
        if (e.order >= at) break;
        if (e.kind == Kind::kTrain) trained = true;
        if (e.kind != Kind::kForward && e.object) mode[e.object] = e.kind;
      }
    }
    for (const auto& [object, kind] : mode) {
      if (kind == Kind::kEval) return true;
    }
    return !trained && always_called(fn, Where::kEvalMode, &visiting);
  }
  // Every call of `fn` this TU shows (at least one) runs in `context`, directly or
  // because its caller always does (the Python program model's always-called-in).
  bool always_called(const Decl* fn, Where context, std::set<const Decl*>* visiting = nullptr) {
    auto key = std::make_pair(fn, context);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    std::set<const Decl*> local;
    std::set<const Decl*>& seen = visiting ? *visiting : local;
    if (!seen.insert(fn).second) return false;  // recursion: no evidence from a cycle
    std::vector<const CallExpr*> callers = graph_.known_callers(fn);
    bool all = !callers.empty();
    for (const CallExpr* call : callers) {
      const Decl* caller = enclosing_callable(call, ctx_.ast());
      if (!caller) {
        all = false;
        break;
      }
      caller = caller->getCanonicalDecl();
      bool ok = context == Where::kNoGrad ? in_no_grad_scope(call, ctx_.ast()) || always_called(caller, context, &seen)
                                          : eval_mode_at(call, caller, seen);
      if (!ok) {
        all = false;
        break;
      }
    }
    seen.erase(fn);
    if (!visiting || seen.empty()) memo_[key] = all;
    return all;
  }

  CallGraph graph_;
  std::map<const Decl*, std::vector<Event>> functions_;
  std::set<const Decl*> manual_;
  std::set<const Decl*> gradients_;
  std::map<std::pair<const Decl*, Where>, bool> memo_;
};

}  // namespace tl102
std::unique_ptr<Rule> make_eval_without_no_grad(Context& c) { return std::make_unique<tl102::EvalWithoutNoGrad>(c); }
}  // namespace torchlint::cpp
