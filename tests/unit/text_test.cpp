#include <doctest/doctest.h>

#include <cctype>
#include <string>
#include <string_view>

#include "core/text.h"

using namespace torchlint;

TEST_CASE("ASCII case mapping changes letters only") {
  CHECK(ascii_lower("Self.OptimizerG_2") == "self.optimizerg_2");
  CHECK(ascii_upper("tl102-x") == "TL102-X");
  // UTF-8 bytes of a non-ASCII name pass through unchanged.
  CHECK(ascii_lower("Modèle") == "modèle");
  for (int c = 0; c < 256; ++c) {
    char ch = static_cast<char>(c);
    bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    // The C locale's mapping, which the code replaced here relied on.
    CHECK(ascii_lower_char(ch) == (letter ? static_cast<char>(std::tolower(c)) : ch));
    CHECK(ascii_upper_char(ch) == (letter ? static_cast<char>(std::toupper(c)) : ch));
  }
}

TEST_CASE("ascii_iequals ignores case and nothing else") {
  CHECK(ascii_iequals("Content-Length", "content-length"));
  CHECK(ascii_iequals("", ""));
  CHECK_FALSE(ascii_iequals("noqa", "noq"));
  CHECK_FALSE(ascii_iequals("noqa", "noqb"));
}

TEST_CASE("ascii_ifind finds a needle ignoring case") {
  CHECK(ascii_ifind("self.LR_Scheduler", "sched") == 8);
  CHECK(ascii_ifind("optimizer", "OPTIM") == 0);
  CHECK(ascii_ifind("opt", "optim") == std::string_view::npos);
  CHECK(ascii_ifind("sched_sched", "sched", 1) == 6);
  CHECK(ascii_ifind("abc", "", 3) == 3);
  CHECK(ascii_ifind("abc", "", 4) == std::string_view::npos);
  CHECK(ascii_ifind("", "a") == std::string_view::npos);
}
