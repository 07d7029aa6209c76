#include <doctest/doctest.h>

#include "core/source_file.h"

using torchlint::SourceFile;

TEST_CASE("line index and code-point columns") {
  SourceFile f("x.py", "a = 1\nb = \"é\" + c\r\nlast");
  CHECK(f.line_count() == 3);
  CHECK(f.line_text(2) == "b = \"é\" + c");
  CHECK(f.line_text(3) == "last");
  auto p = f.position(static_cast<uint32_t>(std::string_view(f.text()).find('+')));
  CHECK(p.line == 2);
  CHECK(p.column == 9);  // é is one code point though two bytes
  CHECK(f.position(0).line == 1);
  CHECK(f.position(1000).line == 3);  // clamped
}

TEST_CASE("UTF-8 validation finds the first bad byte") {
  CHECK_FALSE(SourceFile("x.py", "ok = 'ünïcode ✓ 𝔘'").find_invalid_utf8());
  auto bad = SourceFile("x.py", std::string("ab\xff"
                                            "cd"))
                 .find_invalid_utf8();
  REQUIRE(bad);
  CHECK(bad->offset == 2);
  CHECK(bad->byte == 0xff);
  CHECK(SourceFile("x.py", std::string("\xc0\x80")).find_invalid_utf8());      // overlong
  CHECK(SourceFile("x.py", std::string("\xed\xa0\x80")).find_invalid_utf8());  // surrogate
  CHECK(SourceFile("x.py", std::string("\xe2\x82")).find_invalid_utf8());      // truncated
}

TEST_CASE("binary detection and read errors") {
  CHECK(SourceFile("x", std::string("ab\0cd", 5)).find_nul() == 2u);
  std::string error;
  CHECK_FALSE(SourceFile::read("/nonexistent/torchlint/x.py", error));
  CHECK(error.find("No such file") != std::string::npos);
  CHECK_FALSE(SourceFile::read("/", error));
  CHECK(error == "is a directory");
}
