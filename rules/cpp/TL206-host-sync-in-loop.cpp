// TL206 host-sync-in-loop (C++): `.item<T>()`, `.cpu()` or printing a tensor on every
// iteration of the loop that steps an optimizer (itself or through a helper it calls),
// also inside a checking macro's argument (`AT_ASSERT(loss.item<float>() > 0)`).
#include "cpp/torch_api.h"

namespace torchlint::cpp {
namespace tl206 {
using namespace api;

class HostSync final : public Rule {
 public:
  using Rule::Rule;
  void register_matchers(MatchFinder& f) override {
    graph_.add_matchers(f, this);
    f.addMatcher(optimizer_call("step").bind("step"), this);
    f.addMatcher(member_call("item", tensor_class()).bind("sync"), this);
    f.addMatcher(member_call("cpu", tensor_class()).bind("sync"), this);
    f.addMatcher(cxxOperatorCallExpr(hasOverloadedOperatorName("<<"), hasArgument(1, expr(hasType(tensor_class()))))
                     .bind("sync"),
                 this);
  }
  void run(const MatchFinder::MatchResult& r) override {
    if (graph_.on_match(r)) return;
    if (auto* s = r.Nodes.getNodeAs<CallExpr>("step")) {
      graph_.mark(s, *r.Context);
      if (const Stmt* loop = innermost_loop(s, *r.Context)) training_loops_.insert(loop);
    }
    // A call LibTorch's own macros make (the macro body is in its header) is not the user's.
    if (auto* s = r.Nodes.getNodeAs<CallExpr>("sync"); s && written_in_main_file(s, *r.SourceManager))
      syncs_.push_back(s);
  }
  void finish() override {
    ASTContext& ast = ctx_.ast();
    // A loop that calls a training-step helper steps the optimizer too.
    for (const auto& [call, callee] : graph_.calls()) {
      if (!graph_.reaches(callee)) continue;
      if (const Stmt* loop = innermost_loop(call, ast)) training_loops_.insert(loop);
    }
    std::set<const Stmt*> statements;
    for (const CallExpr* s : syncs_) {
      const Stmt* loop = innermost_loop(s, ast);
      if (!loop || !training_loops_.contains(loop)) continue;
      if (conditional_between(s, loop, ast)) continue;  // `if (batch % log_interval == 0)`
      if (!statements.insert(block_statement(s, ast)).second) continue;
      std::string what = "printing a tensor";
      if (auto* m = dyn_cast<CXXMemberCallExpr>(s)) what = "`." + m->getMethodDecl()->getNameAsString() + "()`";
      ctx_.report("TL206", s,
                  what +
                      " copies to the host and waits for the GPU on every training step; accumulate on the device "
                      "and read it every N steps (`if (batch_idx % log_interval == 0)`)");
    }
  }

 private:
  CallGraph graph_;
  std::set<const Stmt*> training_loops_;
  std::vector<const CallExpr*> syncs_;
};

}  // namespace tl206
std::unique_ptr<Rule> make_host_sync_in_loop(Context& c) { return std::make_unique<tl206::HostSync>(c); }
}  // namespace torchlint::cpp
