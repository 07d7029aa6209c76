#include "training_checkpoint.h"

#include <algorithm>
#include <cctype>
#include <span>

#include "core/name_table.h"
#include "core/text.h"

namespace torchlint::python {

namespace {

// The lower-case `_`-separated tokens of the last component of a dotted name, without
// heap allocation for the short names code uses (what name_tokens returns, as views).
class Tokens {
 public:
  explicit Tokens(std::string_view name) {
    name = last_dotted_part(name);
    if (name.size() > sizeof(buf_)) {
      heap_.assign(name);
      text_ = heap_.data();
    } else {
      text_ = buf_;
    }
    for (size_t i = 0; i < name.size(); ++i) text_[i] = ascii_lower_char(name[i]);
    size_t i = 0;
    while (i < name.size()) {
      while (i < name.size() && !std::isalnum(static_cast<unsigned char>(text_[i]))) ++i;
      size_t start = i;
      while (i < name.size() && std::isalnum(static_cast<unsigned char>(text_[i]))) ++i;
      if (i > start) add({text_ + start, i - start});
    }
  }
  Tokens(const Tokens&) = delete;
  Tokens& operator=(const Tokens&) = delete;

  bool has(std::initializer_list<std::string_view> wanted) const {
    for (size_t t = 0; t < count_; ++t) {
      std::string_view token = at(t);
      for (std::string_view w : wanted) {
        if (token == w) return true;
      }
    }
    return false;
  }

 private:
  static constexpr size_t kInline = 16;
  void add(std::string_view token) {
    if (count_ < kInline)
      inline_[count_] = token;
    else
      more_.push_back(token);
    ++count_;
  }
  std::string_view at(size_t i) const { return i < kInline ? inline_[i] : more_[i - kInline]; }

  char buf_[64];
  std::string heap_;
  char* text_ = nullptr;
  std::string_view inline_[kInline];
  std::vector<std::string_view> more_;
  size_t count_ = 0;
};

bool has_token(const Tokens& tokens, std::initializer_list<std::string_view> wanted) { return tokens.has(wanted); }

// Tokens that make a name describe a thing's configuration rather than the thing.
bool has_config_token(const Tokens& tokens) {
  return has_token(tokens, {"cfg",     "config", "conf",  "name", "names", "type",    "types",   "args", "kwargs",
                            "params",  "cls",    "class", "fn",   "func",  "factory", "builder", "spec", "kind",
                            "hparams", "path",   "dir",   "file", "id",    "str",     "dict",    "list"});
}

}  // namespace

// ---------------------------------------------------------------------------------
// Names

std::vector<std::string> name_tokens(std::string_view name) {
  std::vector<std::string> out;
  std::string current;
  for (char c : ascii_lower(last_dotted_part(name))) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      current += c;
    } else if (!current.empty()) {
      out.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) out.push_back(std::move(current));
  return out;
}

bool variable_names_optimizer(std::string_view name) {
  // Every optimizer token below contains "optim": a cheap test that rules out most names
  // before they are split into tokens.
  if (ascii_ifind(last_dotted_part(name), "optim") == std::string_view::npos) return false;
  Tokens tokens(name);
  if (has_config_token(tokens) || has_token(tokens, {"state", "sd", "lr", "scheduler", "sched"})) return false;
  return has_token(tokens, {"optimizer", "optimizers", "optimiser", "optimisers", "optim", "optims"});
}

bool variable_names_scheduler(std::string_view name) {
  // Every scheduler token below contains "sched" or "lrs".
  std::string_view last = last_dotted_part(name);
  if (ascii_ifind(last, "sched") == std::string_view::npos && ascii_ifind(last, "lrs") == std::string_view::npos)
    return false;
  Tokens tokens(name);
  if (has_config_token(tokens) || has_token(tokens, {"noise", "state", "sd", "ddpm", "ddim", "diffusion"}))
    return false;
  return has_token(tokens, {"scheduler", "schedulers", "sched", "lrscheduler", "lrs"});
}

bool names_model(std::string_view name) {
  std::string n = ascii_lower(last_dotted_part(name));
  static const NameSet exact = {
      "model", "net",      "network", "classifier", "encoder", "decoder", "generator", "discriminator", "netg",
      "netd",  "backbone", "policy",  "ema_model",  "teacher", "student", "module",    "models",
  };
  if (n == "module") return false;  // `model.module`: the wrapper's inner model, named by its root
  return exact.contains(n) || n.ends_with("_model") || n.starts_with("model_") || n.ends_with("_net") ||
         n.starts_with("net_");
}

std::string receiver_root(TSNode expr, const SemanticModel& model) {
  const Syntax& syn = Syntax::get();
  const Fields& f = syn.fields();
  for (int depth = 0; depth < 32 && !ts_node_is_null(expr); ++depth) {
    switch (syn.kind(expr)) {
      case Kind::kIdentifier:
        return std::string(model.text(expr));
      case Kind::kAttribute: {
        TSNode object = field(expr, f.object);
        if (syn.kind(object) == Kind::kIdentifier && model.text(object) == "self") return std::string(model.text(expr));
        expr = object;
        continue;
      }
      case Kind::kCall:
        expr = field(expr, f.function);
        if (syn.kind(expr) != Kind::kAttribute) return {};  // `f(x).y`: a value, not an object
        expr = field(expr, f.object);
        continue;
      case Kind::kParenthesizedExpression:
        expr = ts_node_named_child(expr, 0);
        continue;
      default:
        return {};
    }
  }
  return {};
}

std::vector<std::string> parameter_names(TSNode fn, const SemanticModel& model) {
  const Syntax& syn = Syntax::get();
  const Fields& f = syn.fields();
  std::vector<std::string> out;
  TSNode params = field(fn, f.parameters);
  uint32_t n = ts_node_is_null(params) ? 0 : ts_node_named_child_count(params);
  for (uint32_t i = 0; i < n; ++i) {
    TSNode p = ts_node_named_child(params, i);
    TSNode name{};
    switch (syn.kind(p)) {
      case Kind::kIdentifier:
        name = p;
        break;
      case Kind::kTypedParameter:
        name = ts_node_named_child(p, 0);
        break;
      case Kind::kDefaultParameter:
      case Kind::kTypedDefaultParameter:
        name = field(p, f.name);
        break;
      default:
        break;
    }
    if (ts_node_is_null(name) || syn.kind(name) != Kind::kIdentifier) continue;
    out.emplace_back(model.text(name));
  }
  // A method's receiver is not an argument at its call sites.
  TSNode parent = ts_node_parent(fn);
  if (!ts_node_is_null(parent) && syn.kind(parent) == Kind::kDecoratedDefinition) parent = ts_node_parent(parent);
  bool method = !ts_node_is_null(parent) && syn.kind(parent) == Kind::kBlock &&
                syn.kind(ts_node_parent(parent)) == Kind::kClassDefinition;
  if (method && !out.empty() && (out.front() == "self" || out.front() == "cls")) out.erase(out.begin());
  return out;
}

bool is_library_name(std::string_view q) {
  std::string_view top = q.substr(0, q.find('.'));
  if (api::is_external_package(top)) return true;
  return api::library_packages().contains(top);
}

// ---------------------------------------------------------------------------------
// Optimizers and schedulers

namespace {

bool optimizer_factory(std::string_view q) {
  static constexpr std::string_view prefixes[] = {"timm.optim.",      "bitsandbytes.optim.", "apex.optimizers.",
                                                  "torch_optimizer.", "deepspeed.ops.adam.", "deepspeed.ops.lamb."};
  for (auto p : prefixes) {
    if (q.starts_with(p)) return true;
  }
  return q == "transformers.AdamW" || q == "transformers.Adafactor" || q == "transformers.optimization.AdamW" ||
         q == "transformers.optimization.Adafactor";
}

bool scheduler_factory(std::string_view q) {
  return q.starts_with("timm.scheduler.") || q == "transformers.get_scheduler" ||
         q == "transformers.optimization.get_scheduler" || q == "diffusers.optimization.get_scheduler" ||
         (q.starts_with("transformers.") && q.ends_with("_schedule_with_warmup"));
}

// What an assignment `target = value` makes: an optimizer, a scheduler, or neither.
ValueKind classify_assignment(std::string_view target, TSNode value, const SemanticModel& model, bool element) {
  const Syntax& syn = Syntax::get();
  ValueInfo v = element ? ValueInfo{} : model.infer_value(value);
  if (v.kind == ValueKind::kOptimizer || v.kind == ValueKind::kScheduler) return v.kind;
  if (v.kind != ValueKind::kUnknown) return ValueKind::kUnknown;
  Kind k = syn.kind(value);
  if (k == Kind::kCall) {
    auto q = model.resolve_qualified_name(field(value, syn.fields().function));
    if (q && !element) {
      if (scheduler_factory(*q)) return ValueKind::kScheduler;
      if (optimizer_factory(*q)) return ValueKind::kOptimizer;
    }
    // Diffusion noise schedulers and the like have no optimizer state.
    if (q && q->starts_with("diffusers.") && !q->starts_with("diffusers.optimization.")) return ValueKind::kUnknown;
    if (variable_names_optimizer(target)) return ValueKind::kOptimizer;
    if (variable_names_scheduler(target)) return ValueKind::kScheduler;
    return ValueKind::kUnknown;
  }
  if (k == Kind::kIdentifier || k == Kind::kAttribute) {
    // `self.optimizer = optimizer`: a parameter handed in.
    std::string_view source = model.text(value);
    if (variable_names_optimizer(target) && variable_names_optimizer(source)) return ValueKind::kOptimizer;
    if (variable_names_scheduler(target) && variable_names_scheduler(source)) return ValueKind::kScheduler;
  }
  return ValueKind::kUnknown;
}

}  // namespace

void TrainingObjects::on_assign(const AssignEvent& event, RuleContext& ctx) {
  if (event.op != "=" || ts_node_is_null(event.value)) return;
  const SemanticModel& model = ctx.model();
  const Syntax& syn = Syntax::get();
  std::vector<TSNode> element_targets;
  bool element = false;
  Kind tk = syn.kind(event.target);
  if (tk == Kind::kPatternList || tk == Kind::kTuple) {
    // `model, optimizer, loader = accelerator.prepare(...)`: judged by name only.
    if (syn.kind(event.value) != Kind::kCall) return;
    element = true;
    append_named_children(event.target, element_targets);
  } else if (tk != Kind::kIdentifier && tk != Kind::kAttribute) {
    return;  // subscripts and the like hold nothing this tracks
  }
  const TSNode single[1] = {event.target};
  std::span<const TSNode> targets =
      element ? std::span<const TSNode>(element_targets) : std::span<const TSNode>(single);
  for (TSNode target : targets) {
    Kind k = syn.kind(target);
    std::string_view name = model.text(target);
    const std::string* owner = nullptr;
    bool self_attribute = false;
    if (k == Kind::kAttribute) {
      TSNode object = field(target, syn.fields().object);
      if (syn.kind(object) != Kind::kIdentifier || model.text(object) != "self") continue;
      const ClassInfo* cls = model.enclosing_class();
      if (!cls) continue;
      owner = &cls->qualname;
      self_attribute = true;
    } else if (k == Kind::kIdentifier) {
      owner = &model.function().qualname;
    } else {
      continue;
    }
    if (!element && alias_existing(name, event.value, *owner, model)) continue;
    ValueKind kind = classify_assignment(name, event.value, model, element);
    if (kind == ValueKind::kUnknown) continue;
    TrainingObject o;
    o.kind = kind;
    o.name = std::string(name);
    o.owner = *owner;
    o.self_attribute = self_attribute;
    o.line = ts_node_start_point(target).row + 1;
    o.start_byte = ts_node_start_byte(target);
    o.end_byte = ts_node_end_byte(target);
    o.function_name = model.function().is_module_level ? std::string() : model.function().name;
    bool known = std::any_of(objects_.begin(), objects_.end(), [&](const TrainingObject& x) {
      return x.kind == o.kind && x.owner == o.owner && x.name == o.name;
    });
    if (!known) objects_.push_back(std::move(o));
  }
}

// `optimizer = opt`: a second name for an object the same function (or, for `self.x`, the
// same class) already holds, not a second optimizer; a checkpoint may save it by either
// name. `self.opt = opt` is not an alias: it hands a local to the class, which then owns it.
bool TrainingObjects::alias_existing(std::string_view name, TSNode value, const std::string& owner,
                                     const SemanticModel& model) {
  value = unparenthesized(value);
  Kind vk = Syntax::get().kind(value);
  if (vk != Kind::kIdentifier && vk != Kind::kAttribute) return false;
  std::string_view original = model.text(value);
  for (auto& o : objects_) {
    // Same owner as the new name: both locals of this function, or both `self.x` of this
    // class (a function's and a class's qualnames never coincide).
    if (o.name != original || o.owner != owner) continue;
    if (name != o.name && std::find(o.aliases.begin(), o.aliases.end(), name) == o.aliases.end()) {
      o.aliases.emplace_back(name);
    }
    return true;
  }
  return false;
}

std::vector<TrainingObject> TrainingObjects::parameters(RuleContext& ctx, ValueKind kind) const {
  const SemanticModel& model = ctx.model();
  const FunctionState& fn = model.function();
  std::vector<TrainingObject> out;
  if (fn.is_module_level) return out;
  for (const auto& name : parameter_names(fn.node, model)) {
    const Binding* b = model.lookup(name);
    bool by_kind = b && b->value.kind == kind;
    bool by_name = (!b || b->value.kind == ValueKind::kUnknown) &&
                   (kind == ValueKind::kOptimizer ? variable_names_optimizer(name) : variable_names_scheduler(name));
    if (!by_kind && !by_name) continue;
    TrainingObject o;
    o.kind = kind;
    o.name = name;
    o.line = b ? b->line : ts_node_start_point(fn.node).row + 1;
    o.owner = fn.qualname;
    o.function_name = fn.name;
    o.parameter = true;
    out.push_back(std::move(o));
  }
  return out;
}

std::vector<TrainingObject> TrainingObjects::owned_by(const std::string& owner, ValueKind kind) const {
  std::vector<TrainingObject> out;
  for (const auto& o : objects_) {
    if (o.kind == kind && o.owner == owner) out.push_back(o);
  }
  return out;
}

std::vector<TrainingObject> TrainingObjects::all(ValueKind kind) const {
  std::vector<TrainingObject> out;
  for (const auto& o : objects_) {
    if (o.kind == kind) out.push_back(o);
  }
  return out;
}

// ---------------------------------------------------------------------------------
// Checkpoint dicts

namespace {

bool is_literal_constant(TSNode node) {
  Kind k = Syntax::get().kind(node);
  return k == Kind::kString || k == Kind::kInteger || k == Kind::kFloat || k == Kind::kTrue || k == Kind::kFalse ||
         k == Kind::kNone || is_type(node, "concatenated_string");
}

// What a key says its value is.
void read_key(std::string_view key, TSNode value, bool top, CheckpointDict& dict, std::string_view source) {
  Tokens tokens(key);
  std::string k = ascii_lower(key);
  bool constant = !ts_node_is_null(value) && is_literal_constant(value);
  bool config = has_config_token(tokens);
  if (!constant && !config &&
      (has_token(tokens, {"model", "models"}) || k == "state_dict" || k == "net" || k == "network" || k == "weights" ||
       k == "netg" || k == "netd" || k == "net_g" || k == "net_d")) {
    dict.model_state = true;
  }
  bool optimizer = k.find("optim") != std::string::npos || has_token(tokens, {"opt", "opts"});
  bool scheduler = k.find("sched") != std::string::npos;
  bool counter = k.find("epoch") != std::string::npos || k.find("step") != std::string::npos ||
                 k.find("iter") != std::string::npos ||
                 has_token(tokens, {"it", "itr", "update", "updates", "nimg", "kimg", "tick", "batches"});
  // `"optimizer": None` names the state without saving it; `"opt": vars(opt)` is the
  // command line's options, not an optimizer.
  bool none = !ts_node_is_null(value) && Syntax::get().kind(value) == Kind::kNone;
  if (!ts_node_is_null(value) && Syntax::get().kind(value) == Kind::kCall) {
    const Syntax& syn = Syntax::get();
    TSNode callee = field(value, syn.fields().function);
    if (syn.kind(callee) == Kind::kIdentifier &&
        (node_text(callee, source) == "vars" || node_text(callee, source) == "asdict"))
      none = true;
  }
  if (optimizer && !none) dict.optimizer_state = true;
  if (scheduler && !none) dict.scheduler_state = true;
  if (counter) dict.counter = true;
  if (optimizer || scheduler || counter ||
      has_token(tokens, {"scaler", "loss", "losses", "best", "lr", "rng", "amp", "ema", "history", "metric", "metrics",
                         "acc", "accuracy", "score", "val", "f1", "bleu", "perplexity", "miou"})) {
    dict.progress = true;
  }
  // A bag torchlint cannot look into may hold any of the training state.
  static const NameSet opaque = {
      "state",       "states", "train_state",  "training_state", "trainer_state", "trainer", "extra",      "extras",
      "extra_state", "resume", "resume_state", "meta",           "metadata",      "info",    "checkpoint", "ckpt",
      "progress",    "train",  "training",     "misc",           "others",        "other",
  };
  if (top && opaque.contains(k) && !ts_node_is_null(value) && !is_type(value, "dictionary")) dict.readable = false;
}

// What an object `expr` (a value stored, or the receiver of .state_dict()) is.
void read_object(TSNode expr, const SemanticModel& model, CheckpointDict& dict) {
  const Syntax& syn = Syntax::get();
  // `accelerator.unwrap_model(model).state_dict()`: the unwrapped argument.
  if (syn.kind(expr) == Kind::kCall) {
    TSNode callee = field(expr, syn.fields().function);
    if (ascii_lower(model.text(callee)).find("unwrap") != std::string::npos) {
      TSNode args = field(expr, syn.fields().arguments);
      if (!ts_node_is_null(args) && ts_node_named_child_count(args) > 0) expr = ts_node_named_child(args, 0);
    }
  }
  std::string text(model.text(expr));
  std::string root = receiver_root(expr, model);
  dict.saved.push_back(text);
  if (!root.empty() && root != text) dict.saved.push_back(root);
  ValueInfo v = model.infer_value(expr);
  // Unknown values are judged by the name of the object they are rooted at (`model.module`).
  std::string_view name = root.empty() ? std::string_view(text) : std::string_view(root);
  std::string_view last = last_dotted_part(name);
  Tokens tokens(last);
  switch (v.kind) {
    case ValueKind::kOptimizer:
      dict.optimizer_state = dict.progress = true;
      return;
    case ValueKind::kScheduler:
      dict.scheduler_state = dict.progress = true;
      return;
    case ValueKind::kModel:
      dict.model_state = true;
      return;
    case ValueKind::kUnknown:
      break;
    default:
      return;
  }
  if (variable_names_optimizer(last) || has_token(tokens, {"opt", "opts"})) {
    dict.optimizer_state = dict.progress = true;
  } else if (variable_names_scheduler(last)) {
    dict.scheduler_state = dict.progress = true;
  } else if (names_model(last)) {
    dict.model_state = true;
  }
}

void read_value(TSNode value, const SemanticModel& model, CheckpointDict& dict) {
  const Syntax& syn = Syntax::get();
  const Fields& f = syn.fields();
  Kind vk = syn.kind(value);
  if (vk == Kind::kIdentifier || vk == Kind::kAttribute) {
    read_object(value, model, dict);
    return;
  }
  // The value's subtree: .state_dict() calls and nested dicts' keys.
  std::vector<TSNode> stack{value};
  size_t budget = 4096;
  while (!stack.empty() && budget-- > 0) {
    TSNode n = stack.back();
    stack.pop_back();
    Kind k = syn.kind(n);
    if (k == Kind::kCall) {
      TSNode callee = field(n, f.function);
      if (syn.kind(callee) == Kind::kAttribute && model.text(field(callee, f.attribute)) == "state_dict") {
        read_object(field(callee, f.object), model, dict);
      }
    } else if (is_type(n, "pair")) {
      TSNode key = field(n, f.key);
      std::string_view text;
      if (string_literal_value(key, model.source(), text))
        read_key(text, field(n, f.value), false, dict, model.source());
    } else if (k == Kind::kString) {
      continue;
    }
    append_named_children_reversed(n, stack);
  }
}

void read_entries(TSNode dict_node, const SemanticModel& model, CheckpointDict& dict) {
  const Fields& f = Syntax::get().fields();
  for (TSNode c : named_children(dict_node)) {
    if (is_type(c, "pair")) {
      TSNode key = field(c, f.key);
      TSNode value = field(c, f.value);
      std::string_view text;
      if (!string_literal_value(key, model.source(), text)) {
        dict.readable = false;
        continue;
      }
      read_key(text, value, true, dict, model.source());
      if (!ts_node_is_null(value)) read_value(value, model, dict);
    } else if (is_type(c, "dictionary_splat")) {
      dict.readable = false;  // `**extra`: keys torchlint cannot see
    } else if (!is_type(c, "comment")) {
      dict.readable = false;
    }
  }
}

bool read_dict_call_arguments(TSNode args, const SemanticModel& model, CheckpointDict& dict) {
  const Syntax& syn = Syntax::get();
  const Fields& f = syn.fields();
  if (ts_node_is_null(args) || syn.kind(args) != Kind::kArgumentList) return false;
  for (TSNode a : named_children(args)) {
    Kind k = syn.kind(a);
    if (k == Kind::kComment) continue;
    if (k == Kind::kKeywordArgument) {
      TSNode value = field(a, f.value);
      read_key(model.text(field(a, f.name)), value, true, dict, model.source());
      if (!ts_node_is_null(value)) read_value(value, model, dict);
    } else if (is_type(a, "dictionary")) {
      read_entries(a, model, dict);
    } else {
      dict.readable = false;
    }
  }
  return true;
}

}  // namespace

std::optional<CheckpointDict> read_checkpoint_dict(TSNode expr, const SemanticModel& model) {
  const Syntax& syn = Syntax::get();
  if (ts_node_is_null(expr)) return std::nullopt;
  if (syn.kind(expr) == Kind::kParenthesizedExpression) expr = ts_node_named_child(expr, 0);
  CheckpointDict dict;
  if (is_type(expr, "dictionary")) {
    read_entries(expr, model, dict);
    return dict;
  }
  if (syn.kind(expr) == Kind::kCall) {
    TSNode callee = field(expr, syn.fields().function);
    if (syn.kind(callee) != Kind::kIdentifier || model.text(callee) != "dict") return std::nullopt;  // cheap test first
    auto q = model.resolve_qualified_name(callee);
    if (q != "builtins.dict") return std::nullopt;
    if (!read_dict_call_arguments(field(expr, syn.fields().arguments), model, dict)) dict.readable = false;
    return dict;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------
// Training checkpoints

namespace {

bool is_torch_save(const std::optional<std::string>& q) { return q == api::kTorchSave; }

// A loop that runs epochs or training steps.
bool is_epoch_loop(const LoopState& loop, const SemanticModel& model) {
  if (loop.calls_backward || loop.steps_optimizer) return true;
  for (const auto& e : loop.events) {
    if (e.kind == LoopEventKind::kForward || e.kind == LoopEventKind::kOptimizerStep ||
        e.kind == LoopEventKind::kBackward || e.kind == LoopEventKind::kCall) {
      return true;
    }
  }
  const Fields& f = Syntax::get().fields();
  std::string text;
  if (loop.is_for) {
    text = ascii_lower(model.text(field(loop.node, f.left))) + " " + ascii_lower(model.text(loop.iter));
  } else {
    text = ascii_lower(model.text(field(loop.node, f.condition)));
  }
  return text.find("epoch") != std::string::npos || text.find("step") != std::string::npos ||
         text.find("iter") != std::string::npos;
}

bool checkpointing_name(std::string_view function_name) {
  return has_token(Tokens(function_name), {"train", "training", "fit", "save", "checkpoint", "checkpoints", "ckpt",
                                           "snapshot", "epoch", "resume", "checkpointing"});
}

}  // namespace

TrainingCheckpointTracker::LocalDict* TrainingCheckpointTracker::local_dict(const std::string& function,
                                                                            std::string_view name) {
  for (auto& d : dicts_) {
    if (d.function == function && d.name == name) return &d;
  }
  return nullptr;
}

std::optional<CheckpointDict> TrainingCheckpointTracker::dict_of(TSNode expr, RuleContext& ctx, size_t* id) {
  *id = 0;
  if (auto d = read_checkpoint_dict(expr, ctx.model())) return d;
  if (Syntax::get().kind(expr) == Kind::kIdentifier) {
    if (LocalDict* d = local_dict(ctx.model().function().qualname, ctx.text(expr))) {
      *id = d->id;
      return d->dict;
    }
  }
  return std::nullopt;
}

void TrainingCheckpointTracker::add_candidate(TSNode node, CheckpointDict dict, size_t dict_id,
                                              std::vector<ProjectCondition> conditions, RuleContext& ctx) {
  const SemanticModel& model = ctx.model();
  const FunctionState& fn = model.function();
  Candidate c;
  c.node = node;
  c.dict = std::move(dict);
  c.dict_id = dict_id;
  c.function = fn.qualname;
  c.function_name = fn.is_module_level ? std::string() : fn.name;
  if (const ClassInfo* cls = model.enclosing_class()) c.class_qualname = cls->qualname;
  c.module_level = fn.is_module_level;
  c.in_loop = model.loop_depth() > 0;
  for (size_t i = fn.loop_base; i < model.loops().size(); ++i) {
    if (is_epoch_loop(model.loops()[i], model)) c.epoch_loop = true;
  }
  c.after_loop = functions_after_training_loop_.contains(fn.qualname);
  c.parameters_optimizers = objects_->parameters(ctx, ValueKind::kOptimizer);
  c.parameters_schedulers = objects_->parameters(ctx, ValueKind::kScheduler);
  c.conditions = std::move(conditions);
  candidates_.push_back(std::move(c));
}

void TrainingCheckpointTracker::on_start(RuleContext& ctx) { objects_ = &ctx.analysis<TrainingObjects>(); }

void TrainingCheckpointTracker::on_assign(const AssignEvent& event, RuleContext& ctx) {
  const SemanticModel& model = ctx.model();
  const Syntax& syn = Syntax::get();
  const std::string& fn = model.function().qualname;
  Kind tk = syn.kind(event.target);
  if (tk == Kind::kIdentifier) {
    if (event.op != "=") return;
    std::string_view name = model.text(event.target);
    auto d = ts_node_is_null(event.value) ? std::nullopt : read_checkpoint_dict(event.value, model);
    LocalDict* existing = local_dict(fn, name);
    if (d) {
      if (!existing) {
        dicts_.push_back({0, fn, std::string(name), {}});
        existing = &dicts_.back();
      }
      existing->id = next_dict_id_++;
      existing->dict = std::move(*d);
    } else if (existing) {
      existing->name.clear();  // rebound to something else
    }
    return;
  }
  if (is_type(event.target, "subscript")) {
    TSNode object = field(event.target, syn.fields().value);
    if (syn.kind(object) != Kind::kIdentifier) return;
    std::string_view name = model.text(object);
    saving_[fn].mutated.insert(std::string(name));
    LocalDict* d = local_dict(fn, name);
    if (!d) return;
    TSNode key = field(event.target, syn.fields().subscript);
    std::string_view text;
    if (event.op != "=" || !string_literal_value(key, model.source(), text)) {
      d->dict.readable = false;
      return;
    }
    read_key(text, event.value, true, d->dict, model.source());
    if (!ts_node_is_null(event.value)) read_value(event.value, model, d->dict);
  }
}

void TrainingCheckpointTracker::on_call(const CallEvent& call, RuleContext& ctx) {
  const SemanticModel& model = ctx.model();
  const Syntax& syn = Syntax::get();
  const std::string& fn = model.function().qualname;
  if (is_torch_save(call.qualname)) {
    TSNode obj = call.keyword("obj", model.source());
    if (ts_node_is_null(obj)) obj = call.positional(0);
    if (ts_node_is_null(obj)) return;
    size_t id = 0;
    if (auto d = dict_of(obj, ctx, &id)) {
      saving_[fn].saves_other = true;
      add_candidate(call.node, std::move(*d), id, {}, ctx);
      return;
    }
    // `torch.save(model.state_dict(), path)` repeated in the epoch or step loop: the run's
    // only checkpoint, weights alone (decided in finish()).
    if (syn.kind(obj) == Kind::kCall && model.loop_depth() > 0) {
      TSNode callee = field(obj, syn.fields().function);
      if (syn.kind(callee) == Kind::kAttribute && model.text(field(callee, syn.fields().attribute)) == "state_dict") {
        std::string root = receiver_root(field(callee, syn.fields().object), model);
        if (!root.empty() && names_model(root)) {
          CheckpointDict weights;
          weights.model_state = true;
          weights.saved.push_back(root);
          saving_[fn].saves_other = true;
          add_candidate(call.node, std::move(weights), 0, {}, ctx);
          candidates_.back().weights_only = true;
          return;
        }
      }
    }
    const Binding* b = syn.kind(obj) == Kind::kIdentifier ? model.lookup(model.text(obj)) : nullptr;
    if (b && b->kind == BindingKind::kParameter) {
      saving_[fn].saved_parameters.emplace_back(model.text(obj));
    } else {
      saving_[fn].saves_other = true;
    }
    return;
  }
  // Changes to a dict being built: `state.update(...)`.
  if (!call.method.empty() && !ts_node_is_null(call.receiver) && syn.kind(call.receiver) == Kind::kIdentifier) {
    std::string_view name = model.text(call.receiver);
    if (api::dict_mutators().contains(call.method)) {
      saving_[fn].mutated.insert(std::string(name));
      if (LocalDict* d = local_dict(fn, name)) {
        if (call.method == "update" && !call.has_args_splat && !call.has_kwargs_splat) {
          if (!read_dict_call_arguments(call.arguments, model, d->dict)) d->dict.readable = false;
        } else {
          d->dict.readable = false;
        }
      }
      return;
    }
  }
  // A dict handed to a project function: a checkpoint if that function saves the argument.
  bool project = call.qualname && !is_library_name(*call.qualname);
  if (ts_node_is_null(call.arguments)) return;
  size_t position = 0;
  bool candidate_added = false;
  for (size_t i = 0; i < call.arg_count; ++i) {
    const CallArgument& arg = call.args[i];
    Kind k = arg.kind;
    if (k == Kind::kListSplat) break;
    if (k == Kind::kDictionarySplat) continue;
    size_t index = k == Kind::kKeywordArgument ? 0 : position++;
    TSNode value = arg.value;
    if (ts_node_is_null(value)) continue;
    // Only a dict literal, a dict(...) call or a name can be a dict.
    Kind vk = syn.kind(value);
    if (vk == Kind::kIdentifier
            ? dicts_.empty()
            : vk != Kind::kCall && vk != Kind::kParenthesizedExpression && !is_type(value, "dictionary")) {
      continue;
    }
    size_t id = 0;
    auto d = dict_of(value, ctx, &id);
    if (!d) continue;
    if (project && !candidate_added && d->model_state) {
      std::string parameter = k == Kind::kKeywordArgument ? std::string(arg.name) : std::to_string(index);
      ProjectCondition saves;
      saves.kind = ProjectCondition::Kind::kReachableHas;
      saves.roots = {*call.qualname};
      saves.fact = "torch-saves-param:" + parameter;
      add_candidate(call.node, std::move(*d), id, {std::move(saves)}, ctx);
      candidate_added = true;
    } else if (id != 0 && !(call.qualname && is_library_name(*call.qualname))) {
      // Handed to code that may add to it.
      for (auto& ld : dicts_) {
        if (ld.id == id) ld.dict.readable = false;
      }
    }
  }
}

void TrainingCheckpointTracker::on_loop_end(const LoopState& loop, RuleContext& ctx) {
  if (is_epoch_loop(loop, ctx.model())) functions_after_training_loop_.insert(ctx.model().function().qualname);
}

void TrainingCheckpointTracker::on_function_end(const FunctionState& fn, RuleContext& ctx) {
  for (auto& c : candidates_) {
    if (c.function == fn.qualname && !c.decided) {
      c.function_trains = fn.steps_optimizer || fn.calls_backward;
      c.decided = true;
    }
  }
  auto it = saving_.find(fn.qualname);
  if (it != saving_.end()) {
    const SavingFunction& s = it->second;
    // A helper that only ever saves what it is given, unchanged: `save_checkpoint(state, path)`.
    if (!s.saves_other && !fn.is_module_level) {
      auto names = parameter_names(fn.node, ctx.model());
      for (const auto& p : s.saved_parameters) {
        if (s.mutated.contains(p)) continue;
        auto pos = std::find(names.begin(), names.end(), p);
        if (pos == names.end()) continue;
        ctx.add_fact("torch-saves-param:" + std::to_string(pos - names.begin()));
        ctx.add_fact("torch-saves-param:" + p);
      }
    }
    saving_.erase(it);
  }
  std::erase_if(dicts_, [&](const LocalDict& d) { return d.function == fn.qualname; });
}

std::vector<TrainingCheckpoint> TrainingCheckpointTracker::finish(RuleContext& ctx) {
  const FunctionState& top = ctx.model().function();
  std::vector<TrainingCheckpoint> out;
  std::unordered_set<size_t> seen_dicts;
  // Functions that save a full checkpoint: their weights-only saves are exports (the best
  // model so far), not the run's checkpoint.
  std::unordered_set<std::string> full_savers;
  for (const auto& c : candidates_) {
    if (!c.weights_only) full_savers.insert(c.function);
  }
  for (auto& c : candidates_) {
    if (!c.decided) c.function_trains = top.steps_optimizer || top.calls_backward;
    if (!c.dict.readable || !c.dict.model_state) continue;
    if (c.weights_only && full_savers.contains(c.function)) continue;
    bool by_name = !c.module_level && checkpointing_name(c.function_name);
    bool strong = c.in_loop && (c.function_trains || c.epoch_loop);
    if (c.weights_only && !strong) continue;
    bool weak = c.after_loop || c.function_trains || by_name;
    if (!strong && !(weak && c.dict.progress)) continue;
    // The optimizers and schedulers the code around the save has, nearest first.
    const uint32_t save_line = ts_node_start_point(c.node).row + 1;
    auto nearest = [&](ValueKind kind, const std::vector<TrainingObject>& params, bool may_borrow) {
      std::vector<TrainingObject> found = objects_->owned_by(c.function, kind);
      // Created after the save (in this function): not something the save forgot.
      std::erase_if(found, [&](const TrainingObject& o) { return !o.parameter && o.line > save_line; });
      found.insert(found.end(), params.begin(), params.end());
      if (found.empty() && !c.class_qualname.empty()) found = objects_->owned_by(c.class_qualname, kind);
      if (found.empty()) found = objects_->owned_by(top.qualname, kind);
      // A checkpointing helper (`def save(model, epoch)`) serves the file's training code.
      bool borrowed = found.empty() && by_name && may_borrow;
      if (borrowed) found = objects_->all(kind);
      return std::pair{std::move(found), borrowed};
    };
    TrainingCheckpoint t;
    auto [optimizers, borrowed] = nearest(ValueKind::kOptimizer, c.parameters_optimizers, true);
    t.optimizers = std::move(optimizers);
    if (t.optimizers.empty() && !c.dict.optimizer_state) continue;  // no optimizer: not training code
    // Code with an optimizer of its own has its own schedulers too (or none): a helper
    // borrows the file's schedulers only along with its optimizers.
    t.schedulers = nearest(ValueKind::kScheduler, c.parameters_schedulers, borrowed || t.optimizers.empty()).first;
    if (c.dict_id != 0 && !seen_dicts.insert(c.dict_id).second) continue;  // the same dict saved twice
    t.node = c.node;
    t.dict = std::move(c.dict);
    t.conditions = std::move(c.conditions);
    t.function_name = c.function_name;
    out.push_back(std::move(t));
  }
  candidates_.clear();
  return out;
}

const TrainingObject* TrainingCheckpointTracker::first_unsaved(const TrainingCheckpoint& checkpoint,
                                                               const std::vector<TrainingObject>& objects) {
  for (const auto& object : objects) {
    if (!saves(checkpoint, object)) return &object;
  }
  return nullptr;
}

std::string TrainingCheckpointTracker::describe(const TrainingObject& o, const TrainingCheckpoint& checkpoint) {
  std::string where = o.parameter ? "parameter of `" + o.function_name + "` at line "
                      : !o.self_attribute && o.function_name != checkpoint.function_name && !o.function_name.empty()
                          ? "created in `" + o.function_name + "` at line "
                          : "created at line ";
  return "'" + o.name + "' " + where + std::to_string(o.line);
}

bool TrainingCheckpointTracker::saves(const TrainingCheckpoint& checkpoint, const TrainingObject& object) {
  auto named_as = [&](const std::string& name) {
    for (const auto& s : checkpoint.dict.saved) {
      if (s == name || s.starts_with(name + ".") || s.starts_with(name + "[")) return true;
      if (last_dotted_part(s) == last_dotted_part(name)) return true;
    }
    return false;
  };
  auto named = [&](const TrainingObject& o) {
    return named_as(o.name) || std::any_of(o.aliases.begin(), o.aliases.end(), named_as);
  };
  if (named(object)) return true;
  const auto& peers = object.kind == ValueKind::kOptimizer ? checkpoint.optimizers : checkpoint.schedulers;
  for (const auto& other : peers) {
    if (other.name != object.name && named(other)) return false;  // the dict names its objects, not this one
  }
  return object.kind == ValueKind::kOptimizer ? checkpoint.dict.optimizer_state : checkpoint.dict.scheduler_state;
}

}  // namespace torchlint::python
