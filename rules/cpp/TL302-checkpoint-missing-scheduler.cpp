// TL302 checkpoint-missing-scheduler (C++): a training checkpoint in a program that has an LR scheduler but saves
// neither its position nor a counter.
#include "cpp/checkpoint_facts.h"

namespace torchlint::cpp {
namespace tl302 {
using namespace api;

class RuleTL302 final : public Rule {
 public:
  using Rule::Rule;
  void register_matchers(MatchFinder& f) override { facts_.add_matchers(f, this); }
  void run(const MatchFinder::MatchResult& r) override { facts_.on_match(r); }
  void finish() override {
    if (facts_.schedulers().empty() || facts_.scheduler_saved()) return;
    if (const Stmt* checkpoint = facts_.first_checkpoint(ctx_.ast())) {
      ctx_.report("TL302", checkpoint,
                  "this training checkpoint saves neither LR scheduler `" +
                      facts_.schedulers().front()->getNameAsString() +
                      "`'s position nor an epoch/step counter: a resumed run restarts the schedule; save the epoch "
                      "(`archive.write(\"epoch\", ...)`) and step the scheduler to it on resume");
    }
  }

 private:
  CheckpointFacts facts_;
};

}  // namespace tl302
std::unique_ptr<Rule> make_checkpoint_missing_scheduler(Context& c) { return std::make_unique<tl302::RuleTL302>(c); }
}  // namespace torchlint::cpp
