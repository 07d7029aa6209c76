#include <doctest/doctest.h>

#include "core/result_cache.h"

using namespace torchlint;

TEST_CASE("file results survive serialization; any damaged byte string is rejected, never crashes") {
  FileResult r;
  Diagnostic d;
  d.code = "TL304";
  d.name = "unsafe-torch-load";
  d.severity = Severity::kError;
  d.message = "m\xc3\xa9ssage";
  d.start_byte = 10;
  d.end_byte = 20;
  d.start = {2, 3};
  d.end = {2, 13};
  d.statement_first_line = 2;
  d.statement_last_line = 3;
  d.scope = "train.main";
  d.fix = Fix{"Add `weights_only=True`", {{19, 19, ", weights_only=True"}}};
  d.conditions.push_back({ProjectCondition::Kind::kReachableLacks, {"train.<module>"}, "seeds-torch", "seed"});
  d.related.push_back({"optimizer `opt`, not saved", 4, 7, {1, 5}, {1, 8}});
  r.diagnostics.push_back(d);
  r.suppressions.push_back(*parse_suppression_comment("# noqa: TL401, TL102", 5, 9, false));
  r.facts.module = "train";
  r.facts.functions.push_back({"train.main", {"trains"}, {{"utils.set_seed", {"no-grad"}}}});

  std::string bytes = serialize_file_result(r);
  auto back = deserialize_file_result(bytes);
  REQUIRE(back);
  REQUIRE(back->diagnostics.size() == 1);
  const auto& b = back->diagnostics[0];
  CHECK(b.code == "TL304");
  CHECK(b.message == d.message);
  CHECK(b.start.column == 3);
  CHECK(b.scope == "train.main");
  REQUIRE(b.fix);
  CHECK(b.fix->edits[0].replacement == ", weights_only=True");
  REQUIRE(b.conditions.size() == 1);
  CHECK(b.conditions[0].unknown_callee_hint == "seed");
  // Related locations come back too: a cached file's findings keep their second place.
  REQUIRE(b.related.size() == 1);
  CHECK(b.related[0].message == "optimizer `opt`, not saved");
  CHECK(b.related[0].end_byte == 7);
  CHECK(b.related[0].end.column == 8);
  CHECK(back->suppressions[0].codes == std::vector<std::string>{"TL401", "TL102"});
  CHECK(back->facts.functions[0].calls[0].contexts == std::vector<std::string>{"no-grad"});

  // Truncations and bit flips: rejected or decoded, never out of bounds.
  for (size_t cut = 0; cut < bytes.size(); ++cut)
    CHECK_FALSE(deserialize_file_result(std::string_view(bytes).substr(0, cut)));
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string damaged = bytes;
    damaged[i] = static_cast<char>(damaged[i] ^ 0xA5);
    (void)deserialize_file_result(damaged);
  }
  std::string huge_count(4, '\xff');
  CHECK_FALSE(deserialize_file_result(huge_count));
}
