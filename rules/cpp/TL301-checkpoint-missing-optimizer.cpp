// TL301 checkpoint-missing-optimizer (C++): a training checkpoint in a program that has an optimizer but never saves
// it.
#include "cpp/checkpoint_facts.h"

namespace torchlint::cpp {
namespace tl301 {
using namespace api;

class RuleTL301 final : public Rule {
 public:
  using Rule::Rule;
  void register_matchers(MatchFinder& f) override { facts_.add_matchers(f, this); }
  void run(const MatchFinder::MatchResult& r) override { facts_.on_match(r); }
  void finish() override {
    if (facts_.optimizers().empty() || facts_.optimizer_saved()) return;
    if (const Stmt* checkpoint = facts_.first_checkpoint(ctx_.ast())) {
      ctx_.report("TL301", checkpoint,
                  "this training checkpoint saves the model but the program never saves optimizer `" +
                      facts_.optimizers().front()->getNameAsString() +
                      "`: a resumed run restarts its momentum/Adam state; also `torch::save(" +
                      facts_.optimizers().front()->getNameAsString() + ", \"optimizer.pt\")`");
    }
  }

 private:
  CheckpointFacts facts_;
};

}  // namespace tl301
std::unique_ptr<Rule> make_checkpoint_missing_optimizer(Context& c) { return std::make_unique<tl301::RuleTL301>(c); }
}  // namespace torchlint::cpp
