#include <doctest/doctest.h>

#include "report/line_hash.h"

// Expected values were cross-checked once against an independent JavaScript
// implementation of the upload action's algorithm: CRLF, tabs, non-ASCII and a
// supplementary-plane character (a UTF-16 surrogate pair) are all covered.
TEST_CASE("primaryLocationLineHash matches GitHub's algorithm") {
  auto h = torchlint::report::primary_location_line_hashes(
      "import torch\r\n\r\nx = 1  # caf\xc3\xa9 \xf0\x9d\x94\x98\n\tm = torch.nn.DataParallel(net)\n\nx = 1  # "
      "caf\xc3\xa9 "
      "\xf0\x9d\x94\x98\n");
  REQUIRE(h.size() == 7);
  CHECK(h[0] == "24a96a73f39647ed:1");
  CHECK(h[1] == "c86a06ba2cee953c:1");
  CHECK(h[2] == "ff32d2e27f5aff42:1");
  CHECK(h[3] == "e73057c380c4921f:1");
  CHECK(h[5] == "3f5093a8ffa74516:1");
}

TEST_CASE("repeated blocks get increasing occurrence counts") {
  std::string text;
  for (int i = 0; i < 3; ++i) text += "\n";
  auto h = torchlint::report::primary_location_line_hashes(text);
  REQUIRE(h.size() >= 3);
  CHECK(h[0].ends_with(":1"));
  CHECK(h[0].substr(0, h[0].find(':')) != h[1].substr(0, h[1].find(':')));
}
