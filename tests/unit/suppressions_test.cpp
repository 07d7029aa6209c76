#include <doctest/doctest.h>

#include "core/suppressions.h"

using namespace torchlint;

TEST_CASE("suppression comment forms") {
  auto s = parse_suppression_comment("# noqa: TL102, TL201", 3, 10, false);
  REQUIRE(s);
  CHECK(s->codes == std::vector<std::string>{"TL102", "TL201"});
  CHECK(s->line == 3);
  CHECK_FALSE(s->file_level);

  s = parse_suppression_comment("# noqa", 3, 10, false);
  REQUIRE(s);
  CHECK(s->codes.empty());

  s = parse_suppression_comment("# type: ignore  # NOQA:TL304", 1, 1, false);
  REQUIRE(s);
  CHECK(s->codes == std::vector<std::string>{"TL304"});

  CHECK_FALSE(parse_suppression_comment("# noqalike", 1, 1, false));
  CHECK_FALSE(parse_suppression_comment("# just a comment", 1, 1, false));

  s = parse_suppression_comment("# torchlint: ignore[TL102, unsafe-torch-load] -- validated upstream", 7, 1, true);
  REQUIRE(s);
  CHECK(s->line == 8);  // own line: applies to the next line
  CHECK(s->codes == std::vector<std::string>{"TL102", "unsafe-torch-load"});

  s = parse_suppression_comment("# torchlint: noqa", 1, 1, true);
  REQUIRE(s);
  CHECK(s->file_level);
  CHECK(s->codes.empty());
  s = parse_suppression_comment("# torchlint: noqa: TL401", 1, 1, true);
  REQUIRE(s);
  CHECK(s->codes == std::vector<std::string>{"TL401"});
}

TEST_CASE("suppressions apply to the statement's lines and record use") {
  RuleRegistry registry;
  Diagnostic d;
  d.code = "TL201";
  d.name = "dataloader-num-workers";
  d.start = {10, 5};
  d.statement_first_line = 10;
  d.statement_last_line = 12;
  std::vector<Suppression> sups{*parse_suppression_comment("# noqa: TL201", 12, 20, false),
                                *parse_suppression_comment("# noqa: TL304", 11, 20, false)};
  auto kept = apply_suppressions({d}, sups, registry);
  CHECK(kept.empty());
  CHECK(sups[0].used[0]);
  CHECK_FALSE(sups[1].used[0]);

  std::vector<Suppression> by_name{*parse_suppression_comment("# noqa: dataloader-num-workers", 10, 1, false)};
  CHECK(apply_suppressions({d}, by_name, registry).empty());
  std::vector<Suppression> other{*parse_suppression_comment("# noqa: TL102", 10, 1, false)};
  CHECK(apply_suppressions({d}, other, registry).size() == 1);
}
