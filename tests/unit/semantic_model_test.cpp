// The semantic model, observed the way rules observe it: a probe rule records what the
// model says at every call.
#include <doctest/doctest.h>

#include <algorithm>

#include "python/analyzer.h"
#include "python/checker.h"

using namespace torchlint;
using namespace torchlint::python;

namespace {

struct Observation {
  std::string callee;  // source text of the callee
  std::string qualname;
  bool no_grad = false;
  bool autocast = false;
  std::string receiver_kind;
  bool main_guard = false;
  size_t loop_depth = 0;
  std::string function;
};

struct Probe final : Rule {
  std::vector<Observation>* out;
  explicit Probe(std::vector<Observation>* o) : out(o) {}
  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& m = ctx.model();
    Observation o;
    o.callee = std::string(m.text(call.callee));
    o.qualname = call.qualname.value_or("?");
    o.no_grad = m.in_no_grad();
    o.autocast = m.in_context(GradContext::kAutocast);
    o.receiver_kind =
        ts_node_is_null(call.receiver) ? "" : std::string(api::value_kind_name(m.infer_value(call.receiver).kind));
    o.main_guard = m.in_main_guard();
    o.loop_depth = m.loop_depth();
    o.function = m.function().name;
    out->push_back(o);
  }
};

struct Observed {
  std::vector<Observation> calls;
  FileResult result;
  const Observation& at(std::string_view callee) const {
    for (const auto& c : calls) {
      if (c.callee == callee) return c;
    }
    FAIL("no call to " << callee);
    return calls.front();
  }
};

Observed observe(const std::string& code, const std::string& module = "train") {
  Observed o;
  SourceFile file("train.py", code);
  TSTree* tree = parse_python(file.text());
  AnalysisOptions options;
  options.module = module;
  RuleInfo info;
  info.code = "TL999";
  info.name = "probe";
  std::vector<Checker::ActiveRule> rules;
  rules.push_back({&info, std::make_unique<Probe>(&o.calls)});
  const RuleInfo parse_error{.code = "TL000", .name = "parse-error", .severity = Severity::kError};
  Checker checker(file, tree, options, std::move(rules), parse_error);
  o.result = checker.run();
  ts_tree_delete(tree);
  return o;
}

}  // namespace

TEST_CASE("imports and aliases resolve to canonical names") {
  auto o = observe(R"(
import torch
import torch.nn as nn
from torch.nn.parallel import DataParallel as DP
from torch import load as tload
import torch.utils.data as tud
from torch.utils.data import DataLoader
F = torch.nn.functional
nn.DataParallel(m)
DP(m)
torch.nn.parallel.DataParallel(m)
tload("x.pt")
tud.DataLoader(ds)
DataLoader(ds)
F.relu(x)
nn.modules.conv.Conv2d(3, 8, 3)
torch.nn.parallel.data_parallel(m, x)
)");
  CHECK(o.at("nn.DataParallel").qualname == "torch.nn.parallel.data_parallel.DataParallel");
  CHECK(o.at("DP").qualname == "torch.nn.parallel.data_parallel.DataParallel");
  CHECK(o.at("torch.nn.parallel.DataParallel").qualname == "torch.nn.parallel.data_parallel.DataParallel");
  CHECK(o.at("tload").qualname == "torch.serialization.load");
  CHECK(o.at("tud.DataLoader").qualname == "torch.utils.data.dataloader.DataLoader");
  CHECK(o.at("DataLoader").qualname == "torch.utils.data.dataloader.DataLoader");
  CHECK(o.at("F.relu").qualname == "torch.nn.functional.relu");
  CHECK(o.at("nn.modules.conv.Conv2d").qualname == "torch.nn.Conv2d");
  CHECK(o.at("torch.nn.parallel.data_parallel").qualname == "torch.nn.parallel.data_parallel.data_parallel");
}

TEST_CASE("star imports make names unresolvable; relative imports resolve against the package") {
  auto o = observe("from torch import *\nload('x')\nfrom .utils import set_seed\nset_seed(0)\n", "pkg.train");
  CHECK(o.at("load").qualname == "?");
  CHECK(o.at("set_seed").qualname == "pkg.utils.set_seed");
  auto p = observe("from ..common import helpers\nhelpers.run()\n", "pkg.sub.train");
  CHECK(p.at("helpers.run").qualname == "pkg.common.helpers.run");
}

TEST_CASE("bindings: what a name was assigned from") {
  auto o = observe(R"(
import torch
from torch import nn, optim
class Net(nn.Module):
    pass
class Helper:
    pass
model = Net().cuda()
opt = optim.Adam(model.parameters())
sched = torch.optim.lr_scheduler.StepLR(opt, 10)
loader = torch.utils.data.DataLoader(ds)
h = Helper()
criterion = nn.CrossEntropyLoss()
def train(optimizer: torch.optim.Optimizer, net: nn.Module):
    optimizer.zero_grad()
    net.train()
model.eval()
opt.step()
sched.step()
loader.dataset
h.run()
criterion.cuda()
)");
  CHECK(o.at("model.eval").receiver_kind == "model");
  CHECK(o.at("opt.step").receiver_kind == "optimizer");
  CHECK(o.at("sched.step").receiver_kind == "scheduler");
  CHECK(o.at("h.run").receiver_kind == "instance");
  CHECK(o.at("h.run").qualname == "?");
  CHECK(o.at("criterion.cuda").receiver_kind == "loss");
  CHECK(o.at("optimizer.zero_grad").receiver_kind == "optimizer");
  CHECK(o.at("net.train").receiver_kind == "model");
  CHECK(o.at("optimizer.zero_grad").function == "train");
}

TEST_CASE("grad-mode context stack") {
  auto o = observe(R"(
import torch
with torch.no_grad():
    a()
    with torch.enable_grad():
        b()
with torch.inference_mode():
    c()
with torch.set_grad_enabled(False):
    d()
with torch.autocast("cuda"):
    e()
@torch.no_grad()
def evaluate():
    f()
    def inner():
        g()
@torch.inference_mode
def predict():
    h()
def later():
    torch.set_grad_enabled(False)
    i()
with torch.no_grad():
    def defined_here():
        j()
k()
)");
  CHECK(o.at("a").no_grad);
  CHECK_FALSE(o.at("b").no_grad);
  CHECK(o.at("c").no_grad);
  CHECK(o.at("d").no_grad);
  CHECK_FALSE(o.at("e").no_grad);
  CHECK(o.at("e").autocast);
  CHECK(o.at("f").no_grad);
  CHECK_FALSE(o.at("g").no_grad);  // a nested def runs when called, not where defined
  CHECK(o.at("h").no_grad);
  CHECK(o.at("i").no_grad);
  CHECK_FALSE(o.at("j").no_grad);
  CHECK_FALSE(o.at("k").no_grad);
}

TEST_CASE("main guard, loops and functions") {
  auto o = observe(R"(
def main():
    for epoch in range(3):
        while True:
            step()
if __name__ == "__main__":
    main()
outside()
)");
  CHECK(o.at("step").loop_depth == 2);
  CHECK(o.at("step").function == "main");
  CHECK_FALSE(o.at("step").main_guard);
  CHECK(o.at("main").main_guard);
  CHECK_FALSE(o.at("outside").main_guard);
}

TEST_CASE("facts: seeding, training and call edges per function") {
  auto o = observe(R"(
import torch, random
import numpy as np
from utils import set_seed
def seed_all(s):
    torch.manual_seed(s)
    np.random.seed(s)
def train(model, loader, optimizer):
    for x in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
        random.shuffle(x)
if __name__ == "__main__":
    set_seed(0)
    with torch.no_grad():
        train(m, l, o)
)");
  const auto& fns = o.result.facts.functions;
  auto find = [&](const std::string& q) -> const FunctionFacts& {
    for (const auto& f : fns) {
      if (f.qualname == q) return f;
    }
    FAIL("missing " << q);
    return fns.front();
  };
  auto has = [](const FunctionFacts& f, const char* fact) {
    return std::find(f.facts.begin(), f.facts.end(), fact) != f.facts.end();
  };
  CHECK(has(find("train.seed_all"), "seeds-torch"));
  CHECK(has(find("train.seed_all"), "seeds-numpy"));
  CHECK(has(find("train.train"), "trains"));
  CHECK(has(find("train.train"), "backward"));
  CHECK(has(find("train.train"), "draws-random"));
  const auto& top = find("train.<module>");
  bool saw_set_seed = false, saw_train_in_no_grad = false;
  for (const auto& c : top.calls) {
    if (c.callee == "utils.set_seed") saw_set_seed = true;
    if (c.callee == "train.train" && c.contexts == std::vector<std::string>{"no-grad"}) saw_train_in_no_grad = true;
  }
  CHECK(saw_set_seed);
  CHECK(saw_train_in_no_grad);
}

TEST_CASE("deep nesting and syntax errors do not stop the traversal") {
  std::string deep =
      "x = " + std::string(5000, '(') + "1" + std::string(5000, ')') + "\nimport torch\ntorch.load('a')\n";
  auto o = observe(deep);
  CHECK(o.at("torch.load").qualname == "torch.serialization.load");
  auto broken = observe("import torch\ndef f(:\n    pass\ntorch.load('a')\n");
  CHECK(broken.at("torch.load").qualname == "torch.serialization.load");
  bool parse_error = false;
  for (const auto& d : broken.result.diagnostics) parse_error |= d.code == "TL000";
  CHECK(parse_error);
}

namespace {
struct LoopProbe final : Rule {
  std::vector<std::string>* out;
  explicit LoopProbe(std::vector<std::string>* o) : out(o) {}
  void on_loop_end(const LoopState& loop, RuleContext&) override {
    std::string line = std::to_string(loop.depth) + (loop.trains() ? " trains:" : ":");
    for (const auto& e : loop.events) {
      static const char* names[] = {"zero_grad", "forward", "backward", "step", "sched", "call"};
      line += std::string(" ") + names[static_cast<int>(e.kind)] + "(" + (e.callee.empty() ? e.receiver : e.callee) +
              ")" + (e.conditional ? "?" : "");
    }
    out->push_back(line);
  }
};
}  // namespace

TEST_CASE("training-loop model: events of one iteration in order") {
  std::vector<std::string> loops;
  SourceFile file("train.py", R"(
import torch
from engine import log_metrics
class Net(torch.nn.Module):
    pass
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, 10)
scaler = torch.cuda.amp.GradScaler()
for epoch in range(10):
    for i, (x, y) in enumerate(loader):
        out = model(x)
        scaler.scale(loss_fn(out, y)).backward()
        if (i + 1) % 4 == 0:
            scaler.step(opt)
            opt.zero_grad()
        log_metrics(i)
    sched.step()
)");
  TSTree* tree = parse_python(file.text());
  AnalysisOptions options;
  options.module = "train";
  RuleInfo info;
  info.code = "TL999";
  info.name = "probe";
  std::vector<Checker::ActiveRule> rules;
  rules.push_back({&info, std::make_unique<LoopProbe>(&loops)});
  const RuleInfo parse_error{.code = "TL000", .name = "parse-error", .severity = Severity::kError};
  Checker checker(file, tree, options, std::move(rules), parse_error);
  checker.run();
  ts_tree_delete(tree);
  REQUIRE(loops.size() == 2);
  CHECK(
      loops[0] ==
      "1 trains: forward(model) backward(scaler.scale(loss_fn(out, y))) call(train.loss_fn) step(opt)? zero_grad(opt)? "
      "call(engine.log_metrics)");
  CHECK(loops[1] ==
        "0 trains: forward(model) backward(scaler.scale(loss_fn(out, y))) call(train.loss_fn) step(opt)? "
        "zero_grad(opt)? call(engine.log_metrics) sched(sched)");
}
