// ts_parse_only: the "tree-sitter alone" baseline for bench/run.sh.
//
// Reads and parses every given Python file with the same grammar and runtime torchlint
// links, on one thread, and prints {"files":N,"lines":L,"bytes":B,"seconds":S}. The
// linter cannot be faster than this, so lint time / this time is the linter's overhead.
//
// Usage: ts_parse_only PATH...   (directories are searched recursively for *.py)

#include <tree_sitter/api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <system_error>
#include <vector>

extern "C" const TSLanguage *tree_sitter_python(void);

namespace fs = std::filesystem;

namespace {

struct ParserDeleter {
  void operator()(TSParser *parser) const { ts_parser_delete(parser); }
};
using ParserPtr = std::unique_ptr<TSParser, ParserDeleter>;

// Explicit files are taken as given (like the linter does); directories contribute only
// *.py. Symlinked directories are not followed so a cycle cannot make the walk endless.
bool collect(const fs::path &root, std::vector<fs::path> &out) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    if (!fs::exists(root, ec)) {
      std::fprintf(stderr, "ts_parse_only: no such file or directory: %s\n", root.c_str());
      return false;
    }
    out.push_back(root);
    return true;
  }
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().extension() == ".py" && it->is_regular_file(ec)) out.push_back(it->path());
  }
  if (ec) {
    std::fprintf(stderr, "ts_parse_only: cannot walk %s: %s\n", root.c_str(), ec.message().c_str());
    return false;
  }
  return true;
}

// Reuses one buffer across files: allocation is not what this baseline measures.
bool read_file(const fs::path &path, std::string &buffer) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) return false;
  in.seekg(0, std::ios::beg);
  buffer.resize(static_cast<std::size_t>(size));
  return static_cast<bool>(in.read(buffer.data(), size)) || size == 0;
}

// Counts lines the way `wc -l` would, plus a final line that lacks its newline, so the
// figure matches what an editor (and the linter's line numbers) would show.
std::uint64_t count_lines(const std::string &text) {
  auto lines = static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '\n'));
  if (!text.empty() && text.back() != '\n') ++lines;
  return lines;
}

}  // namespace

int main(int argc, char **argv) {
  const std::span<char *> args(argv + 1, static_cast<std::size_t>(argc > 0 ? argc - 1 : 0));
  if (args.empty()) {
    std::fprintf(stderr, "usage: ts_parse_only PATH...\n");
    return 2;
  }

  // Discovery stays outside the timed region: it is a filesystem cost, not a parsing
  // one, and sorting makes the order (hence cache behaviour) identical between runs.
  std::vector<fs::path> files;
  for (const char *arg : args) {
    if (!collect(arg, files)) return 1;
  }
  std::ranges::sort(files);
  files.erase(std::ranges::unique(files).begin(), files.end());

  ParserPtr parser(ts_parser_new());
  // Fails when the grammar's ABI is newer than the runtime's; better said than segfault.
  if (!ts_parser_set_language(parser.get(), tree_sitter_python())) {
    std::fprintf(stderr, "ts_parse_only: grammar ABI %u is not supported by this libtree-sitter\n",
                 ts_language_version(tree_sitter_python()));
    return 1;
  }

  std::uint64_t lines = 0;
  std::uint64_t bytes = 0;
  std::string source;
  const auto start = std::chrono::steady_clock::now();
  for (const fs::path &path : files) {
    if (!read_file(path, source)) {
      std::fprintf(stderr, "ts_parse_only: cannot read %s\n", path.c_str());
      return 1;
    }
    // tree-sitter takes a uint32_t length; a file that large is not a Python source.
    if (source.size() > UINT32_MAX) {
      std::fprintf(stderr, "ts_parse_only: file too large: %s\n", path.c_str());
      return 1;
    }
    TSTree *tree =
        ts_parser_parse_string(parser.get(), nullptr, source.data(), static_cast<std::uint32_t>(source.size()));
    if (tree == nullptr) {
      std::fprintf(stderr, "ts_parse_only: parse failed: %s\n", path.c_str());
      return 1;
    }
    ts_tree_delete(tree);
    lines += count_lines(source);
    bytes += source.size();
  }
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;

  std::printf("{\"files\":%zu,\"lines\":%llu,\"bytes\":%llu,\"seconds\":%.6f}\n", files.size(),
              static_cast<unsigned long long>(lines), static_cast<unsigned long long>(bytes), elapsed.count());
  return 0;
}
