// TL105 scheduler-never-stepped: a learning-rate scheduler is created and never stepped, so
// the learning rate stays at its initial value.
#include <algorithm>
#include <cstring>

#include "catalog.h"
#include "core/text.h"
#include "python/rule.h"
#include "python/shared/training_loop.h"

namespace torchlint {
namespace python {
namespace {

using namespace loop_util;

bool starts_upper(std::string_view s) { return !s.empty() && s[0] >= 'A' && s[0] <= 'Z'; }

// Constructors and factories of learning-rate schedulers.
bool creates_scheduler(std::string_view q) {
  if (q.starts_with("torch.optim.lr_scheduler.")) {
    std::string_view cls = last_dotted_part(q);
    // The base classes are subclassed, not built.
    return starts_upper(cls) && cls != "LRScheduler" && cls != "_LRScheduler" &&
           q.find('.', 25) == std::string_view::npos;
  }
  if (q == "torch.optim.swa_utils.SWALR") return true;
  if (q.starts_with("transformers.")) {
    std::string_view fn = last_dotted_part(q);
    return fn.starts_with("get_") && (fn.find("schedule") != std::string_view::npos);
  }
  return false;
}

// How a scheduler's name is used in the code that can see it.
struct Uses {
  bool stepped = false;  // `sched.step()`, `step = sched.step`
  bool escapes = false;  // passed, returned, stored, aliased: someone else may step it
};

// The attribute name `.attr` of a use, when `n` is the object of an attribute access.
std::string_view accessed_attribute(TSNode n, std::string_view source) {
  TSNode parent = ts_node_parent(n);
  if (!is_type(parent, "attribute")) return {};
  if (!ts_node_eq(field(parent, Syntax::get().fields().object), n)) return {};
  return node_text(field(parent, Syntax::get().fields().attribute), source);
}

// Whether `n` is (part of) the target of an assignment (`sched = ...`, `for sched in`).
bool is_binding_target(TSNode n) {
  const Fields& f = Syntax::get().fields();
  TSNode child = n;
  TSNode parent = ts_node_parent(n);
  for (int depth = 0; depth < 8 && !ts_node_is_null(parent); ++depth) {
    const char* t = ts_node_type(parent);
    if (std::strcmp(t, "assignment") == 0 || std::strcmp(t, "augmented_assignment") == 0) {
      return ts_node_eq(field(parent, f.left), child);
    }
    if (std::strcmp(t, "pattern_list") != 0 && std::strcmp(t, "tuple_pattern") != 0 &&
        std::strcmp(t, "list_pattern") != 0) {
      return std::strcmp(t, "keyword_argument") == 0 && ts_node_eq(field(parent, f.name), child);
    }
    child = parent;
    parent = ts_node_parent(parent);
  }
  return false;
}

// One look over the code that can reach the name: `scope` for a local, the module for a
// global or an attribute. Done only for schedulers not already seen stepped.
Uses find_uses(TSNode scope, std::string_view name, bool attribute, std::string_view source) {
  Uses uses;
  const Fields& f = Syntax::get().fields();
  std::vector<TSNode> stack{scope};
  while (!stack.empty() && !(uses.stepped && uses.escapes)) {
    TSNode n = stack.back();
    stack.pop_back();
    TSNode use{};
    if (!attribute && is_type(n, "identifier") && node_text(n, source) == name) use = n;
    if (attribute && is_type(n, "attribute") && node_text(field(n, f.attribute), source) == name) use = n;
    if (!ts_node_is_null(use)) {
      TSNode parent = ts_node_parent(use);
      bool is_attribute_name =
          !attribute && is_type(parent, "attribute") && ts_node_eq(field(parent, f.attribute), use);
      bool is_parameter = is_type(parent, "parameters") || is_type(parent, "default_parameter") ||
                          is_type(parent, "typed_parameter") || is_type(parent, "typed_default_parameter");
      if (!is_attribute_name && !is_parameter && !is_binding_target(use)) {
        std::string_view attr = accessed_attribute(use, source);
        // `global sched` makes a local visible to every function of the module.
        if (attr == "step")
          uses.stepped = true;
        else if (attr.empty() && !is_type(parent, "delete_statement"))
          uses.escapes = true;
      }
      if (attribute) {
        stack.push_back(field(n, f.object));
        continue;
      }
    }
    append_named_children_reversed(n, stack);
  }
  return uses;
}

struct Created {
  TSNode call{};
  std::string name;     // the variable or attribute name
  std::string spelled;  // as written: `sched`, `self.scheduler`
  bool attribute = false;
  bool global = false;
  bool in_derived_class = false;  // self.x in a class whose project bases may step it
  TSNode scope{};                 // the function that holds a local
};

class SchedulerNeverStepped final : public Rule {
 public:
  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    if (call.method == "step" && !ts_node_is_null(call.receiver)) {
      std::string_view r = model.text(call.receiver);
      // Named, so that `self.scheduler` created here and stepped by a method in another
      // file (a subclass, a mixin) is found.
      ctx.add_fact("steps-scheduler:" + key(r));
      // Kept so that module end can see most schedulers stepped without a walk of their
      // scope (one walk per scheduler is most of this rule's cost in a long script).
      Kind rk = Syntax::get().kind(call.receiver);
      if (rk == Kind::kIdentifier) {
        step_calls_.push_back({false, std::string(r), ts_node_start_byte(call.receiver)});
      } else if (rk == Kind::kAttribute) {
        std::string_view attribute = model.text(field(call.receiver, Syntax::get().fields().attribute));
        step_calls_.push_back({true, std::string(attribute), ts_node_start_byte(call.receiver)});
      }
    }
    if (!call.qualname || !creates_scheduler(*call.qualname) || ts_node_is_null(call.assigned_to)) return;
    // Created inline as an argument, in a return, in a list: it is handed on, not dropped.
    TSNode target = call.assigned_to;
    Kind tk = Syntax::get().kind(target);
    Created c;
    c.call = call.node;
    c.spelled = std::string(model.text(target));
    if (tk == Kind::kIdentifier) {
      c.name = c.spelled;
      c.global = !model.in_function();
      c.scope = model.function().node;
    } else if (tk == Kind::kAttribute) {
      TSNode object = field(target, Syntax::get().fields().object);
      // `trainer.scheduler = ...`: stored on another object that steps it.
      if (!(Syntax::get().kind(object) == Kind::kIdentifier && model.text(object) == "self")) return;
      c.name = std::string(model.text(field(target, Syntax::get().fields().attribute)));
      c.attribute = true;
      if (const ClassInfo* cls = model.enclosing_class()) {
        // A base class (HF Trainer, a project base trainer) may step what the subclass
        // creates; a plain nn.Module does not.
        for (const auto& base : cls->bases) {
          if (base != api::kModule && base != "builtins.object") c.in_derived_class = true;
        }
      }
    } else {
      return;  // stored in a container or unpacked: cannot follow
    }
    created_.push_back(std::move(c));
  }

  void on_module_end(RuleContext& ctx) override {
    if (created_.empty()) return;
    std::string_view source = ctx.model().source();
    TSNode root = ts_tree_root_node(created_.front().call.tree);
    const bool well_formed = !ts_node_has_error(root);
    for (const auto& c : created_) {
      // A class that derives from another project class may be stepped by its base.
      if (c.in_derived_class) continue;
      bool local = !c.attribute && !c.global && !ts_node_is_null(c.scope);
      TSNode scope = local ? c.scope : root;
      // `name.step()` (or `x.name.step()` for an attribute) inside the scope is a use that
      // find_uses would count as a step: no walk needed. In a tree without errors the call
      // events cover every call; "step" itself is left to the walk (as an attribute name
      // it would match the callee too).
      if (well_formed && c.name != "step") {
        uint32_t from = ts_node_start_byte(scope), to = ts_node_end_byte(scope);
        bool stepped = std::any_of(step_calls_.begin(), step_calls_.end(), [&](const StepCall& s) {
          return s.attribute == c.attribute && s.name == c.name && from <= s.start && s.start < to;
        });
        if (stepped) continue;
      }
      Uses uses = find_uses(scope, c.name, c.attribute, source);
      if (uses.stepped || uses.escapes) continue;
      std::vector<ProjectCondition> conditions;
      if (!local) {
        // A global or an attribute may be stepped from another file.
        conditions.push_back({ProjectCondition::Kind::kProjectLacks, {}, "steps-scheduler:" + key(c.name), ""});
      }
      ctx.report(c.call,
                 "learning-rate scheduler `" + c.spelled +
                     "` is created but never stepped: the learning rate stays at its initial value for the whole "
                     "run; call `" +
                     c.spelled + ".step()` after `optimizer.step()` (per batch or per epoch, as the schedule expects)",
                 std::nullopt, std::move(conditions));
    }
    created_.clear();
    step_calls_.clear();
  }

 private:
  struct StepCall {
    bool attribute;    // the receiver is `x.name`, not a bare name
    std::string name;  // the bare name, or the attribute's name
    uint32_t start;    // of the receiver
  };
  std::vector<Created> created_;
  std::vector<StepCall> step_calls_;
};

}  // namespace
}  // namespace python

python::RuleEntry scheduler_never_stepped_rule() {
  return python::rule_entry<python::SchedulerNeverStepped>(catalog_entry("TL105"));
}

}  // namespace torchlint
