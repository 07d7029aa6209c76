// TL303 checkpoint-missing-epoch (C++): a training checkpoint in a program that saves no epoch/step counter.
#include "cpp/checkpoint_facts.h"

namespace torchlint::cpp {
namespace tl303 {
using namespace api;

class RuleTL303 final : public Rule {
 public:
  using Rule::Rule;
  void register_matchers(MatchFinder& f) override { facts_.add_matchers(f, this); }
  void run(const MatchFinder::MatchResult& r) override { facts_.on_match(r); }
  void finish() override {
    if (facts_.counter_saved()) return;
    if (const Stmt* checkpoint = facts_.first_checkpoint(ctx_.ast())) {
      ctx_.report("TL303", checkpoint,
                  std::string("this training checkpoint saves no epoch or step counter (a number in the file name is "
                              "never read back): a resumed run restarts from epoch 0; write it into the archive "
                              "(`archive.write(\"epoch\", torch::tensor(epoch))`)"));
    }
  }

 private:
  CheckpointFacts facts_;
};

}  // namespace tl303
std::unique_ptr<Rule> make_checkpoint_missing_epoch(Context& c) { return std::make_unique<tl303::RuleTL303>(c); }
}  // namespace torchlint::cpp
