#include "project_facts.h"

#include <algorithm>
#include <unordered_set>

namespace torchlint {

static bool has_fact(const FunctionFacts& f, std::string_view fact) {
  return std::find(f.facts.begin(), f.facts.end(), fact) != f.facts.end();
}

std::vector<ProjectFacts::Function> ProjectFacts::collect(const std::vector<const FileFacts*>& files) {
  size_t count = 0;
  for (const FileFacts* file : files) count += file->functions.size();
  std::vector<Function> functions;
  functions.reserve(count);
  for (uint32_t i = 0; i < files.size(); ++i) {
    for (const auto& fn : files[i]->functions) functions.push_back(Function{&fn, i, {}, {}});
  }
  return functions;
}

// Every dotted suffix that still names a module or class plus the function, so
// "utils.set_seed" (imported as `from utils import set_seed` with src/ on the path) finds
// "src.utils.set_seed".
std::vector<std::pair<std::string_view, uint32_t>> ProjectFacts::names_of(const std::vector<Function>& functions) {
  std::vector<std::pair<std::string_view, uint32_t>> names;
  size_t count = 0;
  for (const Function& f : functions)
    count += 1 + static_cast<size_t>(std::count(f.facts->qualname.begin(), f.facts->qualname.end(), '.'));
  names.reserve(count);
  for (uint32_t id = 0; id < functions.size(); ++id) {
    std::string_view q = functions[id].facts->qualname;
    names.emplace_back(q, id);
    for (size_t dot = q.find('.'); dot != std::string_view::npos; dot = q.find('.', dot + 1)) {
      std::string_view suffix = q.substr(dot + 1);
      if (suffix.find('.') == std::string_view::npos) break;
      names.emplace_back(suffix, id);
    }
  }
  return names;
}

namespace {

// How many leading dotted parts two qualified names share.
size_t shared_parts(std::string_view a, std::string_view b) {
  size_t parts = 0;
  for (size_t i = 0;; ++i) {
    bool end_a = i == a.size() || a[i] == '.', end_b = i == b.size() || b[i] == '.';
    if (end_a || end_b) {
      if (!(end_a && end_b)) return parts;
      ++parts;
      if (i == a.size() || i == b.size()) return parts;
      continue;
    }
    if (a[i] != b[i]) return parts;
  }
}

bool has_context(const CallFact& call, std::string_view context) {
  return std::find(call.contexts.begin(), call.contexts.end(), context) != call.contexts.end();
}

}  // namespace

ProjectFacts::ProjectFacts(const std::vector<const FileFacts*>& files)
    : functions_(collect(files)), index_(names_of(functions_)) {
  callers_.resize(functions_.size());
  std::vector<uint32_t> nearest;
  for (uint32_t id = 0; id < functions_.size(); ++id) {
    for (const auto& call : functions_[id].facts->calls) {
      auto targets = lookup(call.callee);
      if (targets.empty()) {
        if (!has_context(call, kReferenceContext)) functions_[id].unknown.push_back(&call.callee);
        continue;
      }
      if (targets.size() > 1) {
        // `utils.set_seed` named by two programs' own `utils.py`: each program means the
        // one beside it, the candidates sharing most of the caller's package path.
        const std::string& caller = functions_[id].facts->qualname;
        size_t best = 0;
        for (uint32_t t : targets) best = std::max(best, shared_parts(caller, functions_[t].facts->qualname));
        nearest.clear();
        for (uint32_t t : targets) {
          if (shared_parts(caller, functions_[t].facts->qualname) == best) nearest.push_back(t);
        }
        targets = nearest;
      }
      for (uint32_t t : targets) {
        functions_[id].callees.push_back(t);
        callers_[t].emplace_back(id, &call);
      }
    }
  }
}

std::span<const uint32_t> ProjectFacts::lookup(const std::string& qualname) const {
  auto ids = index_.find(qualname);
  if (!ids.empty()) return ids;
  // Calling a class runs its __init__. Asked for every call to code outside the project,
  // so the key is built in a reused buffer rather than a new string per call.
  thread_local std::string init;
  init.assign(qualname).append(".__init__");
  return index_.find(init);
}

std::vector<uint32_t> ProjectFacts::reachable(const std::vector<std::string>& roots,
                                              std::vector<const std::string*>* unknown, bool once) const {
  std::vector<uint32_t> ids;
  for (const auto& root : roots) {
    for (uint32_t id : lookup(root)) ids.push_back(id);
  }
  return reachable_ids(std::move(ids), unknown, once);
}

std::vector<uint32_t> ProjectFacts::reachable_ids(std::vector<uint32_t> roots, std::vector<const std::string*>* unknown,
                                                  bool once) const {
  std::vector<uint32_t> order;
  std::vector<uint32_t> stack;
  std::unordered_set<uint32_t> seen;
  for (uint32_t id : roots) {
    if (seen.insert(id).second) stack.push_back(id);
  }
  while (!stack.empty()) {
    uint32_t id = stack.back();
    stack.pop_back();
    order.push_back(id);
    const Function& f = functions_[id];
    if (unknown) unknown->insert(unknown->end(), f.unknown.begin(), f.unknown.end());
    if (!once) {
      for (uint32_t callee : f.callees) {
        if (seen.insert(callee).second) stack.push_back(callee);
      }
      continue;
    }
    // The callees are in call order, several per call fact where a name has several
    // targets: walk the facts again to know which calls ran in a loop.
    for (const auto& call : f.facts->calls) {
      if (has_context(call, kInLoopContext)) continue;
      for (uint32_t callee : lookup(call.callee)) {
        if (seen.insert(callee).second) stack.push_back(callee);
      }
    }
  }
  return order;
}

bool ProjectFacts::project_has(const std::string& fact) const {
  // Asked once per finding by the project-wide conditions: the set is built on first use.
  if (!all_facts_) {
    all_facts_.emplace();
    for (const Function& f : functions_) all_facts_->insert(f.facts->facts.begin(), f.facts->facts.end());
  }
  return all_facts_->contains(fact);
}

std::vector<uint32_t> ProjectFacts::programs_of(const std::string& function) const {
  // The same function is asked about for each of its findings and conditions.
  auto memo = programs_.find(function);
  if (memo != programs_.end()) return memo->second;
  std::vector<uint32_t> entries;
  std::vector<uint32_t> stack;
  std::unordered_set<uint32_t> seen;
  for (uint32_t id : index_.find(function)) {
    if (functions_[id].facts->qualname == function && seen.insert(id).second) stack.push_back(id);
  }
  while (!stack.empty()) {
    uint32_t id = stack.back();
    stack.pop_back();
    if (has_fact(*functions_[id].facts, kEntryPointFact)) entries.push_back(id);
    for (const auto& [caller, call] : callers_[id]) {
      if (seen.insert(caller).second) stack.push_back(caller);
    }
  }
  if (entries.empty()) {
    // No entry point reaches it (a callee the call graph cannot see, such as a function
    // rebound at run time): the entry points of its own file, when it has any, are its
    // program; a file without one is library code, judged over the project.
    for (uint32_t id : seen) {
      if (functions_[id].facts->qualname != function) continue;
      for (uint32_t other = 0; other < functions_.size(); ++other) {
        if (functions_[other].file == functions_[id].file && has_fact(*functions_[other].facts, kEntryPointFact)) {
          entries.push_back(other);
        }
      }
    }
  }
  std::sort(entries.begin(), entries.end());
  entries.erase(std::unique(entries.begin(), entries.end()), entries.end());
  programs_.emplace(function, entries);
  return entries;
}

bool ProjectFacts::file_has(const std::string& function, const std::string& fact) const {
  for (uint32_t id : index_.find(function)) {
    if (functions_[id].facts->qualname != function) continue;
    for (const Function& f : functions_) {
      if (f.file == functions_[id].file && has_fact(*f.facts, fact)) return true;
    }
  }
  return false;
}

bool ProjectFacts::program_has(uint32_t entry, const std::string& fact) const {
  auto it = program_facts_.find(entry);
  if (it == program_facts_.end()) {
    std::vector<std::string_view> facts;
    for (uint32_t id : reachable_ids({entry}, nullptr, false)) {
      for (const auto& f : functions_[id].facts->facts) facts.push_back(f);
    }
    std::sort(facts.begin(), facts.end());
    facts.erase(std::unique(facts.begin(), facts.end()), facts.end());
    it = program_facts_.emplace(entry, std::move(facts)).first;
  }
  return std::binary_search(it->second.begin(), it->second.end(), std::string_view(fact));
}

bool ProjectFacts::always_called_in(uint32_t function, const std::string& context) const {
  // A function runs inside `context` when every call site is inside it, directly or
  // because its caller in turn always runs inside it. Cycles count as "not shown".
  std::vector<uint32_t> stack{function};
  std::unordered_set<uint32_t> seen{function};
  while (!stack.empty()) {
    uint32_t id = stack.back();
    stack.pop_back();
    if (callers_[id].empty()) return false;
    for (const auto& [caller, call] : callers_[id]) {
      if (std::find(call->contexts.begin(), call->contexts.end(), context) != call->contexts.end()) continue;
      if (functions_[caller].facts->qualname.ends_with(kModuleFunction)) return false;
      if (!seen.insert(caller).second) return false;
      stack.push_back(caller);
    }
  }
  return true;
}

bool ProjectFacts::holds(const ProjectCondition& c) const {
  // Many findings carry the same condition (the program's entry "trains", the project
  // "uses autocast"): each distinct one walks the call graph once.
  thread_local std::string key;
  key.assign(1, static_cast<char>(c.kind));
  for (const auto& r : c.roots) key.append(r).push_back('\x1f');
  key.append("\x1e").append(c.fact).append("\x1e").append(c.unless).append("\x1e").append(c.scope);
  key.append("\x1e").append(c.unknown_callee_hint);
  auto it = holds_.find(key);
  if (it != holds_.end()) return it->second;
  bool result = evaluate(c);
  holds_.emplace(key, result);
  return result;
}

bool ProjectFacts::evaluate(const ProjectCondition& c) const {
  switch (c.kind) {
    case ProjectCondition::Kind::kReachableHas: {
      for (uint32_t id : reachable(c.roots, nullptr)) {
        if (has_fact(*functions_[id].facts, c.fact)) return true;
      }
      return false;
    }
    case ProjectCondition::Kind::kReachableLacks: {
      std::vector<const std::string*> unknown;
      for (uint32_t id : reachable(c.roots, &unknown)) {
        if (has_fact(*functions_[id].facts, c.fact)) return false;
      }
      if (!c.unknown_callee_hint.empty()) {
        for (const std::string* callee : unknown) {
          size_t dot = callee->rfind('.');
          std::string_view last =
              dot == std::string::npos ? std::string_view(*callee) : std::string_view(*callee).substr(dot + 1);
          if (last.find(c.unknown_callee_hint) != std::string_view::npos) return false;
        }
      }
      return true;
    }
    case ProjectCondition::Kind::kReachableOnceHas: {
      for (uint32_t id : reachable(c.roots, nullptr, /*once=*/true)) {
        if (has_fact(*functions_[id].facts, c.fact)) return true;
      }
      return false;
    }
    case ProjectCondition::Kind::kProjectHas:
      return project_has(c.fact);
    case ProjectCondition::Kind::kProjectLacks:
    case ProjectCondition::Kind::kProgramHas: {
      // Over the programs that run the finding's function.
      auto entries = c.scope.empty() ? std::vector<uint32_t>{} : programs_of(c.scope);
      auto has = [&](const std::string& fact) {
        if (!entries.empty()) {
          return std::any_of(entries.begin(), entries.end(), [&](uint32_t e) { return program_has(e, fact); });
        }
        if (c.kind == ProjectCondition::Kind::kProjectLacks || c.scope.empty()) return project_has(fact);
        return file_has(c.scope, fact);
      };
      bool any = has(c.fact);
      if (c.kind == ProjectCondition::Kind::kProgramHas) return any;
      return !any || (!c.unless.empty() && has(c.unless));
    }
    case ProjectCondition::Kind::kSomeCallIn: {
      if (c.roots.empty()) return false;
      for (uint32_t id : index_.find(c.roots.front())) {
        if (functions_[id].facts->qualname != c.roots.front()) continue;
        for (const auto& [caller, call] : callers_[id]) {
          if (has_context(*call, c.fact)) return true;
        }
      }
      return false;
    }
    case ProjectCondition::Kind::kAlwaysCalledIn: {
      if (c.roots.empty()) return false;
      bool any = false;
      for (uint32_t id : index_.find(c.roots.front())) {
        if (functions_[id].facts->qualname != c.roots.front()) continue;
        if (!always_called_in(id, c.fact)) return false;
        any = true;
      }
      return any;
    }
    case ProjectCondition::Kind::kNotAlwaysCalledIn: {
      if (c.roots.empty()) return true;
      auto ids = lookup(c.roots.front());
      if (ids.empty()) return true;
      for (uint32_t id : ids) {
        if (!always_called_in(id, c.fact)) return true;
      }
      return false;
    }
  }
  return true;
}

}  // namespace torchlint
