// TL201 dataloader-num-workers (C++): a training data loader built without
// `DataLoaderOptions().workers(n)` or with the literal `workers(0)`.
#include "cpp/torch_api.h"

namespace torchlint::cpp {
namespace tl201 {
using namespace api;

enum class Workers { kUnset, kZero, kSet, kUnknown };

// Follows `DataLoaderOptions(64).batch_size(..).workers(..)` back to where it starts.
Workers workers_of(const Expr* e) {
  for (int depth = 0; e && depth < 32; ++depth) {
    e = e->IgnoreImplicit()->IgnoreParens();
    if (auto* m = dyn_cast<MaterializeTemporaryExpr>(e)) {
      e = m->getSubExpr();
      continue;
    }
    if (isa<CXXDefaultArgExpr>(e)) return Workers::kUnset;  // make_data_loader(dataset)
    if (auto* cast = dyn_cast<CXXFunctionalCastExpr>(e)) {  // DataLoaderOptions(32)
      e = cast->getSubExpr();
      continue;
    }
    if (auto* call = dyn_cast<CXXMemberCallExpr>(e)) {
      const CXXMethodDecl* m = call->getMethodDecl();
      if (!m || m->getParent()->getQualifiedNameAsString() != "torch::data::DataLoaderOptions")
        return Workers::kUnknown;
      if (m->getName() == "workers" && call->getNumArgs() == 1) {
        const Expr* arg = call->getArg(0)->IgnoreParenImpCasts();
        if (auto* lit = dyn_cast<IntegerLiteral>(arg)) return lit->getValue() == 0 ? Workers::kZero : Workers::kSet;
        return Workers::kSet;  // a variable or a config value: the user decided
      }
      e = call->getImplicitObjectArgument();
      continue;
    }
    if (auto* construct = dyn_cast<CXXConstructExpr>(e)) {
      const CXXConstructorDecl* ctor = construct->getConstructor();
      // A copy or move of something else: follow it; a fresh DataLoaderOptions(...) or
      // an integer batch size converted to one: workers unset.
      if ((ctor->isCopyOrMoveConstructor()) && construct->getNumArgs() == 1) {
        e = construct->getArg(0);
        continue;
      }
      return Workers::kUnset;
    }
    return Workers::kUnknown;  // a variable: configured elsewhere
  }
  return Workers::kUnknown;
}

class DataLoaderWorkers final : public Rule {
 public:
  using Rule::Rule;
  void register_matchers(MatchFinder& f) override {
    f.addMatcher(callExpr(callee(functionDecl(hasName("::torch::data::make_data_loader")).bind("fn"))).bind("call"),
                 this);
    f.addMatcher(optimizer_call("step").bind("step"), this);
    f.addMatcher(cxxForRangeStmt().bind("loop"), this);
    graph_.add_matchers(f, this);
  }
  void run(const MatchFinder::MatchResult& r) override {
    if (graph_.on_match(r)) return;
    if (auto* c = r.Nodes.getNodeAs<CallExpr>("call")) loaders_.push_back({c, r.Nodes.getNodeAs<FunctionDecl>("fn")});
    if (auto* s = r.Nodes.getNodeAs<CallExpr>("step")) {
      steps_.push_back(s);
      graph_.mark(s, *r.Context);
    }
    if (auto* l = r.Nodes.getNodeAs<CXXForRangeStmt>("loop")) loops_.push_back(l);
  }
  void finish() override {
    ASTContext& ast = ctx_.ast();
    for (const auto& [call, fn] : loaders_) {
      const Expr* options = nullptr;
      for (const Expr* arg : call->arguments()) {
        const CXXRecordDecl* rd = arg->getType()->getAsCXXRecordDecl();
        if (rd && rd->getQualifiedNameAsString() == "torch::data::DataLoaderOptions") options = arg;
      }
      Workers w = options ? workers_of(options) : Workers::kUnset;
      if (w == Workers::kSet || w == Workers::kUnknown) continue;
      if (!is_training_loader(call, fn, ast)) continue;
      ctx_.report(
          "TL201", call,
          w == Workers::kZero
              ? "training data loader with `workers(0)`: batches are loaded on the training thread, which waits "
                "for data every step; use `torch::data::DataLoaderOptions().workers(n)`"
              : "training data loader without `workers(n)`: LibTorch's default is 0 (batches are loaded on the "
                "training thread); pass `torch::data::DataLoaderOptions().batch_size(b).workers(n)`");
    }
  }

 private:
  // Training, decided as on the Python side: a variable named for training; not one named
  // for evaluation (`test_loader`, `val_loader`); else by use: iterated by a loop that
  // steps an optimizer (itself or through a helper), or handed to a function that trains,
  // is training; used only by loops and functions that do not train, is not; unused or
  // used where we cannot see: shuffled (the default RandomSampler) means training.
  bool is_training_loader(const CallExpr* call, const FunctionDecl* fn, ASTContext& ast) const {
    const VarDecl* var = nullptr;
    const Stmt* child = call;
    for (int depth = 0; depth < 8 && !var; ++depth) {
      auto parents = ast.getParents(*child);
      if (parents.empty()) break;
      if ((var = parents[0].get<VarDecl>())) break;
      child = parents[0].get<Stmt>();
      if (!child || !isa<Expr>(child)) break;
    }
    if (var) {
      std::string name = ascii_lower(var->getNameAsString());
      if (name.find("train") != std::string::npos) return true;
      for (const char* word : {"test", "val", "eval"}) {
        if (name.find(word) != std::string::npos) return false;
      }
      int uses = 0, training_uses = 0;
      for (const CXXForRangeStmt* loop : loops_) {
        if (!mentioned(loop->getRangeInit()).contains(var)) continue;
        ++uses;
        bool steps =
            std::any_of(steps_.begin(), steps_.end(), [&](const CallExpr* s) { return is_inside(s, loop, ast); });
        if (steps || graph_.scope_calls_marked(loop->getBody(), ast)) ++training_uses;
      }
      for (const auto& [use, callee] : graph_.calls()) {
        // Only functions of this file decide: LibTorch's own (`loader->begin()`) are not uses.
        auto* target = dyn_cast<FunctionDecl>(callee);
        const FunctionDecl* body = nullptr;
        if (!target || !target->hasBody(body) || !ctx_.in_main_file(body->getLocation())) continue;
        bool passed = std::any_of(use->arguments().begin(), use->arguments().end(),
                                  [&](const Expr* a) { return mentioned(a).contains(var); });
        if (!passed) continue;
        ++uses;
        if (graph_.reaches(callee)) ++training_uses;
      }
      if (training_uses > 0) return true;
      if (uses > 0) return false;
    }
    if (fn) {
      if (const TemplateArgumentList* args = fn->getTemplateSpecializationArgs()) {
        for (const TemplateArgument& a : args->asArray()) {
          if (a.getKind() != TemplateArgument::Type) continue;
          const CXXRecordDecl* rd = a.getAsType()->getAsCXXRecordDecl();
          if (rd && rd->getQualifiedNameAsString() == "torch::data::samplers::RandomSampler") return true;
        }
      }
    }
    return false;
  }
  CallGraph graph_;
  std::vector<std::pair<const CallExpr*, const FunctionDecl*>> loaders_;
  std::vector<const CallExpr*> steps_;
  std::vector<const CXXForRangeStmt*> loops_;
};

}  // namespace tl201
std::unique_ptr<Rule> make_dataloader_num_workers(Context& c) { return std::make_unique<tl201::DataLoaderWorkers>(c); }
}  // namespace torchlint::cpp
