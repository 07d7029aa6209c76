#include <doctest/doctest.h>

#include "core/project_facts.h"

using namespace torchlint;

TEST_CASE("project pass: reachability through other files and no-grad call sites") {
  FileFacts train;
  train.module = "train";
  train.functions.push_back({"train.<module>", {}, {{"train.main", {}}}});
  train.functions.push_back(
      {"train.main", {}, {{"utils.set_seed", {}}, {"engine.fit", {}}, {"engine.evaluate", {"no-grad"}}}});
  FileFacts utils;
  utils.module = "src.utils";
  utils.functions.push_back({"src.utils.set_seed", {"seeds-torch"}, {}});
  FileFacts engine;
  engine.module = "engine";
  engine.functions.push_back({"engine.fit", {"trains"}, {{"engine.evaluate", {}}}});
  engine.functions.push_back({"engine.evaluate", {}, {}});
  engine.functions.push_back({"engine.helper", {}, {}});
  ProjectFacts project({&train, &utils, &engine});

  ProjectCondition trains{ProjectCondition::Kind::kReachableHas, {"train.<module>"}, "trains", ""};
  CHECK(project.holds(trains));
  ProjectCondition unseeded{ProjectCondition::Kind::kReachableLacks, {"train.<module>"}, "seeds-torch", ""};
  CHECK_FALSE(project.holds(unseeded));  // set_seed found through the suffix index
  ProjectCondition no_numpy{ProjectCondition::Kind::kReachableLacks, {"train.<module>"}, "seeds-numpy", ""};
  CHECK(project.holds(no_numpy));

  // evaluate is called once under no_grad and once (from fit) without.
  ProjectCondition eval{ProjectCondition::Kind::kNotAlwaysCalledIn, {"engine.evaluate"}, "no-grad", ""};
  CHECK(project.holds(eval));
  // helper is never called: nothing shows it runs under no_grad.
  ProjectCondition helper{ProjectCondition::Kind::kNotAlwaysCalledIn, {"engine.helper"}, "no-grad", ""};
  CHECK(project.holds(helper));
}

TEST_CASE("unknown callees can carry a fact by name") {
  FileFacts f;
  f.module = "run";
  f.functions.push_back({"run.<module>", {"trains"}, {{"mylib.seed_everything_custom", {}}}});
  ProjectFacts project({&f});
  ProjectCondition c{ProjectCondition::Kind::kReachableLacks, {"run.<module>"}, "seeds-torch", "seed"};
  CHECK_FALSE(project.holds(c));
  c.unknown_callee_hint = "";
  CHECK(project.holds(c));
}

TEST_CASE("always-called-in follows callers transitively and survives cycles") {
  FileFacts f;
  f.module = "m";
  f.functions.push_back({"m.<module>", {}, {{"m.outer", {"no-grad"}}}});
  f.functions.push_back({"m.outer", {}, {{"m.inner", {}}, {"m.a", {}}}});
  f.functions.push_back({"m.inner", {}, {}});
  f.functions.push_back({"m.a", {}, {{"m.b", {}}}});
  f.functions.push_back({"m.b", {}, {{"m.a", {}}}});
  ProjectFacts project({&f});
  ProjectCondition inner{ProjectCondition::Kind::kNotAlwaysCalledIn, {"m.inner"}, "no-grad", ""};
  CHECK_FALSE(project.holds(inner));
  ProjectCondition cyc{ProjectCondition::Kind::kNotAlwaysCalledIn, {"m.b"}, "no-grad", ""};
  CHECK(project.holds(cyc) == project.holds(cyc));  // terminates
}
