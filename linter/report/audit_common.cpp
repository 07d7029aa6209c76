#include <algorithm>
#include <cstdio>

#include "audit.h"

namespace torchlint::report {

std::vector<const ItemResult*> items_by_impact(const Scorecard& card) {
  std::vector<const ItemResult*> failed;
  for (const auto& r : card.items) {
    if (r.status == ItemStatus::kFailed) failed.push_back(&r);
  }
  std::stable_sort(failed.begin(), failed.end(), [](const ItemResult* a, const ItemResult* b) {
    if (a->worst != b->worst) return a->worst > b->worst;
    return a->evidence.size() > b->evidence.size();
  });
  return failed;
}

std::string human_size(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

namespace {

using json = nlohmann::ordered_json;

std::optional<double> number(const json& obj, const char* key) {
  if (!obj.is_object()) return std::nullopt;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string text(const json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool flag(const json& obj, const char* key) {
  if (!obj.is_object()) return false;
  auto it = obj.find(key);
  return it != obj.end() && it->is_boolean() && it->get<bool>();
}

const json& member(const json& obj, const char* key) {
  static const json null;
  if (!obj.is_object()) return null;
  auto it = obj.find(key);
  return it == obj.end() ? null : *it;
}

}  // namespace

// Reads only what the reports chart; a field the probe did not write (a check that was
// skipped, an older report) is simply absent.
ProbeFigures probe_figures(const json& report) {
  ProbeFigures f;
  if (!report.is_object()) return f;
  if (auto n = number(member(report, "summary"), "parameters")) f.parameters = static_cast<int64_t>(*n);
  f.device = text(member(report, "environment"), "device");
  const json& checks = member(report, "checks");
  if (checks.is_object()) {
    for (const auto& [name, check] : checks.items()) {
      f.checks.push_back({name, text(check, "status"), text(check, "headline")});
    }
  }
  const json& memory = member(member(member(checks, "memory"), "figures"), "per_batch");
  if (memory.is_array()) {
    for (const auto& row : memory) {
      ProbeFigures::Memory m;
      m.batch = static_cast<int64_t>(number(row, "batch").value_or(0));
      m.forward = number(row, "forward_peak_bytes");
      m.forward_backward = number(row, "forward_backward_peak_bytes");
      m.predicted_training = number(row, "predicted_training_bytes");
      m.out_of_memory = flag(row, "out_of_memory");
      f.memory.push_back(m);
    }
  }
  const json& amp = member(member(checks, "amp"), "figures");
  if (amp.is_object()) {
    for (const auto& [variant, v] : amp.items()) {
      if (!v.is_object()) continue;
      ProbeFigures::Amp a;
      a.variant = variant;
      a.max_abs = number(v, "max_abs");
      a.max_rel = number(v, "max_rel");
      a.tolerance = number(v, "tolerance");
      a.cosine = number(v, "cosine");
      a.passed = flag(v, "passed");
      a.error = text(v, "error");
      f.amp.push_back(a);
    }
  }
  const json& latency = member(member(member(checks, "latency"), "figures"), "per_batch");
  if (latency.is_array()) {
    for (const auto& row : latency) {
      ProbeFigures::Latency l;
      l.batch = static_cast<int64_t>(number(row, "batch").value_or(0));
      l.p50_ms = number(row, "p50_ms");
      l.p99_ms = number(row, "p99_ms");
      l.throughput = number(row, "throughput_per_s");
      l.out_of_memory = flag(row, "out_of_memory");
      f.latency.push_back(l);
    }
  }
  return f;
}

std::vector<PhaseItems> items_by_phase(const Scorecard& card) {
  static const std::pair<const char*, const char*> kPhases[] = {{"development", "Development"},
                                                                {"training", "Training"},
                                                                {"evaluation", "Evaluation"},
                                                                {"production", "Production"},
                                                                {"", "Other"}};
  auto known = [](const std::string& phase) {
    return phase == "development" || phase == "training" || phase == "evaluation" || phase == "production";
  };
  std::vector<PhaseItems> groups;
  for (const auto& [phase, title] : kPhases) {
    PhaseItems group{title, {}};
    for (const auto& r : card.items) {
      if ((*phase && r.item->phase == phase) || (!*phase && !known(r.item->phase))) group.items.push_back(&r);
    }
    if (!group.items.empty()) groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace torchlint::report
