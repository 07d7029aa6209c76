#include <doctest/doctest.h>

#include <string>

#include "core/glob.h"

using torchlint::glob_match;
using torchlint::path_matches;

TEST_CASE("glob matching") {
  CHECK(glob_match("*.py", "train.py"));
  CHECK_FALSE(glob_match("*.py", "src/train.py"));
  CHECK(glob_match("**/*.py", "src/train.py"));
  CHECK(glob_match("**/*.py", "train.py"));
  CHECK(glob_match("src/**", "src/a/b.py"));
  CHECK(glob_match("test_?.py", "test_1.py"));
  CHECK(glob_match("[a-c]x", "bx"));
  CHECK_FALSE(glob_match("[!a-c]x", "bx"));
  CHECK_FALSE(glob_match("a*b", "a/b"));
  // Pathological patterns finish quickly (no exponential backtracking).
  CHECK_FALSE(glob_match("*a*a*a*a*a*a*a*a*b", std::string(200, 'a')));
}

TEST_CASE("exclude and per-file-ignores path semantics") {
  CHECK(path_matches("migrations", "app/migrations/0001.py"));
  CHECK(path_matches("tests/*", "tests/test_x.py"));
  CHECK(path_matches("legacy", "legacy/old.py"));
  CHECK(path_matches("scripts/", "scripts/a/b.py"));
  CHECK_FALSE(path_matches("tests/*", "src/tests/x.py"));
  CHECK(path_matches("**/tests/*", "src/tests/x.py"));
  CHECK(path_matches("*_pb2.py", "proto/x_pb2.py"));
}
