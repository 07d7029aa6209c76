// TL404 sampler-set-epoch-missing: a shuffling DistributedSampler whose epoch is never set.
#include <cctype>

#include "catalog.h"
#include "core/text.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

constexpr const char* kFactSetsEpoch = "sets-sampler-epoch";
// Training driven by a framework that calls `set_epoch` on the samplers it finds.
constexpr const char* kFactFramework = "framework-sets-epoch";

bool is_distributed_sampler(const std::optional<std::string>& q) {
  return q == "torch.utils.data.DistributedSampler" || q == "torch.utils.data.distributed.DistributedSampler";
}

bool is_framework(std::string_view q) {
  for (std::string_view prefix :
       {"lightning.", "pytorch_lightning.", "lightning_fabric.", "accelerate.", "transformers.Trainer",
        "transformers.trainer.", "transformers.Seq2SeqTrainer", "deepspeed.", "composer.", "ignite."}) {
    if (q.starts_with(prefix)) return true;
  }
  return false;
}

// Evaluation samplers are shuffled the same way every epoch, which is harmless.
bool names_evaluation(std::string_view name) {
  std::string n = ascii_lower(name);
  for (std::string_view w : {"val", "test", "eval", "dev"}) {
    if (n.find(w) != std::string::npos) return true;
  }
  return false;
}

// The names around a sampler built inside an expression:
// `sampler = DistributedSampler(ds) if distributed else None` names the sampler;
// `val_loader = DataLoader(ds, sampler=DistributedSampler(ds))` names its loader.
struct Names {
  std::string sampler;
  std::string loader;
};

Names enclosing_names(TSNode node, const SemanticModel& model) {
  const Syntax& syn = Syntax::get();
  Names out;
  bool in_argument = false;
  TSNode p = node;
  for (int depth = 0; depth < 6; ++depth) {
    p = ts_node_parent(p);
    if (ts_node_is_null(p)) break;
    Kind k = syn.kind(p);
    if (k == Kind::kArgumentList || k == Kind::kKeywordArgument) in_argument = true;
    if (k == Kind::kAssignment) {
      TSNode left = field(p, syn.fields().left);
      if (syn.kind(left) == Kind::kAttribute) left = field(left, syn.fields().attribute);
      if (syn.kind(left) != Kind::kIdentifier) break;
      (in_argument ? out.loader : out.sampler) = std::string(model.text(left));
      break;
    }
    if (k == Kind::kExpressionStatement || k == Kind::kBlock) break;
  }
  return out;
}

struct Candidate {
  TSNode call{};
  std::string name;
  std::string loader;  // for a sampler built inline in a DataLoader call
};

class SamplerSetEpochMissing final : public Rule {
 public:
  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    if (call.method == "set_epoch") {
      ctx.add_fact(kFactSetsEpoch);
      return;
    }
    if (call.qualname && is_framework(*call.qualname)) {
      ctx.add_fact(kFactFramework);
      framework_ = true;
    }
    if (!is_distributed_sampler(call.qualname) || call.has_kwargs_splat || call.has_args_splat) return;
    TSNode shuffle = call.keyword("shuffle", model.source());
    if (ts_node_is_null(shuffle)) shuffle = call.positional(3);
    // shuffle=False needs no epoch; a variable is decided at run time.
    if (!ts_node_is_null(shuffle) && Syntax::get().kind(shuffle) != Kind::kTrue) return;
    Candidate c;
    c.call = call.node;
    const Syntax& syn = Syntax::get();
    TSNode target = call.assigned_to;
    if (!ts_node_is_null(target) && syn.kind(target) == Kind::kAttribute)
      target = field(target, syn.fields().attribute);
    if (!ts_node_is_null(target) && syn.kind(target) == Kind::kIdentifier) c.name = std::string(ctx.text(target));
    if (c.name.empty()) {
      Names names = enclosing_names(call.node, model);
      c.name = names.sampler;
      c.loader = names.loader;
    }
    if (names_evaluation(c.name) || names_evaluation(c.loader)) return;
    candidates_.push_back(std::move(c));
  }

  void on_class_end(const ClassInfo& cls, TSNode, RuleContext& ctx) override {
    for (const auto& base : cls.bases) {
      if (is_framework(base)) {
        framework_ = true;
        ctx.add_fact(kFactFramework);
      }
    }
  }

  void on_module_end(RuleContext& ctx) override {
    if (!framework_) {
      using K = ProjectCondition::Kind;
      // An entry script is one program: what it reaches decides. A library module's
      // samplers may get their epoch from any script of the project.
      std::vector<ProjectCondition> conditions;
      const SemanticModel& model = ctx.model();
      if (model.has_main_guard()) {
        std::vector<std::string> roots{model.function().qualname};
        conditions = {{K::kReachableLacks, roots, kFactSetsEpoch, "epoch"},
                      {K::kReachableLacks, roots, kFactFramework, ""}};
      } else {
        conditions = {{K::kProjectLacks, {}, kFactSetsEpoch, ""}, {K::kProjectLacks, {}, kFactFramework, ""}};
      }
      for (const auto& c : candidates_) {
        std::string who = c.name.empty() ? "`DistributedSampler`" : "`DistributedSampler` `" + c.name + "`";
        std::string target = !c.name.empty() ? c.name : (c.loader.empty() ? "loader" : c.loader) + ".sampler";
        ctx.report(c.call,
                   who +
                       " shuffles, but `set_epoch(epoch)` is never called: the shuffle is seeded by the epoch, so "
                       "every epoch visits the samples in the same order; call `" +
                       target + ".set_epoch(epoch)` at the start of each epoch, before iterating the loader",
                   std::nullopt, conditions);
      }
    }
    candidates_.clear();
    framework_ = false;
  }

 private:
  std::vector<Candidate> candidates_;
  bool framework_ = false;
};

}  // namespace
}  // namespace python

python::RuleEntry sampler_set_epoch_missing_rule() {
  return python::rule_entry<python::SamplerSetEpochMissing>(catalog_entry("TL404"));
}

}  // namespace torchlint
