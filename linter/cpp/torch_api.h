#pragma once
// What the C++ rules know about LibTorch (1.13 and later): the declarations they match
// on, by qualified name of the declaration (aliases such as torch::NoGradGuard resolve
// to c10::NoGradGuard), and small AST helpers shared by the rules. Header-only: the
// rules are compiled as one translation unit.
#include <clang/AST/ExprCXX.h>
#include <clang/AST/ParentMapContext.h>
#include <clang/AST/StmtCXX.h>

#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/text.h"
#include "rule.h"

namespace torchlint::cpp::api {

using namespace clang;
using namespace clang::ast_matchers;

// ---- classes ----
inline DeclarationMatcher optimizer_class() { return cxxRecordDecl(isSameOrDerivedFrom("::torch::optim::Optimizer")); }
inline DeclarationMatcher scheduler_class() {
  return cxxRecordDecl(isSameOrDerivedFrom("::torch::optim::LRScheduler"));
}
inline DeclarationMatcher module_class() { return cxxRecordDecl(isSameOrDerivedFrom("::torch::nn::Module")); }
inline DeclarationMatcher module_holder_class() {
  return cxxRecordDecl(isSameOrDerivedFrom("::torch::nn::ModuleHolder"));
}
inline DeclarationMatcher tensor_class() { return cxxRecordDecl(hasAnyName("::at::Tensor", "::at::TensorBase")); }
// What has a forward pass and a training mode, beyond nn modules: a TorchScript module
// (`torch::jit::load`, `torch::jit::script::Module` is an alias) and a type-erased
// `torch::nn::AnyModule` (forward only).
inline DeclarationMatcher model_class() {
  return cxxRecordDecl(anyOf(isSameOrDerivedFrom("::torch::nn::Module"), isSameOrDerivedFrom("::torch::jit::Module"),
                             hasName("::torch::nn::AnyModule")));
}

// `obj.name(...)` / `obj->name(...)` of a method of `cls` (or a class derived from it). By
// the method's class, not the object's type: the type of `net->` through a
// `std::shared_ptr<Net>` is the typedef `element_type*`, and `torch::jit::script::Module`
// is an alias, sugar that a match on the object's declaration does not look through.
inline internal::BindableMatcher<Stmt> member_call(llvm::StringRef name, const DeclarationMatcher& cls) {
  return cxxMemberCallExpr(callee(cxxMethodDecl(hasName(name), ofClass(cls))));
}
inline internal::BindableMatcher<Stmt> optimizer_call(llvm::StringRef name) {
  return member_call(name, optimizer_class());
}
inline internal::BindableMatcher<Stmt> module_call(llvm::StringRef name) { return member_call(name, module_class()); }
// eval()/train()/forward() on any model: through `->` of a ModuleHolder (`torch::nn::Linear`,
// a TORCH_MODULE type, `torch::nn::Sequential`) or a `std::shared_ptr<Net>`, `.` on a
// TorchScript module or AnyModule.
inline internal::BindableMatcher<Stmt> model_call(llvm::StringRef name) { return member_call(name, model_class()); }

// `loss.backward()` and `torch::autograd::backward({loss})`.
inline internal::BindableMatcher<Stmt> backward_call() {
  return callExpr(callee(functionDecl(
      anyOf(cxxMethodDecl(hasName("backward"), ofClass(tensor_class())), hasName("::torch::autograd::backward")))));
}

// The events of one training step, for the rules that check their presence and order:
// binds "step" (optimizer.step()), "backward", "ozero" (optimizer.zero_grad()), "mzero"
// (module.zero_grad()) and "opt" (an optimizer variable, not a parameter).
inline void add_training_step_matchers(MatchFinder& f, MatchFinder::MatchCallback* cb) {
  f.addMatcher(optimizer_call("step").bind("step"), cb);
  f.addMatcher(backward_call().bind("backward"), cb);
  f.addMatcher(optimizer_call("zero_grad").bind("ozero"), cb);
  f.addMatcher(module_call("zero_grad").bind("mzero"), cb);
  f.addMatcher(varDecl(hasType(optimizer_class()), unless(parmVarDecl())).bind("opt"), cb);
}

// A forward pass: `model->forward(x)`, `model.forward(x)`, `model(x)` (ModuleHolder),
// `module.forward({x})` (TorchScript), `any.forward(x)` (AnyModule).
inline internal::BindableMatcher<Stmt> forward_call() {
  return expr(anyOf(model_call("forward"), cxxOperatorCallExpr(hasOverloadedOperatorName("()"),
                                                               hasArgument(0, expr(hasType(module_holder_class()))))));
}

// ---- objects ----

// The variable, parameter or field an object expression names, through `->`, `*`, `&`
// and ModuleHolder/shared_ptr operators: `model`, `model->`, `*model`, `this->net`.
inline const ValueDecl* object_decl(const Expr* e) {
  for (int depth = 0; e && depth < 8; ++depth) {
    e = e->IgnoreParenImpCasts();
    if (auto* t = dyn_cast<MaterializeTemporaryExpr>(e)) {
      e = t->getSubExpr();
      continue;
    }
    if (auto* op = dyn_cast<CXXOperatorCallExpr>(e)) {
      auto k = op->getOperator();
      if ((k == OO_Arrow || k == OO_Star || k == OO_Call) && op->getNumArgs() >= 1) {
        e = op->getArg(0);
        continue;
      }
      return nullptr;
    }
    if (auto* u = dyn_cast<UnaryOperator>(e)) {
      if (u->getOpcode() == UO_Deref || u->getOpcode() == UO_AddrOf) {
        e = u->getSubExpr();
        continue;
      }
      return nullptr;
    }
    if (auto* ref = dyn_cast<DeclRefExpr>(e)) return ref->getDecl();
    if (auto* m = dyn_cast<MemberExpr>(e)) return m->getMemberDecl();
    return nullptr;
  }
  return nullptr;
}

inline const ValueDecl* call_object(const CallExpr* call) {
  if (auto* m = dyn_cast<CXXMemberCallExpr>(call)) return object_decl(m->getImplicitObjectArgument());
  if (auto* op = dyn_cast<CXXOperatorCallExpr>(call); op && op->getNumArgs() >= 1) return object_decl(op->getArg(0));
  return nullptr;
}

// The module class behind a type: NetImpl for `Net` (ModuleHolder<NetImpl>),
// `std::shared_ptr<NetImpl>`, `NetImpl&`; null when it is not a module.
inline const CXXRecordDecl* module_impl(QualType t) {
  t = t.getNonReferenceType();
  if (t->isPointerType()) t = t->getPointeeType();
  const CXXRecordDecl* rd = t->getAsCXXRecordDecl();
  for (int depth = 0; rd && depth < 6; ++depth) {
    rd = rd->getDefinition();
    if (!rd) return nullptr;
    std::string name = rd->getQualifiedNameAsString();
    if (auto* spec = dyn_cast<ClassTemplateSpecializationDecl>(rd)) {
      if ((name == "std::shared_ptr" || name == "torch::nn::ModuleHolder") && spec->getTemplateArgs().size() >= 1 &&
          spec->getTemplateArgs()[0].getKind() == TemplateArgument::Type) {
        rd = spec->getTemplateArgs()[0].getAsType()->getAsCXXRecordDecl();
        continue;
      }
    }
    // A TORCH_MODULE(Net) class derives from ModuleHolder<NetImpl>.
    const CXXRecordDecl* next = nullptr;
    bool is_module = name == "torch::nn::Module";
    for (const auto& base : rd->bases()) {
      const CXXRecordDecl* b = base.getType()->getAsCXXRecordDecl();
      if (!b) continue;
      if (b->getQualifiedNameAsString() == "torch::nn::ModuleHolder") next = b;
    }
    if (next && !is_module) {
      rd = next;
      continue;
    }
    if (is_module) return rd;
    // Derived from torch::nn::Module (directly or through Cloneable<...>)?
    bool derived = false;
    rd->forallBases([&](const CXXRecordDecl* b) {
      if (b->getQualifiedNameAsString() == "torch::nn::Module") derived = true;
      return true;
    });
    return derived ? rd : nullptr;
  }
  return nullptr;
}

// ---- where a statement is ----

inline bool is_false_literal(const Expr* e);
// `do { ... } while (false)` runs once: the statement-like macros (AT_ASSERT, user
// CHECK macros) expand to it, and an expression inside one is not in a loop of its own.
inline bool is_loop(const Stmt* s) {
  if (auto* d = dyn_cast<DoStmt>(s)) return !is_false_literal(d->getCond());
  return isa<ForStmt>(s) || isa<WhileStmt>(s) || isa<CXXForRangeStmt>(s);
}

// Written by the user: the call's name (`item` of `loss.item<float>()`, the `<<`) comes
// from the main file, directly or as a macro argument (`AT_ASSERT(loss.item<float>() >
// 0)`), not from the body of a macro that a header (LibTorch's own) defines.
inline bool written_in_main_file(const Expr* s, const SourceManager& sm) {
  SourceLocation loc = s->getExprLoc();
  return loc.isValid() && sm.isInMainFile(sm.getSpellingLoc(loc));
}

// Parent chain of `s` up to (excluding) the enclosing function or lambda; each entry is
// (ancestor, the child of it that leads to `s`).
struct Step {
  const Stmt* node;
  const Stmt* child;
};
inline std::vector<Step> ancestors(const Stmt* s, ASTContext& ctx) {
  std::vector<Step> out;
  const Stmt* child = s;
  for (int depth = 0; depth < 256; ++depth) {
    auto parents = ctx.getParents(*child);
    if (parents.empty()) break;
    const Stmt* p = parents[0].get<Stmt>();
    if (!p) {
      // A local variable's initializer: continue from its DeclStmt.
      auto* v = parents[0].get<VarDecl>();
      if (!v || isa<ParmVarDecl>(v) || !v->isLocalVarDecl()) break;
      auto vp = ctx.getParents(*v);
      if (vp.empty() || !(p = vp[0].get<Stmt>())) break;
    }
    if (isa<LambdaExpr>(p)) break;
    out.push_back({p, child});
    child = p;
  }
  return out;
}

// The function (or lambda body's operator()) a statement belongs to.
inline const Decl* enclosing_callable(const Stmt* s, ASTContext& ctx) {
  const Stmt* child = s;
  for (int depth = 0; depth < 256; ++depth) {
    auto parents = ctx.getParents(*child);
    if (parents.empty()) return nullptr;
    if (auto* lambda = parents[0].get<LambdaExpr>()) return lambda->getCallOperator();
    if (auto* p = parents[0].get<Stmt>()) {
      child = p;
      continue;
    }
    if (auto* f = parents[0].get<FunctionDecl>()) return f;
    if (auto* d = parents[0].get<Decl>()) {
      // A variable's initializer inside a function: keep climbing through its DeclStmt.
      auto dp = ctx.getParents(*d);
      if (dp.empty()) return nullptr;
      if (auto* ds = dp[0].get<Stmt>()) {
        child = ds;
        continue;
      }
      return nullptr;
    }
    return nullptr;
  }
  return nullptr;
}

inline const Stmt* innermost_loop(const Stmt* s, ASTContext& ctx) {
  for (const auto& a : ancestors(s, ctx)) {
    if (!is_loop(a.node)) continue;
    // The loop's own condition/increment/range is not its body.
    if (auto* f = dyn_cast<ForStmt>(a.node); f && a.child != f->getBody()) continue;
    if (auto* w = dyn_cast<WhileStmt>(a.node); w && a.child != w->getBody()) continue;
    if (auto* r = dyn_cast<CXXForRangeStmt>(a.node); r && a.child != r->getBody()) continue;
    return a.node;
  }
  return nullptr;
}

inline bool is_inside(const Stmt* inner, const Stmt* outer, ASTContext& ctx) {
  if (inner == outer) return true;
  for (const auto& a : ancestors(inner, ctx)) {
    if (a.node == outer) return true;
  }
  return false;
}

// Whether `s` runs only on some iterations/paths between itself and `stop` (an `if`
// branch, `?:`, `switch`, the right side of `&&`/`||`). Null `stop`: up to the function.
inline bool conditional_between(const Stmt* s, const Stmt* stop, ASTContext& ctx) {
  for (const auto& a : ancestors(s, ctx)) {
    if (a.node == stop) return false;
    if (auto* i = dyn_cast<IfStmt>(a.node); i && a.child != i->getCond() && a.child != i->getInit()) return true;
    if (auto* c = dyn_cast<ConditionalOperator>(a.node); c && a.child != c->getCond()) return true;
    if (isa<SwitchStmt>(a.node) || isa<SwitchCase>(a.node)) return true;
    if (auto* b = dyn_cast<BinaryOperator>(a.node); b && b->isLogicalOp() && a.child == b->getRHS()) return true;
  }
  return false;
}

// The statement of a block that holds `s` (for one finding per statement).
inline const Stmt* block_statement(const Stmt* s, ASTContext& ctx) {
  const Stmt* last = s;
  for (const auto& a : ancestors(s, ctx)) {
    if (isa<CompoundStmt>(a.node)) return a.child;
    last = a.node;
  }
  return last;
}

// ---- grad mode ----

inline bool is_no_grad_guard_type(QualType t) {
  const CXXRecordDecl* rd = t.getNonReferenceType()->getAsCXXRecordDecl();
  if (!rd) return false;
  std::string n = rd->getQualifiedNameAsString();
  return n == "c10::NoGradGuard" || n == "at::NoGradGuard" || n == "c10::InferenceMode" || n == "torch::NoGradGuard" ||
         n == "c10::AutoNonVariableTypeMode" || n == "at::AutoDispatchBelowADInplaceOrView";
}

inline bool is_false_literal(const Expr* e) {
  if (!e) return false;
  e = e->IgnoreParenImpCasts();
  if (auto* b = dyn_cast<CXXBoolLiteralExpr>(e)) return !b->getValue();
  if (auto* i = dyn_cast<IntegerLiteral>(e)) return i->getValue() == 0;
  return false;
}
inline bool is_true_literal(const Expr* e) {
  if (!e) return false;
  e = e->IgnoreParenImpCasts();
  if (auto* b = dyn_cast<CXXBoolLiteralExpr>(e)) return b->getValue();
  if (auto* i = dyn_cast<IntegerLiteral>(e)) return i->getValue() != 0;
  return false;
}

// Inside the scope of a `torch::NoGradGuard` / `c10::InferenceMode` (or
// `torch::AutoGradMode guard(false)`) declared earlier in an enclosing block.
inline bool in_no_grad_scope(const Stmt* s, ASTContext& ctx) {
  for (const auto& a : ancestors(s, ctx)) {
    auto* block = dyn_cast<CompoundStmt>(a.node);
    if (!block) continue;
    for (const Stmt* st : block->body()) {
      if (st == a.child) break;
      auto* ds = dyn_cast<DeclStmt>(st);
      if (!ds) continue;
      for (const Decl* d : ds->decls()) {
        auto* v = dyn_cast<VarDecl>(d);
        if (!v) continue;
        if (is_no_grad_guard_type(v->getType())) return true;
        const CXXRecordDecl* rd = v->getType()->getAsCXXRecordDecl();
        if (rd && rd->getQualifiedNameAsString() == "c10::AutoGradMode") {
          if (auto* ce = dyn_cast_or_null<CXXConstructExpr>(v->getInit());
              ce && ce->getNumArgs() >= 1 && is_false_literal(ce->getArg(0))) {
            return true;
          }
        }
      }
    }
  }
  return false;
}

// ---- the main file's call graph ----

// Skips the implicit nodes between an expression and what it is part of.
inline const Stmt* semantic_parent(const Stmt* s, ASTContext& ctx) {
  for (int depth = 0; s && depth < 8; ++depth) {
    auto parents = ctx.getParents(*s);
    if (parents.empty()) return nullptr;
    const Stmt* p = parents[0].get<Stmt>();
    if (!p) return nullptr;
    if (isa<ImplicitCastExpr>(p) || isa<MaterializeTemporaryExpr>(p) || isa<ParenExpr>(p) ||
        isa<CXXBindTemporaryExpr>(p)) {
      s = p;
      continue;
    }
    return p;
  }
  return nullptr;
}

// Which main-file function (or lambda) calls which, and which of them do something a rule
// cares about (`mark`), so that a helper called in a loop counts as the loop doing it.
// It also knows which functions have callers it cannot see: their address is taken, a
// lambda is handed to another function, a method overrides a virtual one.
class CallGraph {
 public:
  void add_matchers(MatchFinder& finder, MatchFinder::MatchCallback* cb) {
    finder.addMatcher(callExpr(callee(functionDecl().bind("cg.callee"))).bind("cg.call"), cb);
    finder.addMatcher(declRefExpr(to(functionDecl().bind("cg.fn"))).bind("cg.ref"), cb);
    finder.addMatcher(declRefExpr(to(varDecl(hasType(cxxRecordDecl(isLambda()))))).bind("cg.lambda_ref"), cb);
    finder.addMatcher(lambdaExpr().bind("cg.lambda"), cb);
  }
  // Consumes the call graph's own matches.
  bool on_match(const MatchFinder::MatchResult& r) {
    ASTContext& ctx = *r.Context;
    if (auto* ref = r.Nodes.getNodeAs<DeclRefExpr>("cg.ref")) {
      // `&fn`, `std::thread(fn)`: called from where we cannot see.
      auto* call = dyn_cast_or_null<CallExpr>(semantic_parent(ref, ctx));
      if (!call || call->getCallee()->IgnoreParenImpCasts() != ref)
        escaped_.insert(r.Nodes.getNodeAs<FunctionDecl>("cg.fn")->getCanonicalDecl());
      return true;
    }
    if (auto* ref = r.Nodes.getNodeAs<DeclRefExpr>("cg.lambda_ref")) {
      // A lambda variable used other than as `f(...)` is handed on.
      auto* call = dyn_cast_or_null<CXXOperatorCallExpr>(semantic_parent(ref, ctx));
      if (!call || call->getOperator() != OO_Call || call->getArg(0)->IgnoreParenImpCasts() != ref) {
        if (const CXXRecordDecl* closure = ref->getType()->getAsCXXRecordDecl())
          escaped_.insert(closure->getLambdaCallOperator()->getCanonicalDecl());
      }
      return true;
    }
    if (auto* lambda = r.Nodes.getNodeAs<LambdaExpr>("cg.lambda")) {
      // Only a lambda kept in a variable of its own type has callers we can list.
      const Stmt* p = lambda;
      const VarDecl* var = nullptr;
      for (int depth = 0; p && depth < 6 && !var; ++depth) {
        auto parents = ctx.getParents(*p);
        if (parents.empty()) break;
        var = parents[0].get<VarDecl>();
        p = parents[0].get<Stmt>();
        if (p && !isa<ImplicitCastExpr>(p) && !isa<MaterializeTemporaryExpr>(p) && !isa<CXXConstructExpr>(p) &&
            !isa<ExprWithCleanups>(p))
          break;
      }
      if (!var || var->getType()->getAsCXXRecordDecl() != lambda->getLambdaClass())
        escaped_.insert(lambda->getCallOperator()->getCanonicalDecl());
      return true;
    }
    auto* call = r.Nodes.getNodeAs<CallExpr>("cg.call");
    if (!call) return false;
    auto* callee = r.Nodes.getNodeAs<FunctionDecl>("cg.callee");
    if (const Decl* from = enclosing_callable(call, ctx))
      edges_[from->getCanonicalDecl()].insert(callee->getCanonicalDecl());
    calls_.push_back({call, callee->getCanonicalDecl()});
    return true;
  }
  void mark(const Stmt* s, ASTContext& ctx) {
    if (const Decl* c = enclosing_callable(s, ctx)) marked_.insert(c->getCanonicalDecl());
  }
  // `fn`, or a function it calls (transitively), is marked.
  bool reaches(const Decl* fn) const {
    std::set<const Decl*> seen;
    std::vector<const Decl*> todo = {fn->getCanonicalDecl()};
    while (!todo.empty()) {
      const Decl* d = todo.back();
      todo.pop_back();
      if (!seen.insert(d).second) continue;
      if (marked_.contains(d)) return true;
      if (auto it = edges_.find(d); it != edges_.end()) todo.insert(todo.end(), it->second.begin(), it->second.end());
    }
    return false;
  }
  // A call inside `scope` (same function) to a function that reaches a mark.
  bool scope_calls_marked(const Stmt* scope, ASTContext& ctx, const Stmt* before = nullptr) const {
    for (const auto& [call, callee] : calls_) {
      if (before && ctx.getSourceManager().isBeforeInTranslationUnit(before->getBeginLoc(), call->getBeginLoc()))
        continue;
      if (reaches(callee) && is_inside(call, scope, ctx)) return true;
    }
    return false;
  }
  const std::vector<std::pair<const CallExpr*, const Decl*>>& calls() const { return calls_; }
  // The calls of `fn` this TU shows; empty when it has none or callers it cannot see
  // (then no caller decides for it).
  std::vector<const CallExpr*> known_callers(const Decl* fn) const {
    fn = fn->getCanonicalDecl();
    std::vector<const CallExpr*> out;
    if (escaped_.contains(fn)) return out;
    if (auto* m = dyn_cast<CXXMethodDecl>(fn); m && (m->size_overridden_methods() > 0 || m->isVirtual())) return out;
    for (const auto& [call, callee] : calls_) {
      if (callee == fn) out.push_back(call);
    }
    return out;
  }

 private:
  std::map<const Decl*, std::set<const Decl*>> edges_;
  std::set<const Decl*> marked_;
  std::set<const Decl*> escaped_;
  std::vector<std::pair<const CallExpr*, const Decl*>> calls_;
};

// ---- the program (linter/cpp/program.h) ----

// The named function a statement belongs to: a lambda's body counts as the function that
// writes the lambda (it runs as part of it, or of whatever it is handed to).
inline const FunctionDecl* named_function(const Stmt* s, ASTContext& ctx) {
  const Decl* d = enclosing_callable(s, ctx);
  for (int depth = 0; d && depth < 16; ++depth) {
    auto* m = dyn_cast<CXXMethodDecl>(d);
    if (!m || !m->getParent()->isLambda()) return dyn_cast<FunctionDecl>(d);
    d = dyn_cast_or_null<Decl>(m->getParent()->getParentFunctionOrMethod());
  }
  return nullptr;
}

// A function's name across the TUs of one program: its qualified name; `main`; a function
// of internal linkage (static, anonymous namespace) is its file's own.
inline std::string program_name(const FunctionDecl* fn, const SourceManager& sm) {
  if (fn->isMain()) return "main";
  std::string name = fn->getQualifiedNameAsString();
  if (!fn->isExternallyVisible()) {
    if (const FileEntry* file = sm.getFileEntryForID(sm.getFileID(sm.getExpansionLoc(fn->getLocation())))) {
      name = std::string(file->getName()) + "#" + name;
    }
  }
  return name;
}

// Declared by LibTorch or the standard library (under -I, not only -isystem).
inline bool is_torch_decl(const NamedDecl* d) {
  std::string q = d->getQualifiedNameAsString();
  for (const char* ns : {"torch::", "at::", "c10::", "std::", "caffe2::"}) {
    if (q.starts_with(ns)) return true;
  }
  return false;
}

// A source-order key for statements of the main file.
inline unsigned order(const Stmt* s, ASTContext& ctx) {
  const SourceManager& sm = ctx.getSourceManager();
  return sm.getFileOffset(sm.getExpansionLoc(s->getBeginLoc()));
}

// The variables an expression mentions (`model->parameters()` mentions `model`).
inline std::set<const ValueDecl*> mentioned(const Stmt* s) {
  std::set<const ValueDecl*> out;
  if (!s) return out;
  std::vector<const Stmt*> todo = {s};
  while (!todo.empty()) {
    const Stmt* x = todo.back();
    todo.pop_back();
    if (!x) continue;
    if (auto* ref = dyn_cast<DeclRefExpr>(x)) out.insert(ref->getDecl());
    if (auto* m = dyn_cast<MemberExpr>(x)) out.insert(m->getMemberDecl());
    for (const Stmt* c : x->children()) todo.push_back(c);
  }
  return out;
}

}  // namespace torchlint::cpp::api
