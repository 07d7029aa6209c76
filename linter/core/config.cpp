#include "config.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include "text.h"

namespace torchlint {

namespace fs = std::filesystem;

std::optional<TorchVersion> TorchVersion::parse(std::string_view text) {
  TorchVersion v;
  size_t i = 0;
  auto number = [&](int& out) {
    size_t start = i;
    out = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && i - start < 4) {
      out = out * 10 + (text[i] - '0');
      ++i;
    }
    return i > start;
  };
  if (!number(v.major)) return std::nullopt;
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (!number(v.minor)) return std::nullopt;
  }
  // Accept a patch level or local suffix ("2.4.1", "2.4.0+cu121") but nothing else.
  if (i < text.size() && text[i] != '.' && text[i] != '+') return std::nullopt;
  return v;
}

std::string TorchVersion::str() const { return std::to_string(major) + "." + std::to_string(minor); }

std::optional<uint64_t> parse_size(const std::string& text) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) return std::nullopt;
  double value = 0;
  try {
    value = std::stod(text.substr(0, i));
  } catch (...) {
    return std::nullopt;
  }
  std::string unit = ascii_lower(std::string_view(text).substr(i));
  static const std::map<std::string, double> units = {{"", 1},
                                                      {"b", 1},
                                                      {"k", 1024.0},
                                                      {"kb", 1e3},
                                                      {"kib", 1024.0},
                                                      {"m", 1048576.0},
                                                      {"mb", 1e6},
                                                      {"mib", 1048576.0},
                                                      {"g", 1073741824.0},
                                                      {"gb", 1e9},
                                                      {"gib", 1073741824.0},
                                                      {"t", 1099511627776.0},
                                                      {"tb", 1e12},
                                                      {"tib", 1099511627776.0}};
  auto it = units.find(unit);
  if (it == units.end() || value < 0) return std::nullopt;
  return static_cast<uint64_t>(value * it->second);
}

static bool pyproject_has_torchlint(const fs::path& file) {
  auto result = toml::parse_file(file.string());
  if (!result) return false;
  return result.table()["tool"]["torchlint"].is_table();
}

std::optional<fs::path> find_config_file(const fs::path& start) {
  std::error_code ec;
  fs::path dir = fs::absolute(start, ec);
  if (ec) return std::nullopt;
  if (!fs::is_directory(dir, ec)) dir = dir.parent_path();
  for (int depth = 0; depth < 256 && !dir.empty(); ++depth) {
    fs::path own = dir / "torchlint.toml";
    if (fs::is_regular_file(own, ec)) return own;
    fs::path pyproject = dir / "pyproject.toml";
    if (fs::is_regular_file(pyproject, ec) && pyproject_has_torchlint(pyproject)) return pyproject;
    if (dir == dir.root_path()) break;
    dir = dir.parent_path();
  }
  return std::nullopt;
}

namespace {

struct Reader {
  std::string file;
  std::string error;

  bool fail(const std::string& key, const std::string& what) {
    if (error.empty()) error = file + ": `" + key + "`: " + what;
    return false;
  }

  bool strings(const toml::node& node, const std::string& key, std::vector<std::string>& out) {
    const auto* arr = node.as_array();
    if (!arr) return fail(key, "expected an array of strings");
    for (const auto& item : *arr) {
      const auto* s = item.as_string();
      if (!s) return fail(key, "expected an array of strings");
      out.push_back(s->get());
    }
    return true;
  }
};

bool read_probe(Reader& reader, const toml::node& node, const std::string& prefix, ProbeConfig& probe) {
  const auto* table = node.as_table();
  if (!table) return reader.fail(prefix, "expected a table ([tool.torchlint.probe])");
  for (const auto& [key_node, value] : *table) {
    std::string key(key_node.str());
    std::string full = prefix + "." + key;
    if (key == "inputs") {
      if (!reader.strings(value, full, probe.inputs)) return false;
    } else if (key == "models") {
      if (!reader.strings(value, full, probe.models)) return false;
    } else if (key == "checks") {
      if (!reader.strings(value, full, probe.checks)) return false;
    } else if (key == "batch-sizes") {
      const auto* arr = value.as_array();
      if (!arr) return reader.fail(full, "expected an array of positive integers");
      for (const auto& item : *arr) {
        const auto* n = item.as_integer();
        if (!n || n->get() <= 0) return reader.fail(full, "expected an array of positive integers");
        probe.batch_sizes.push_back(n->get());
      }
    } else if (key == "device" || key == "memory-budget") {
      const auto* s = value.as_string();
      if (!s) return reader.fail(full, "expected a string");
      (key == "device" ? probe.device : probe.memory_budget) = s->get();
    } else if (key == "timeout") {
      const auto* n = value.as_integer();
      if (!n || n->get() <= 0) return reader.fail(full, "expected a positive number of seconds");
      probe.timeout_seconds = n->get();
    } else {
      return reader.fail(
          full, "unknown setting (known: inputs, models, batch-sizes, checks, device, memory-budget, timeout)");
    }
  }
  return true;
}

// Paths in the file are relative to its directory, whatever the working directory.
bool read_cpp(Reader& reader, const toml::node& node, const std::string& prefix, const fs::path& root, CppConfig& cpp) {
  const auto* table = node.as_table();
  if (!table) return reader.fail(prefix, "expected a table ([tool.torchlint.cpp] or [cpp])");
  auto path = [&](const toml::node& value, const std::string& full, std::optional<std::string>& out) {
    const auto* s = value.as_string();
    if (!s || s->get().empty()) return reader.fail(full, "expected a directory path");
    out = (root / s->get()).lexically_normal().string();
    return true;
  };
  for (const auto& [key_node, value] : *table) {
    std::string key(key_node.str());
    std::string full = prefix + "." + key;
    if (key == "build-path") {
      if (!path(value, full, cpp.build_path)) return false;
    } else if (key == "pch-dir") {
      if (!path(value, full, cpp.pch_dir)) return false;
    } else if (key == "extra-args") {
      if (!reader.strings(value, full, cpp.extra_args)) return false;
    } else if (key == "pch-max-size") {
      // A size with a unit ("2G", "500M") or a number of bytes.
      std::optional<uint64_t> size;
      if (const auto* n = value.as_integer(); n && n->get() >= 0) size = static_cast<uint64_t>(n->get());
      if (const auto* s = value.as_string()) size = parse_size(s->get());
      if (!size) return reader.fail(full, "expected a size such as \"2G\", \"500M\" or a number of bytes");
      cpp.pch_max_size = size;
    } else {
      return reader.fail(full, "unknown setting (known: build-path, extra-args, pch-dir, pch-max-size)");
    }
  }
  return true;
}

}  // namespace

std::optional<Config> load_config(const fs::path& file, std::string& error) {
  auto parsed = toml::parse_file(file.string());
  if (!parsed) {
    const auto& err = parsed.error();
    std::ostringstream msg;
    msg << file.string() << ":" << err.source().begin.line << ":" << err.source().begin.column
        << ": invalid TOML: " << err.description();
    error = msg.str();
    return std::nullopt;
  }
  const toml::table& doc = parsed.table();
  const toml::table* table = &doc;
  bool is_pyproject = file.filename() == "pyproject.toml";
  if (is_pyproject) {
    table = doc["tool"]["torchlint"].as_table();
    if (!table) {
      error = file.string() + ": no [tool.torchlint] table";
      return std::nullopt;
    }
  }
  Config config;
  config.file = file;
  config.root = fs::absolute(file).parent_path();
  Reader reader{file.string(), {}};
  const std::string prefix = is_pyproject ? "tool.torchlint." : "";

  for (const auto& [key_node, value] : *table) {
    std::string key(key_node.str());
    std::string full = prefix + key;
    if (key == "select") {
      std::vector<std::string> v;
      if (!reader.strings(value, full, v)) break;
      config.selection.select = std::move(v);
    } else if (key == "extend-select") {
      if (!reader.strings(value, full, config.selection.extend_select)) break;
    } else if (key == "ignore") {
      if (!reader.strings(value, full, config.selection.ignore)) break;
    } else if (key == "exclude" || key == "extend-exclude") {
      if (!reader.strings(value, full, config.exclude)) break;
    } else if (key == "per-file-ignores") {
      const auto* t = value.as_table();
      if (!t) {
        reader.fail(full, "expected a table of glob = [codes]");
        break;
      }
      for (const auto& [glob, codes] : *t) {
        std::vector<std::string> v;
        if (!reader.strings(codes, full + "." + std::string(glob.str()), v)) break;
        config.per_file_ignores.emplace_back(std::string(glob.str()), std::move(v));
      }
    } else if (key == "target-torch" || key == "target-torchvision") {
      const bool vision = key == "target-torchvision";
      const auto* s = value.as_string();
      auto version = s ? TorchVersion::parse(s->get()) : std::nullopt;
      if (!version) {
        reader.fail(
            full, vision ? "expected a version string such as \"0.19\"" : "expected a version string such as \"2.4\"");
        break;
      }
      (vision ? config.target_torchvision : config.target_torch) = version;
      (vision ? config.target_torchvision_source : config.target_torch_source) = file.filename().string();
    } else if (key == "probe") {
      if (!read_probe(reader, value, full, config.probe)) break;
    } else if (key == "cpp") {
      if (!read_cpp(reader, value, full, config.root, config.cpp)) break;
    } else {
      reader.fail(full,
                  "unknown setting (known: select, extend-select, ignore, per-file-ignores, "
                  "exclude, extend-exclude, target-torch, target-torchvision, probe, cpp)");
      break;
    }
    if (!reader.error.empty()) break;
  }
  if (!reader.error.empty()) {
    error = reader.error;
    return std::nullopt;
  }
  return config;
}

static std::optional<TorchVersion> lower_bound(const std::string& requirement, std::string_view package) {
  // "torch>=2.1,<3", "torch==2.4.0", "torch ~= 2.2": the lowest version allowed.
  static const std::regex re(R"(^\s*["']?([A-Za-z0-9_.-]+)\s*(\[[^\]]*\])?\s*(>=|==|~=|===)\s*([0-9]+(\.[0-9]+)?))",
                             std::regex::icase);
  std::smatch m;
  if (!std::regex_search(requirement, m, re)) return std::nullopt;
  if (ascii_lower(m[1].str()) != package) return std::nullopt;
  return TorchVersion::parse(m[4].str());
}

std::optional<TorchVersion> infer_target_version(const fs::path& dir, std::string_view package, std::string& source) {
  std::error_code ec;
  for (const char* name : {"requirements.txt", "requirements-train.txt", "requirements/base.txt"}) {
    fs::path p = dir / name;
    if (!fs::is_regular_file(p, ec)) continue;
    std::ifstream in(p);
    std::string line;
    while (std::getline(in, line)) {
      if (auto v = lower_bound(line, package)) {
        source = name;
        return v;
      }
    }
  }
  fs::path pyproject = dir / "pyproject.toml";
  if (fs::is_regular_file(pyproject, ec)) {
    auto parsed = toml::parse_file(pyproject.string());
    if (parsed) {
      if (const auto* deps = parsed.table()["project"]["dependencies"].as_array()) {
        for (const auto& d : *deps) {
          if (const auto* s = d.as_string()) {
            if (auto v = lower_bound(s->get(), package)) {
              source = "pyproject.toml";
              return v;
            }
          }
        }
      }
    }
  }
  return std::nullopt;
}

std::optional<TorchVersion> infer_target_torch(const fs::path& dir, std::string& source) {
  return infer_target_version(dir, "torch", source);
}

}  // namespace torchlint
