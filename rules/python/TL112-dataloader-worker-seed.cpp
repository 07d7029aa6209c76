// TL112 dataloader-worker-seed: DataLoader workers that all draw the same random numbers.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "catalog.h"
#include "python/api_tables.h"
#include "python/shared/dataset.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

using dataset_util::derives_from_dataset;
using dataset_util::is_dataset_class;

// torch seeds numpy's global generator in each worker from torch 1.9 (Python's `random`
// much earlier): before that every worker inherited the parent's numpy state.
constexpr TorchVersion kNumpySeededPerWorker{1, 9};

// Facts a dataset's file records for loaders in other files, keyed by the class name:
// producing an item draws from a generator object copied into every worker / from
// numpy's global generator, and the class does not reseed either per worker.
constexpr const char* kFactInstanceRng = "dataset-instance-rng:";
constexpr const char* kFactNumpy = "dataset-numpy-rng:";

// Generator objects: a copy travels into every worker with the same state.
std::optional<std::string_view> rng_constructor(std::string_view q) {
  const std::string_view* name = api::rng_constructors().find(q);
  if (!name) return std::nullopt;
  return *name;
}

bool is_self_attribute(TSNode node, const SemanticModel& model, std::string_view& attr) {
  const Syntax& syn = Syntax::get();
  if (ts_node_is_null(node) || syn.kind(node) != Kind::kAttribute) return false;
  TSNode object = field(node, syn.fields().object);
  if (syn.kind(object) != Kind::kIdentifier || model.text(object) != "self") return false;
  attr = model.text(field(node, syn.fields().attribute));
  return true;
}

struct Function {
  std::string cls;  // qualname of the enclosing class, empty for module-level functions
  bool draws_numpy = false;
  bool seeds = false;        // reseeds numpy / random itself
  bool worker_info = false;  // torch.utils.data.get_worker_info(): seeds per worker
  std::vector<std::string> callees;
  std::vector<std::pair<std::string, TSNode>> attribute_uses;  // self.<attr> used as a generator
  std::vector<std::string> reseeded;                           // self.<attr>.seed(...) and the like
};

struct RngAttribute {
  std::string constructor;
  bool assigned_outside_init = false;  // reseeded somewhere (a worker_init hook, per item)
};

struct LoaderCall {
  TSNode call{};
  bool local = true;    // the dataset class is defined in this file
  std::string dataset;  // qualname of a Dataset class of this file
  std::string workers;
  bool worker_init_fn = false;
  bool generator = false;
};

class DataloaderWorkerSeed final : public Rule {
 public:
  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    std::string_view src = model.source();
    const FunctionState& fn = model.function();
    if (!fn.is_module_level) {
      Function& f = functions_.current(model);
      std::string_view attr;
      if (is_self_attribute(call.receiver, model, attr)) {
        bool reseed = call.method == "seed" || call.method == "manual_seed" || call.method == "set_state" ||
                      call.method == "setstate" || call.method == "__setstate__";
        if (reseed) {
          f.reseeded.emplace_back(attr);
        } else {
          f.attribute_uses.emplace_back(attr, call.node);
        }
      }
      if (is_self_attribute(call.keyword("generator", src), model, attr))
        f.attribute_uses.emplace_back(attr, call.node);
      if (call.qualname == "torch.utils.data.get_worker_info" ||
          call.qualname == "torch.utils.data._utils.worker.get_worker_info") {
        f.worker_info = true;
      }
    }
    if (call.qualname != api::kDataLoaderClass || call.has_kwargs_splat || call.has_args_splat) return;
    auto arg = [&](std::string_view name, size_t position) {
      TSNode v = call.keyword(name, src);
      return ts_node_is_null(v) ? call.positional(position) : v;
    };
    TSNode workers = arg("num_workers", 5);
    if (ts_node_is_null(workers) || Syntax::get().kind(workers) != Kind::kInteger || ctx.text(workers) == "0") return;
    TSNode dataset = arg("dataset", 0);
    if (ts_node_is_null(dataset)) return;
    std::string type;
    if (Syntax::get().kind(dataset) == Kind::kCall) {
      if (auto q = model.resolve_qualified_name(field(dataset, Syntax::get().fields().function))) type = *q;
    } else {
      type = model.infer_value(dataset).type;
    }
    if (type.empty()) return;
    bool local = model.class_info(type) != nullptr;
    if (local && !is_dataset_class(type, model)) return;
    if (!local) {
      // A class imported from the project (judged by the facts its own file records).
      std::string_view top = std::string_view(type).substr(0, type.find('.'));
      std::string_view last = std::string_view(type).substr(type.rfind('.') + 1);
      if (ctx.model().is_external_package(top) || last.empty() || !(last[0] >= 'A' && last[0] <= 'Z')) return;
    }
    LoaderCall l;
    l.local = local;
    l.call = call.node;
    l.dataset = type;
    l.workers = std::string(ctx.text(workers));
    l.worker_init_fn = !ts_node_is_null(arg("worker_init_fn", 10));
    l.generator = !ts_node_is_null(arg("generator", 12));
    loaders_.push_back(std::move(l));
  }

  void on_assign(const AssignEvent& event, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    std::string_view attr;
    if (event.op != "=" || ts_node_is_null(event.value) || !is_self_attribute(event.target, model, attr)) return;
    const ClassInfo* cls = model.enclosing_class();
    if (!cls) return;
    RngAttribute* existing = nullptr;
    auto& attrs = rng_attributes_[cls->qualname];
    if (auto it = attrs.find(std::string(attr)); it != attrs.end()) existing = &it->second;
    std::optional<std::string_view> ctor;
    if (Syntax::get().kind(event.value) == Kind::kCall) {
      if (auto q = model.resolve_qualified_name(field(event.value, Syntax::get().fields().function)))
        ctor = rng_constructor(*q);
    }
    bool in_init = model.function().name == "__init__";
    if (existing) {
      // Any second assignment (a reseed per worker or per item) makes it not a plain copy.
      existing->assigned_outside_init = existing->assigned_outside_init || !in_init || !ctor;
      return;
    }
    if (!ctor) return;
    attrs.emplace(std::string(attr), RngAttribute{std::string(*ctor), !in_init});
  }

  void on_function_end(const FunctionState& fn, RuleContext& ctx) override {
    Function& f = functions_[fn.qualname];
    if (const ClassInfo* cls = ctx.model().enclosing_class()) f.cls = cls->qualname;
    const auto& facts = fn.facts.facts;
    auto has = [&](std::string_view fact) { return std::find(facts.begin(), facts.end(), fact) != facts.end(); };
    f.draws_numpy = has("draws-numpy");
    f.seeds = has("seeds-numpy") || has("seeds-random");
    for (const auto& c : fn.facts.calls) f.callees.push_back(c.callee);
  }

  void on_class_end(const ClassInfo& cls, TSNode node, RuleContext& ctx) override {
    if (derives_from_dataset(node, ctx.model())) dataset_classes_.push_back(cls.qualname);
  }

  void on_module_end(RuleContext& ctx) override {
    // What other files need to judge their loaders of this file's datasets.
    for (const auto& cls : dataset_classes_) {
      Analysis a = analyse(cls, ctx.model());
      std::string name = cls.substr(cls.rfind('.') + 1);
      if (a.instance_rng) ctx.add_fact(std::string(kFactInstanceRng) + name);
      if (a.numpy) ctx.add_fact(std::string(kFactNumpy) + name);
    }
    for (const auto& l : loaders_) check(l, ctx);
    loaders_.clear();
    functions_.clear();
    rng_attributes_.clear();
    dataset_classes_.clear();
  }

 private:
  // Methods of the dataset class (and functions of this file) that producing one item runs.
  std::vector<const Function*> item_path(const std::string& cls, const SemanticModel& model) const {
    std::vector<std::string> stack;
    for (const char* entry : {"__getitem__", "__getitems__", "__iter__"}) stack.push_back(cls + "." + entry);
    std::unordered_set<std::string> seen(stack.begin(), stack.end());
    std::vector<const Function*> out;
    const ClassInfo* info = model.class_info(cls);
    while (!stack.empty()) {
      std::string name = std::move(stack.back());
      stack.pop_back();
      const Function* found = functions_.find(name);
      if (!found) {
        // `self.augment(img)` where `self.augment = RandomJitter()`: its __call__.
        if (info && name.starts_with(cls + ".")) {
          auto a = info->attributes.find(name.substr(cls.size() + 1));
          if (a != info->attributes.end() && model.class_info(a->second.value.type)) {
            std::string call = a->second.value.type + ".__call__";
            if (seen.insert(call).second) stack.push_back(call);
          }
        }
        continue;
      }
      out.push_back(found);
      for (const auto& callee : found->callees) {
        if (seen.insert(callee).second) stack.push_back(callee);
      }
    }
    return out;
  }

  bool reseeded(const std::string& cls, const std::string& attr) const {
    for (const auto& [name, f] : functions_) {
      if (f.cls == cls && std::find(f.reseeded.begin(), f.reseeded.end(), attr) != f.reseeded.end()) return true;
    }
    return false;
  }

  struct Analysis {
    bool reseeds = false;                                        // per worker or per item: nothing to report
    std::optional<std::pair<std::string, TSNode>> instance_rng;  // attribute and a use
    std::string constructor;
    bool numpy = false;  // draws from numpy's global generator
  };

  Analysis analyse(const std::string& cls, const SemanticModel& model) const {
    Analysis out;
    // The dataset reseeds itself per worker (get_worker_info) anywhere in the class.
    for (const auto& [name, f] : functions_) {
      if (f.cls == cls && f.worker_info) out.reseeds = true;
    }
    std::vector<const Function*> path = item_path(cls, model);
    if (std::any_of(path.begin(), path.end(), [](const Function* f) { return f->seeds || f->worker_info; })) {
      out.reseeds = true;
    }
    if (out.reseeds) return out;
    // A generator object created once in __init__ and copied into every worker.
    auto attrs = rng_attributes_.find(cls);
    if (attrs != rng_attributes_.end()) {
      for (const Function* f : path) {
        for (const auto& [attr, node] : f->attribute_uses) {
          auto a = attrs->second.find(attr);
          if (a == attrs->second.end() || a->second.assigned_outside_init || reseeded(cls, attr)) continue;
          if (!out.instance_rng) {
            out.instance_rng = std::make_pair(attr, node);
            out.constructor = a->second.constructor;
          }
        }
      }
    }
    out.numpy = std::any_of(path.begin(), path.end(), [](const Function* f) { return f->draws_numpy; });
    return out;
  }

  void check(const LoaderCall& l, RuleContext& ctx) const {
    if (l.worker_init_fn) return;
    std::string short_name = l.dataset.substr(l.dataset.rfind('.') + 1);
    const std::string head =
        "DataLoader starts " + l.workers + " workers on `" + short_name + "`, whose items draw from ";
    const std::string copies =
        ": every worker gets a copy with the same state, so the workers repeat each other's random augmentations "
        "(again every epoch unless `persistent_workers=True`); reseed it per worker in a `worker_init_fn`, e.g. from "
        "`torch.utils.data.get_worker_info().seed`";
    const std::string numpy =
        "numpy's global generator: before torch 1.9 every worker inherits the same numpy state, so the workers "
        "repeat each other's random augmentations; pass a `worker_init_fn` that calls "
        "`np.random.seed(torch.initial_seed() % 2**32)`";
    bool old_torch = ctx.options().target_torch < kNumpySeededPerWorker && !l.generator;
    if (!l.local) {
      using K = ProjectCondition::Kind;
      std::string rng_fact = std::string(kFactInstanceRng) + short_name;
      ctx.report(l.call, head + "a random generator object that the dataset creates once in `__init__`" + copies,
                 std::nullopt, {{K::kProjectHas, {}, rng_fact, ""}});
      if (old_torch) {
        ctx.report(
            l.call, head + numpy, std::nullopt,
            {{K::kProjectHas, {}, std::string(kFactNumpy) + short_name, ""}, {K::kProjectLacks, {}, rng_fact, ""}});
      }
      return;
    }
    Analysis a = analyse(l.dataset, ctx.model());
    if (a.reseeds) return;
    if (a.instance_rng) {
      const auto& [attr, node] = *a.instance_rng;
      ctx.report(l.call, head + "`self." + attr + "` (line " + std::to_string(ts_node_start_point(node).row + 1) +
                             "), a `" + a.constructor + "` created once in `__init__`" + copies);
      return;
    }
    if (old_torch && a.numpy) ctx.report(l.call, head + numpy);
  }

  PerFunction<Function> functions_;
  std::unordered_map<std::string, std::unordered_map<std::string, RngAttribute>> rng_attributes_;
  std::vector<LoaderCall> loaders_;
  std::vector<std::string> dataset_classes_;
};

}  // namespace
}  // namespace python

python::RuleEntry dataloader_worker_seed_rule() {
  return python::rule_entry<python::DataloaderWorkerSeed>(catalog_entry("TL112"));
}

}  // namespace torchlint
