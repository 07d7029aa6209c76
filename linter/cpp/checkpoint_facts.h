#pragma once
// What TL301-TL303 share: the training checkpoints of a translation unit (a program) and
// what the program saves anywhere. LibTorch saves the model and the optimizer in
// separate archives (`torch::save(model, "model.pt"); torch::save(optimizer, "opt.pt")`)
// or into one OutputArchive (`model->save(archive); archive.write("epoch", ...)`), so the
// question is asked per program, not per call.
#include "torch_api.h"

namespace torchlint::cpp::api {

class CheckpointFacts {
 public:
  void add_matchers(MatchFinder& f, MatchFinder::MatchCallback* cb) {
    f.addMatcher(callExpr(callee(functionDecl(hasName("::torch::save")))).bind("ck.save"), cb);
    f.addMatcher(
        cxxMemberCallExpr(callee(cxxMethodDecl(hasName("save"), ofClass(anyOf(module_class(), optimizer_class())))))
            .bind("ck.member_save"),
        cb);
    f.addMatcher(cxxMemberCallExpr(
                     callee(cxxMethodDecl(hasName("write"), ofClass(hasName("::torch::serialize::OutputArchive")))))
                     .bind("ck.write"),
                 cb);
    f.addMatcher(cxxMemberCallExpr(
                     callee(cxxMethodDecl(hasName("save_to"), ofClass(hasName("::torch::serialize::OutputArchive")))))
                     .bind("ck.save_to"),
                 cb);
    f.addMatcher(optimizer_call("step").bind("ck.step"), cb);
    f.addMatcher(varDecl(hasType(optimizer_class()), unless(parmVarDecl())).bind("ck.optimizer"), cb);
    f.addMatcher(fieldDecl(hasType(optimizer_class())).bind("ck.optimizer"), cb);
    f.addMatcher(varDecl(hasType(scheduler_class()), unless(parmVarDecl())).bind("ck.scheduler"), cb);
    f.addMatcher(fieldDecl(hasType(scheduler_class())).bind("ck.scheduler"), cb);
    graph_.add_matchers(f, cb);
  }

  void on_match(const MatchFinder::MatchResult& r) {
    if (graph_.on_match(r)) return;
    ASTContext& ast = *r.Context;
    if (auto* s = r.Nodes.getNodeAs<CallExpr>("ck.save"); s && s->getNumArgs() >= 1) {
      const Expr* value = s->getArg(0);
      QualType t = value->getType();
      if (module_impl(t)) {
        model_saves_.push_back(s);
      } else if (is_optimizer(t)) {
        optimizer_saved_ = true;
      } else {
        for (const ValueDecl* v : mentioned(value)) note_saved_name(v->getName());
      }
    }
    if (auto* m = r.Nodes.getNodeAs<CXXMemberCallExpr>("ck.member_save")) {
      if (is_optimizer(m->getObjectType()))
        optimizer_saved_ = true;
      else if (m->getNumArgs() >= 1)
        archives_with_model_.insert(object_decl(m->getArg(0)));
    }
    if (auto* w = r.Nodes.getNodeAs<CXXMemberCallExpr>("ck.write"); w && w->getNumArgs() >= 1) {
      const Expr* key = w->getArg(0);
      std::vector<const Stmt*> todo = {key};
      while (!todo.empty()) {
        const Stmt* x = todo.back();
        todo.pop_back();
        if (!x) continue;
        if (auto* lit = dyn_cast<StringLiteral>(x)) note_saved_name(lit->getString());
        for (const Stmt* c : x->children()) todo.push_back(c);
      }
    }
    if (auto* st = r.Nodes.getNodeAs<CXXMemberCallExpr>("ck.save_to")) archive_saves_.push_back(st);
    if (auto* step = r.Nodes.getNodeAs<CallExpr>("ck.step")) {
      steps_.push_back(step);
      graph_.mark(step, ast);
    }
    if (auto* o = r.Nodes.getNodeAs<ValueDecl>("ck.optimizer")) optimizers_.push_back(o);
    if (auto* s = r.Nodes.getNodeAs<ValueDecl>("ck.scheduler")) schedulers_.push_back(s);
  }

  // The first training checkpoint: a save of a model (or of an archive a model was saved
  // into) inside a loop that trains: it steps an optimizer, itself or through a helper.
  const Stmt* first_checkpoint(ASTContext& ast) const {
    std::vector<const Stmt*> candidates(model_saves_.begin(), model_saves_.end());
    for (const CXXMemberCallExpr* s : archive_saves_) {
      if (archives_with_model_.contains(object_decl(s->getImplicitObjectArgument()))) candidates.push_back(s);
    }
    const Stmt* best = nullptr;
    for (const Stmt* s : candidates) {
      if (!in_training_loop(s, ast)) continue;
      if (!best || order(s, ast) < order(best, ast)) best = s;
    }
    return best;
  }

  bool optimizer_saved() const { return optimizer_saved_; }
  bool counter_saved() const { return counter_saved_; }
  bool scheduler_saved() const { return scheduler_saved_ || counter_saved_; }
  const std::vector<const ValueDecl*>& optimizers() const { return optimizers_; }
  const std::vector<const ValueDecl*>& schedulers() const { return schedulers_; }

 private:
  static bool is_optimizer(QualType t) {
    t = t.getNonReferenceType();
    if (t->isPointerType()) t = t->getPointeeType();
    const CXXRecordDecl* rd = t->getAsCXXRecordDecl();
    if (!rd || !(rd = rd->getDefinition())) return false;
    if (rd->getQualifiedNameAsString() == "torch::optim::Optimizer") return true;
    bool found = false;
    rd->forallBases([&](const CXXRecordDecl* b) {
      if (b->getQualifiedNameAsString() == "torch::optim::Optimizer") found = true;
      return true;
    });
    return found;
  }
  // Keys and saved variables that say what they hold: a counter (epoch, step, iter) or
  // the scheduler (sched, lr).
  void note_saved_name(llvm::StringRef name) {
    std::string n = ascii_lower(name.str());
    for (const char* k : {"epoch", "step", "iter"}) {
      if (n.find(k) != std::string::npos) counter_saved_ = true;
    }
    if (n.find("sched") != std::string::npos || n.find("lr") != std::string::npos) scheduler_saved_ = true;
  }
  bool in_training_loop(const Stmt* s, ASTContext& ast) const {
    for (const auto& a : ancestors(s, ast)) {
      if (!is_loop(a.node)) continue;
      for (const CallExpr* step : steps_) {
        if (is_inside(step, a.node, ast)) return true;
      }
      if (graph_.scope_calls_marked(a.node, ast)) return true;
    }
    return false;
  }

  CallGraph graph_;
  std::vector<const CallExpr*> model_saves_, steps_;
  std::vector<const CXXMemberCallExpr*> archive_saves_;
  std::set<const ValueDecl*> archives_with_model_;
  std::vector<const ValueDecl*> optimizers_, schedulers_;
  bool optimizer_saved_ = false, counter_saved_ = false, scheduler_saved_ = false;
};

}  // namespace torchlint::cpp::api
