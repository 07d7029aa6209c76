// The reader of `expect` marks that the golden, catalogue, checkpoint and C++ fixture tests
// share (tests/support/expect_marks.h): exact codes, and loud errors for marks it cannot read.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/expect_marks.h"

namespace fs = std::filesystem;
using namespace torchlint::testing;

namespace {

std::set<Mark> marks_of(std::string_view text, CommentSyntax syntax = CommentSyntax::kHash) {
  Marks m = parse_marks(text, "x/../f.py", syntax);
  for (const auto& e : m.errors) FAIL_CHECK(e);
  return m.marks;
}

std::vector<std::string> errors_of(std::string_view text, CommentSyntax syntax = CommentSyntax::kHash) {
  return parse_marks(text, "f.py", syntax).errors;
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("torchlint-marks-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("marks: codes are whole tokens, separated by commas or spaces") {
  CHECK(marks_of("a = 1  # expect: TL101\nb = 2\nc = 3  #expect:TL102,TL103 TL104\n") ==
        std::set<Mark>{{"f.py", 1, "TL101"}, {"f.py", 3, "TL102"}, {"f.py", 3, "TL103"}, {"f.py", 3, "TL104"}});
  CHECK(marks_of("x  # expect: TL101\r\n") == std::set<Mark>{{"f.py", 1, "TL101"}});
  // A code is never found inside a longer one, nor a longer one in a shorter.
  CHECK(errors_of("x  # expect: TL10\n").size() == 1);
  CHECK(errors_of("x  # expect: TL1011\n").size() == 1);
  CHECK(errors_of("x  # expect: TL101x\n").size() == 1);
}

TEST_CASE("marks: only in the file's own comments") {
  // `//` is floor division in Python, `#` a preprocessor line in C++.
  CHECK(marks_of("x = a // b  # expect: TL101\ny = a  // expect: TL102\n") == std::set<Mark>{{"f.py", 1, "TL101"}});
  CHECK(marks_of("#include <x.h>  // expect: TL101\n# expect: TL102\n", CommentSyntax::kSlashes) ==
        std::set<Mark>{{"f.py", 1, "TL101"}});
  // A mark after another tool's comment text, as C++ fixtures write after NOLINT.
  CHECK(marks_of("f();  // NOLINT(TL102) expect: TL207\n", CommentSyntax::kSlashes) ==
        std::set<Mark>{{"f.py", 1, "TL207"}});
  CHECK(marks_of("s = 'unexpect: TL101'\nprint('expect: TL101')\n").empty());
}

TEST_CASE("marks: a malformed mark is an error naming the file and line") {
  auto e = errors_of("a\nb  # expect: missing-seed\n");
  REQUIRE(e.size() == 1);
  CHECK(e[0] == "f.py:2: malformed expect mark: `missing-seed` is not a rule code (TL and three digits)");
  CHECK(errors_of("a  # expect:\n").size() == 1);
  CHECK(errors_of("a  # expect: TL101,\n").size() == 1);
  CHECK(errors_of("a  # expect: TL101, TL101\n").size() == 1);
  CHECK(errors_of("a  # expect: TL101  # noqa\n").size() == 2);  // `#` and `noqa`
  // Near misses that a lenient reader drops, and with them the line's expectation.
  CHECK(errors_of("a  # Expect: TL101\n").size() == 1);
  CHECK(errors_of("a  # expects TL101\n").size() == 1);
  CHECK(errors_of("a  # expect TL101\n").size() == 1);
  CHECK(errors_of("a  # we expect a slow run\n").empty());
}

TEST_CASE("marks: files and directories; a missing or empty one is an error") {
  TempDir dir;
  CHECK(read_marks(dir.path / "nothing", CommentSyntax::kHash).errors.size() == 1);
  Marks empty = read_marks(dir.path, CommentSyntax::kHash);
  CHECK(empty.errors.size() == 1);
  CHECK(empty.files == 0);
  fs::create_directories(dir.path / "pkg");
  std::ofstream(dir.path / "pkg" / "a.py") << "x  # expect: TL101\n";
  std::ofstream(dir.path / "b.cpp") << "x;  // expect: TL102\n";
  std::ofstream(dir.path / "notes.txt") << "# expect: TL103\n";
  Marks py = read_marks(dir.path, CommentSyntax::kHash);
  CHECK(py.errors.empty());
  CHECK(py.files == 1);
  CHECK(py.marks == std::set<Mark>{{(dir.path / "pkg" / "a.py").generic_string(), 1, "TL101"}});
  Marks cpp = read_marks(dir.path, CommentSyntax::kSlashes);
  CHECK(cpp.marks == std::set<Mark>{{(dir.path / "b.cpp").generic_string(), 1, "TL102"}});
  CHECK(comment_syntax_of("n.ipynb") == std::nullopt);
}

TEST_CASE("checkpoint cases: the expect array, required and exact") {
  TempDir dir;
  fs::path toml = dir.path / "cases.toml";
  std::ofstream(toml) << "[[case]]\nfile = \"a/bad.pt\"\nexpect = [\"TL801\", \"TL811\"]\nformat = \"zip\"\n\n"
                         "[[case]]\nfile = \"a/good.pt\"\nexpect = []\n";
  CheckpointCases ok = read_checkpoint_cases(toml);
  CHECK(ok.errors.empty());
  REQUIRE(ok.cases.size() == 2);
  CHECK(ok.cases[0].file == "a/bad.pt");
  CHECK(ok.cases[0].line == 1);
  CHECK(ok.cases[0].expect == std::set<std::string>{"TL801", "TL811"});
  CHECK(ok.cases[0].table["format"].value_or(std::string()) == "zip");
  CHECK(ok.cases[1].expect.empty());

  std::ofstream(toml) << "[[case]]\nfile = \"a/bad.pt\"\nexpects = [\"TL801\"]\n\n"
                         "[[case]]\nfile = \"b.pt\"\nexpect = [\"TL80\", 801]\n";
  CheckpointCases bad = read_checkpoint_cases(toml);
  CHECK(bad.errors.size() == 3);  // no `expect`, then two entries that are not codes
  std::ofstream(toml) << "# nothing\n";
  CHECK(read_checkpoint_cases(toml).errors.size() == 1);
  CHECK(read_checkpoint_cases(dir.path / "missing.toml").errors.size() == 1);
}
