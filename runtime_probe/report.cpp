// The report's exit code and its two renderings: JSON (the schema documented in the README's
// "Runtime probe" section, id kSchema) and text for people.
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "probe.h"

#ifndef TORCHLINT_VERSION
#define TORCHLINT_VERSION "0.0.0"
#endif

namespace torchlint::probe {

std::string_view status_name(CheckStatus s) {
  switch (s) {
    case CheckStatus::kPassed:
      return "passed";
    case CheckStatus::kFailed:
      return "failed";
    case CheckStatus::kSkipped:
      return "skipped";
    case CheckStatus::kError:
      return "error";
  }
  return "?";
}

std::string format_bytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, unit == 0 ? "%.0f %s" : "%.1f %s", value, kUnits[unit]);
  return buf;
}

std::string format_number(double value, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*g", digits, value);
  return buf;
}

int Report::exit_code() const {
  if (!fatal.empty()) return 2;
  if (std::any_of(checks.begin(), checks.end(), [](const CheckResult& c) { return c.status == CheckStatus::kError; }))
    return 2;
  if (std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity != Severity::kInfo; }))
    return 1;
  return 0;
}

Json Report::to_json() const {
  Json j;
  j["schema"] = kSchema;
  j["tool"] = Json{{"name", "torchlint-probe"}, {"version", TORCHLINT_VERSION}};
  j["exit_code"] = exit_code();
  j["fatal"] = fatal.empty() ? Json(nullptr) : Json(fatal);
  j["seconds"] = seconds;
  j["environment"] = environment;
  j["model"] = model;
  j["summary"] = summary;
  Json cs = Json::object();
  for (const CheckResult& c : checks) {
    cs[c.name] = Json{{"status", status_name(c.status)},
                      {"rule", c.rule.empty() ? Json(nullptr) : Json(c.rule)},
                      {"seconds", c.seconds},
                      {"headline", c.headline},
                      {"reason", c.reason.empty() ? Json(nullptr) : Json(c.reason)},
                      {"figures", c.figures}};
  }
  j["checks"] = cs;
  Json fs = Json::array();
  for (const Finding& f : findings) {
    fs.push_back(Json{{"code", f.code},
                      {"name", f.name},
                      {"severity", severity_name(f.severity)},
                      {"check", f.check},
                      {"message", f.message}});
  }
  j["findings"] = fs;
  j["warnings"] = warnings;
  return j;
}

namespace {

struct Palette {
  bool on;
  std::string operator()(const char* code, std::string_view text) const {
    return on ? std::string("\x1b[") + code + "m" + std::string(text) + "\x1b[0m" : std::string(text);
  }
};

const char* status_color(CheckStatus s) {
  switch (s) {
    case CheckStatus::kPassed:
      return "32";
    case CheckStatus::kFailed:
      return "31";
    case CheckStatus::kSkipped:
      return "2";
    case CheckStatus::kError:
      return "1;31";
  }
  return "0";
}

template <class T>
T get_or(const Json& j, const char* key, T fallback) {
  return j.contains(key) && !j[key].is_null() ? j[key].get<T>() : fallback;
}

}  // namespace

std::string Report::to_text(bool color) const {
  const Palette paint{color};
  std::ostringstream out;
  out << paint("1", "torchlint-probe") << ' ' << get_or<std::string>(model, "path", "?");
  if (environment.contains("device")) {
    out << " on " << environment["device"].get<std::string>() << " (torch "
        << get_or<std::string>(environment, "torch_version", "?") << ", " << get_or<int>(environment, "threads", 0)
        << (get_or<int>(environment, "threads", 0) == 1 ? " thread)" : " threads)");
  }
  out << '\n';
  if (!fatal.empty()) {
    out << paint("1;31", "error") << ": " << fatal << '\n';
    return out.str();
  }
  out << "  model    " << get_or<std::string>(model, "format", "?") << ", "
      << get_or<std::string>(model, "forward", "forward") << ": " << get_or<int64_t>(summary, "parameters", 0)
      << " parameters (" << format_bytes(get_or<uint64_t>(summary, "parameter_bytes", 0)) << "), "
      << get_or<int64_t>(summary, "buffers", 0) << " buffers, " << get_or<int64_t>(summary, "modules", 0)
      << " modules\n";
  if (model.contains("checkpoint")) {
    const Json& c = model["checkpoint"];
    out << "  weights  " << get_or<std::string>(c, "path", "?") << " (`" << get_or<std::string>(c, "weights_at", "?")
        << "`, " << get_or<int64_t>(c, "tensors_loaded", 0) << " tensors)\n";
  }
  out << '\n';
  size_t width = 0;
  for (const CheckResult& c : checks) width = std::max(width, c.name.size());
  for (const CheckResult& c : checks) {
    char took[32];
    std::snprintf(took, sizeof took, "%7.2f s", c.seconds);
    std::string status(status_name(c.status));
    status.resize(8, ' ');
    out << "  " << c.name << std::string(width - c.name.size() + 2, ' ') << paint(status_color(c.status), status)
        << took << "  " << (c.reason.empty() ? c.headline : c.reason) << '\n';
  }
  if (!findings.empty()) out << '\n';
  size_t warnings_n = 0, errors_n = 0, infos = 0;
  for (const Finding& f : findings) {
    const char* sev_color = f.severity == Severity::kError ? "1;31" : f.severity == Severity::kWarning ? "33" : "36";
    out << "  " << paint("1", f.code) << ' ' << paint(sev_color, severity_name(f.severity)) << " [" << f.check << "] "
        << f.message << '\n';
    (f.severity == Severity::kError ? errors_n : f.severity == Severity::kWarning ? warnings_n : infos)++;
  }
  if (!warnings.empty()) {
    out << "\n  LibTorch warnings:\n";
    for (const std::string& w : warnings) out << "    " << w << '\n';
  }
  out << '\n'
      << errors_n + warnings_n << " finding" << (errors_n + warnings_n == 1 ? "" : "s") << " (" << errors_n << " error"
      << (errors_n == 1 ? "" : "s") << ", " << warnings_n << " warning" << (warnings_n == 1 ? "" : "s") << "), "
      << infos << " info; " << checks.size() << (checks.size() == 1 ? " check in " : " checks in ");
  char total[32];
  std::snprintf(total, sizeof total, "%.1f s", seconds);
  out << total << '\n';
  return out.str();
}

}  // namespace torchlint::probe
