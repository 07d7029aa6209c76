#include "options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>

namespace torchlint::probe {

namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

template <class T>
std::optional<T> number(std::string_view text) {
  T value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

}  // namespace

std::optional<InputSpec> parse_input_spec(std::string_view text, std::string& error) {
  const std::string where = "--input " + std::string(text) + ": ";
  const auto parts = split(text, ':');
  if (parts.size() < 2 || parts.size() > 4) {
    error = where + "expected NAME:SHAPE[:DTYPE[:LOW..HIGH]], e.g. x:1x3x224x224:float32";
    return std::nullopt;
  }
  InputSpec spec;
  spec.name = std::string(parts[0]);
  if (!is_identifier(spec.name)) {
    error = where + "the name must be an identifier (forward's argument name)";
    return std::nullopt;
  }
  for (std::string_view dim : split(parts[1], 'x')) {
    auto n = number<int64_t>(dim);
    if (!n || *n < 1) {
      error = where + "the shape must be positive sizes joined by `x`, e.g. 8x3x224x224";
      return std::nullopt;
    }
    spec.shape.push_back(*n);
  }
  spec.dtype = parts.size() >= 3 ? std::string(parts[2]) : "float32";
  if (std::find(std::begin(kInputDTypes), std::end(kInputDTypes), spec.dtype) == std::end(kInputDTypes)) {
    error = where + "unknown dtype `" + spec.dtype +
            "` (one of float32, float16, bfloat16, float64, int64, int32, "
            "int16, int8, uint8, bool)";
    return std::nullopt;
  }
  if (parts.size() == 4) {
    const size_t dots = parts[3].find("..");
    auto low = dots == std::string_view::npos ? std::nullopt : number<double>(parts[3].substr(0, dots));
    auto high = dots == std::string_view::npos ? std::nullopt : number<double>(parts[3].substr(dots + 2));
    if (!low || !high || !(*low < *high)) {
      error = where + "the range must be LOW..HIGH with LOW < HIGH (HIGH excluded), e.g. 0..1000";
      return std::nullopt;
    }
    spec.low = low;
    spec.high = high;
  }
  return spec;
}

std::optional<uint64_t> parse_byte_size(std::string_view text, std::string& error) {
  size_t unit_at = 0;
  while (unit_at < text.size() && (std::isdigit(static_cast<unsigned char>(text[unit_at])) || text[unit_at] == '.'))
    ++unit_at;
  auto value = number<double>(text.substr(0, unit_at));
  std::string unit(text.substr(unit_at));
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  static constexpr struct {
    std::string_view name;
    double factor;
  } kUnits[] = {{"", 1},       {"B", 1},        {"K", 0x1p10},   {"KIB", 0x1p10}, {"KB", 1e3},
                {"M", 0x1p20}, {"MIB", 0x1p20}, {"MB", 1e6},     {"G", 0x1p30},   {"GIB", 0x1p30},
                {"GB", 1e9},   {"T", 0x1p40},   {"TIB", 0x1p40}, {"TB", 1e12}};
  for (const auto& u : kUnits) {
    if (value && u.name == unit) return static_cast<uint64_t>(std::llround(*value * u.factor));
  }
  error = "--memory-budget " + std::string(text) + ": expected a size such as 16GiB, 512MiB or 2GB";
  return std::nullopt;
}

std::optional<std::vector<int64_t>> parse_batch_sizes(std::string_view text, std::string& error) {
  std::vector<int64_t> sizes;
  for (std::string_view part : split(text, ',')) {
    auto n = number<int64_t>(part);
    if (!n || *n < 1) {
      error = "--batch-sizes " + std::string(text) + ": expected positive integers separated by commas, e.g. 1,8,32";
      return std::nullopt;
    }
    if (std::find(sizes.begin(), sizes.end(), *n) == sizes.end()) sizes.push_back(*n);
  }
  return sizes;
}

std::optional<std::vector<std::string>> parse_check_list(std::string_view text, std::string& error) {
  std::vector<std::string> checks;
  for (std::string_view part : split(text, ',')) {
    if (part == "all") {
      for (std::string_view name : kCheckNames) checks.emplace_back(name);
      continue;
    }
    if (std::find(std::begin(kCheckNames), std::end(kCheckNames), part) == std::end(kCheckNames)) {
      std::string known;
      for (std::string_view name : kCheckNames) known += (known.empty() ? "" : ", ") + std::string(name);
      error = "--checks: unknown check `" + std::string(part) + "` (one of " + known + ", or all)";
      return std::nullopt;
    }
    checks.emplace_back(part);
  }
  return checks;
}

std::optional<OptimizerKind> parse_optimizer(std::string_view text, std::string& error) {
  if (text == "sgd") return OptimizerKind::kSgd;
  if (text == "sgd-momentum") return OptimizerKind::kMomentum;
  if (text == "adam") return OptimizerKind::kAdam;
  if (text == "adamw") return OptimizerKind::kAdamW;
  if (text == "adam-amsgrad") return OptimizerKind::kAmsgrad;
  error = "--optimizer " + std::string(text) + ": one of sgd, sgd-momentum, adam, adamw, adam-amsgrad";
  return std::nullopt;
}

}  // namespace torchlint::probe
