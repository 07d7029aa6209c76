#include "expect_marks.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace torchlint::testing {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMark = "expect:";

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Where `expect:` starts in a comment's text as a word of its own (not `unexpect:`), or npos.
size_t find_mark(std::string_view comment) {
  for (size_t at = comment.find(kMark); at != std::string_view::npos; at = comment.find(kMark, at + 1)) {
    if (at == 0 || !is_word_char(comment[at - 1])) return at;
  }
  return std::string_view::npos;
}

// A comment that says "expect" and then a rule code without being a mark (`Expect: TL101`,
// `expects TL101`, `expect TL101`): most likely a mark written wrong, which a lenient
// reader would drop and with it the line's expectation.
bool looks_like_mark(std::string_view comment) {
  std::string lower(comment);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (size_t at = lower.find("expect"); at != std::string::npos; at = lower.find("expect", at + 1)) {
    size_t i = at + 6;
    while (i < lower.size() && std::isalpha(static_cast<unsigned char>(lower[i]))) ++i;
    while (i < lower.size() && (is_space(lower[i]) || lower[i] == ':' || lower[i] == '=')) ++i;
    if (i + 2 < lower.size() && lower.compare(i, 2, "tl") == 0 &&
        std::isdigit(static_cast<unsigned char>(lower[i + 2])))
      return true;
  }
  return false;
}

std::optional<std::string> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in.is_open()) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return ss.str();
}

}  // namespace

std::optional<CommentSyntax> comment_syntax_of(const fs::path& file) {
  std::string ext = file.extension().string();
  if (ext == ".py" || ext == ".pyi") return CommentSyntax::kHash;
  if (ext == ".cpp" || ext == ".cc" || ext == ".cxx" || ext == ".h" || ext == ".hpp" || ext == ".hh")
    return CommentSyntax::kSlashes;
  return std::nullopt;
}

bool is_rule_code(std::string_view token) {
  return token.size() == 5 && token.starts_with("TL") &&
         std::all_of(token.begin() + 2, token.end(), [](char c) { return c >= '0' && c <= '9'; });
}

Marks parse_marks(std::string_view text, const fs::path& path, CommentSyntax syntax) {
  const std::string name = path.lexically_normal().generic_string();
  const std::string_view introducer = syntax == CommentSyntax::kHash ? "#" : "//";
  Marks out;
  out.files = 1;
  uint32_t n = 0;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    ++n;
    // The first introducer starts the comment; one inside a string literal before it only
    // widens the text searched, and a mark is still found after it.
    size_t comment_at = line.find(introducer);
    if (comment_at == std::string_view::npos) continue;
    std::string_view comment = line.substr(comment_at + introducer.size());
    auto error = [&](const std::string& what) {
      out.errors.push_back(name + ":" + std::to_string(n) + ": malformed expect mark: " + what);
    };
    size_t at = find_mark(comment);
    if (at == std::string_view::npos) {
      if (looks_like_mark(comment)) error("write it `expect: TLnnn` (lower case, with the colon)");
      continue;
    }
    // The rest of the line is the list: codes separated by commas and/or spaces.
    std::string_view list = comment.substr(at + kMark.size());
    if (trim(list).empty()) {
      error("names no rule code");
      continue;
    }
    std::set<std::string> codes;
    for (;;) {
      size_t comma = list.find(',');
      std::string_view item = trim(list.substr(0, comma));
      if (item.empty()) error("an empty entry in the list");
      while (!item.empty()) {
        size_t end = 0;
        while (end < item.size() && !is_space(item[end])) ++end;
        std::string code(item.substr(0, end));
        item = trim(item.substr(end));
        if (!is_rule_code(code)) {
          error("`" + code + "` is not a rule code (TL and three digits)");
        } else if (!codes.insert(code).second) {
          error(code + " is named twice");
        } else {
          out.marks.insert({name, n, code});
        }
      }
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
    }
  }
  return out;
}

Marks read_marks(const fs::path& root, CommentSyntax syntax) {
  Marks out;
  std::error_code ec;
  std::vector<fs::path> files;
  if (fs::is_directory(root, ec)) {
    for (const auto& e : fs::recursive_directory_iterator(root, ec)) {
      if (e.is_regular_file() && comment_syntax_of(e.path()) == syntax) files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    if (files.empty())
      out.errors.push_back(root.generic_string() + ": no " + (syntax == CommentSyntax::kHash ? "Python" : "C++") +
                           " source in this directory");
  } else if (fs::is_regular_file(root, ec)) {
    files.push_back(root);
  } else {
    out.errors.push_back(root.generic_string() + ": no such file or directory");
  }
  for (const auto& file : files) {
    std::optional<std::string> text = read_file(file);
    if (!text) {
      out.errors.push_back(file.generic_string() + ": cannot be read");
      continue;
    }
    Marks one = parse_marks(*text, file, syntax);
    out.marks.merge(one.marks);
    out.errors.insert(out.errors.end(), one.errors.begin(), one.errors.end());
    ++out.files;
  }
  return out;
}

CheckpointCases read_checkpoint_cases(const fs::path& cases_toml) {
  CheckpointCases out;
  const std::string name = cases_toml.generic_string();
  auto parsed = toml::parse_file(cases_toml.string());
  if (!parsed) {
    std::ostringstream why;
    why << name << ":" << parsed.error().source().begin.line << ": does not parse: " << parsed.error().description();
    out.errors.push_back(why.str());
    return out;
  }
  const toml::array* list = parsed.table()["case"].as_array();
  if (!list || list->empty()) {
    out.errors.push_back(name + ": no [[case]]");
    return out;
  }
  for (const auto& node : *list) {
    const toml::table* t = node.as_table();
    uint32_t line = node.source().begin.line;
    auto error = [&](const std::string& what) {
      out.errors.push_back(name + ":" + std::to_string(line) + ": " + what);
    };
    if (!t) {
      error("a case that is not a table");
      continue;
    }
    CheckpointCase c{.file = (*t)["file"].value_or(std::string()), .line = line, .table = *t};
    if (c.file.empty()) error("a case without a `file`");
    const toml::array* expect = (*t)["expect"].as_array();
    if (!expect) {
      error("case " + c.file + " has no `expect` array (`expect = []` for a file that must give nothing)");
      continue;
    }
    for (const auto& entry : *expect) {
      std::optional<std::string> code = entry.value<std::string>();
      if (!code || !is_rule_code(*code)) {
        error("case " + c.file + ": an `expect` entry that is not a rule code (TL and three digits)");
      } else if (!c.expect.insert(*code).second) {
        error("case " + c.file + ": " + *code + " is expected twice");
      }
    }
    out.cases.push_back(std::move(c));
  }
  return out;
}

CheckpointCases read_checkpoint_fixture_cases(const fs::path& dir) {
  CheckpointCases out = read_checkpoint_cases(dir / "cases.toml");
  std::vector<fs::path> rule_dirs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory() && fs::exists(e.path() / "cases.toml")) rule_dirs.push_back(e.path());
  }
  std::sort(rule_dirs.begin(), rule_dirs.end());
  for (const auto& rule_dir : rule_dirs) {
    CheckpointCases more = read_checkpoint_cases(rule_dir / "cases.toml");
    for (auto& c : more.cases) {
      c.file = rule_dir.filename().generic_string() + "/" + c.file;
      out.cases.push_back(std::move(c));
    }
    out.errors.insert(out.errors.end(), more.errors.begin(), more.errors.end());
  }
  return out;
}

}  // namespace torchlint::testing
