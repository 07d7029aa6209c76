#pragma once
// What the checkpoint rules (TL301–TL303) agree a training checkpoint is, and the small
// pieces of knowledge the serialization and serving rules share (TL306, TL701–TL703):
// which optimizers and LR schedulers the code has, which names hold models, which calls
// are library calls. The trackers are shared analyses (computed once per file, see
// Analysis); each rule decides what is missing. Which functions are request handlers is
// the serving rules' own analysis (rules/python/shared/serving.h).
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "rule.h"

namespace torchlint::python {

// --- Names -----------------------------------------------------------------------

// Lower-case `_`-separated tokens of the last component of a dotted name.
std::vector<std::string> name_tokens(std::string_view name);
// A variable named like an optimizer (`optimizer`, `g_optim`, `optimizer_d`), not like its
// configuration or state (`optimizer_cfg`, `optimizer_name`, `optim_state`) nor like
// command-line options (`opt`). Stricter than api::receiver_names_optimizer, which judges
// the receiver of a `.step()` or `.zero_grad()` (the call already says "optimizer", so
// `opt.step()` is one): here nothing but the name says what an assignment target or a
// parameter holds, and a wrong "yes" makes the checkpoint rules ask for an object to be
// saved that is not an optimizer.
bool variable_names_optimizer(std::string_view name);
// A variable named like an LR scheduler (`scheduler`, `lr_scheduler`, `sched`), not a
// diffusion noise scheduler or a schedule's configuration. Strict in the same way.
bool variable_names_scheduler(std::string_view name);
// A variable named like a model (`model`, `net`, `ema_model`, `backbone`).
bool names_model(std::string_view name);
// The object an expression is rooted at: `model` for `model.module.to(d)`, `self.net`
// for `self.net.module`; empty for anything else (calls of calls, subscripts).
std::string receiver_root(TSNode expr, const SemanticModel& model);
// The function's parameter names in order, without a method's `self`/`cls`.
std::vector<std::string> parameter_names(TSNode function_definition, const SemanticModel& model);
// The top-level package of a qualified name is a third-party or standard library one.
bool is_library_name(std::string_view qualname);

// --- Optimizers and schedulers ------------------------------------------------------

struct TrainingObject {
  ValueKind kind = ValueKind::kUnknown;  // kOptimizer or kScheduler
  std::string name;                      // as written: "opt", "self.optimizer"
  std::vector<std::string> aliases;      // names later bound to the same object: `optimizer = opt`
  uint32_t line = 0;
  // Where it is bound (the assignment target, or the parameter): a finding's related
  // location. Both 0 when unknown.
  uint32_t start_byte = 0, end_byte = 0;
  std::string owner;          // the function that assigns it, or the class for self.x
  std::string function_name;  // short name of that function ("" at module level)
  bool parameter = false;
  bool self_attribute = false;
};

// Records the optimizers and LR schedulers a file creates (by constructor, factory or a
// name that says so), so rules can ask which ones a function, class or module has.
class TrainingObjects final : public Analysis {
 public:
  void on_assign(const AssignEvent& event, RuleContext& ctx) override;
  // The current function's parameters of `kind` (annotation or name).
  std::vector<TrainingObject> parameters(RuleContext& ctx, ValueKind kind) const;
  // Assigned in function `owner` (a function qualname) or as `self.x` in class `owner`.
  std::vector<TrainingObject> owned_by(const std::string& owner, ValueKind kind) const;
  std::vector<TrainingObject> all(ValueKind kind) const;

 private:
  bool alias_existing(std::string_view name, TSNode value, const std::string& owner, const SemanticModel& model);
  std::vector<TrainingObject> objects_;
};

// --- Training checkpoints -----------------------------------------------------------

// What a checkpoint dict visibly holds.
struct CheckpointDict {
  bool readable = true;          // every key a literal, nothing spread in, no opaque bag
  bool model_state = false;      // model weights (a model's state_dict(), a "model"/"state_dict" key)
  bool optimizer_state = false;  // a key or value that stands for optimizer state
  bool scheduler_state = false;
  bool counter = false;            // an epoch/step/iteration key
  bool progress = false;           // any training-progress entry (counter, optimizer, loss, best metric, ...)
  std::vector<std::string> saved;  // what is saved: receivers of .state_dict() and stored objects
};

struct TrainingCheckpoint {
  TSNode node{};  // the torch.save call, or the call handing the dict to a saving helper
  CheckpointDict dict;
  std::vector<TrainingObject> optimizers;  // what the code around the save has
  std::vector<TrainingObject> schedulers;
  std::vector<ProjectCondition> conditions;  // a helper call: the helper must save that argument
  std::string function_name;                 // for messages
};

// Finds `torch.save` of a training checkpoint: a dict literal (or a dict built in the same
// function) holding model state, saved in or after an epoch loop, or in a training or
// checkpointing function, in code that has an optimizer. Dicts handed to a project helper
// that torch.saves that argument count too (decided by the project pass).
class TrainingCheckpointTracker final : public Analysis {
 public:
  void on_start(RuleContext& ctx) override;
  void on_call(const CallEvent& call, RuleContext& ctx) override;
  void on_assign(const AssignEvent& event, RuleContext& ctx) override;
  void on_loop_end(const LoopState& loop, RuleContext& ctx) override;
  void on_function_end(const FunctionState& fn, RuleContext& ctx) override;
  void on_module_end(RuleContext& ctx) override { checkpoints_ = finish(ctx); }
  // The training checkpoints of the file, once it has been read to the end (the rules'
  // on_module_end).
  const std::vector<TrainingCheckpoint>& checkpoints() const { return checkpoints_; }

  // Whether `object` is saved in `checkpoint` (by name, or by a key when the dict names
  // no other object of the same kind).
  static bool saves(const TrainingCheckpoint& checkpoint, const TrainingObject& object);
  // The first of `objects` that `checkpoint` does not save, or null.
  static const TrainingObject* first_unsaved(const TrainingCheckpoint& checkpoint,
                                             const std::vector<TrainingObject>& objects);
  // How a finding names `object`: "'opt' created at line 40", "'opt' parameter of `fit` at line 12".
  static std::string describe(const TrainingObject& object, const TrainingCheckpoint& checkpoint);

 private:
  struct LocalDict {
    size_t id = 0;
    std::string function;
    std::string name;
    CheckpointDict dict;
  };
  struct Candidate {
    TSNode node{};
    CheckpointDict dict;
    size_t dict_id = 0;    // 0 for literals
    std::string function;  // qualname
    std::string function_name;
    std::string class_qualname;
    bool module_level = false;
    bool in_loop = false;
    bool weights_only = false;     // `torch.save(model.state_dict(), ...)`: a checkpoint only when it repeats
    bool epoch_loop = false;       // an enclosing loop runs epochs or training steps
    bool after_loop = false;       // a training/epoch loop of this function ended before
    bool function_trains = false;  // filled in at function end
    bool decided = false;          // function facts are final
    std::vector<TrainingObject> parameters_optimizers;
    std::vector<TrainingObject> parameters_schedulers;
    std::vector<ProjectCondition> conditions;
  };
  struct SavingFunction {
    std::vector<std::string> saved_parameters;
    bool saves_other = false;
    std::unordered_set<std::string> mutated;
  };

  LocalDict* local_dict(const std::string& function, std::string_view name);
  std::optional<CheckpointDict> dict_of(TSNode expr, RuleContext& ctx, size_t* id);
  void add_candidate(TSNode node, CheckpointDict dict, size_t dict_id, std::vector<ProjectCondition> conditions,
                     RuleContext& ctx);
  std::vector<TrainingCheckpoint> finish(RuleContext& ctx);

  TrainingObjects* objects_ = nullptr;  // shared, fed before this tracker
  std::vector<TrainingCheckpoint> checkpoints_;
  std::vector<LocalDict> dicts_;
  size_t next_dict_id_ = 1;
  std::vector<Candidate> candidates_;
  std::unordered_set<std::string> functions_after_training_loop_;
  std::unordered_map<std::string, SavingFunction> saving_;
};

// Reads a dict literal or `dict(...)` call into what it holds; nullopt when `expr` is neither.
std::optional<CheckpointDict> read_checkpoint_dict(TSNode expr, const SemanticModel& model);

}  // namespace torchlint::python
