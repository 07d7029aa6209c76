// `expect_marks FILE...`: the expect marks of source files as JSON, [{"path", "line",
// "code"}], so that the shell tests (tests/cpp_e2e_test.sh) read marks with the same parser
// as the C++ tests instead of a regular expression of their own. Exit 1, with the errors on
// stderr, when a mark does not parse; 2 for a file of no known comment syntax.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "expect_marks.h"

using namespace torchlint::testing;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: expect_marks FILE...\n");
    return 2;
  }
  nlohmann::json out = nlohmann::json::array();
  bool malformed = false;
  for (int i = 1; i < argc; ++i) {
    auto syntax = comment_syntax_of(argv[i]);
    if (!syntax) {
      std::fprintf(stderr, "expect_marks: %s: not a Python or C++ source\n", argv[i]);
      return 2;
    }
    Marks marks = read_marks(argv[i], *syntax);
    for (const auto& e : marks.errors) std::fprintf(stderr, "expect_marks: %s\n", e.c_str());
    malformed = malformed || !marks.errors.empty();
    for (const auto& m : marks.marks) out.push_back({{"path", m.path}, {"line", m.line}, {"code", m.code}});
  }
  std::printf("%s\n", out.dump().c_str());
  return malformed ? 1 : 0;
}
