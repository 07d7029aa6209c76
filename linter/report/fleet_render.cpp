// The fleet report as JSON (torchlint-fleet/1), Markdown and self-contained HTML.
#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "audit.h"
#include "fleet.h"

namespace torchlint::report {

namespace {

using ojson = nlohmann::ordered_json;

// The verdicts in the order the reports list them, worst first.
const std::vector<std::string>& verdict_order() {
  static const std::vector<std::string> order = {"dangerous", "unknown", "needs trust", "no code", "safe"};
  return order;
}

int verdict_rank(const std::string& v) {
  const auto& order = verdict_order();
  auto it = std::find(order.begin(), order.end(), v);
  return static_cast<int>(it - order.begin());
}

// Checkpoints a person should look at: any verdict other than safe/no code, or a failed read.
std::vector<const FleetCheckpoint*> flagged(const FleetReport& r) {
  std::vector<const FleetCheckpoint*> out;
  for (const auto& cp : r.checkpoints) {
    if (cp.safety != "safe" && cp.safety != "no code")
      out.push_back(&cp);
    else if (cp.status == "error")
      out.push_back(&cp);
  }
  std::stable_sort(out.begin(), out.end(), [](const FleetCheckpoint* a, const FleetCheckpoint* b) {
    return verdict_rank(a->safety) < verdict_rank(b->safety);
  });
  return out;
}

std::optional<double> mean_score(const FleetReport& r) {
  double sum = 0;
  size_t n = 0;
  for (const auto& repo : r.repos) {
    if (repo.score) sum += *repo.score, ++n;
  }
  if (!n) return std::nullopt;
  return sum / static_cast<double>(n);
}

std::string fixed1(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// "+5", "-12", "±0"; "new" when the baseline did not have it.
std::string delta(const FleetRepo& repo) {
  if (!repo.baseline_score || !repo.score) return repo.baseline_score || !repo.score ? "" : "new";
  int d = *repo.score - *repo.baseline_score;
  return d > 0 ? "+" + std::to_string(d) : d < 0 ? std::to_string(d) : "±0";
}

// Rules by findings across the fleet, most first.
std::vector<std::pair<std::string, size_t>> top_rules(const FleetReport& r, size_t limit) {
  std::vector<std::pair<std::string, size_t>> rules(r.rule_findings.begin(), r.rule_findings.end());
  std::stable_sort(rules.begin(), rules.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (rules.size() > limit) rules.resize(limit);
  return rules;
}

// A path short enough for a chart's label column: its end, which tells repositories apart.
std::string chart_label(const std::string& path) {
  constexpr size_t kMax = 20;
  return path.size() <= kMax ? path : "…" + path.substr(path.size() - kMax + 1);
}

constexpr size_t kListed = 500;  // rows of a long list in Markdown and HTML (JSON has all)

}  // namespace

void write_fleet_json(std::ostream& out, const FleetReport& r) {
  ojson doc;
  doc["schema"] = kFleetSchema;
  doc["tool"] = {{"name", "torchlint"}, {"version", TORCHLINT_VERSION}};
  doc["generated_at"] = r.generated_at;
  auto mean = mean_score(r);
  doc["summary"] = {{"shards", r.shards},
                    {"records", r.records},
                    {"units", r.repos.size() + r.checkpoints.size()},
                    {"repositories", r.repos.size()},
                    {"checkpoints", r.checkpoints.size()},
                    {"duplicates", r.duplicates},
                    {"errors", r.errors.size()},
                    {"malformed", r.malformed.size()},
                    {"mean_score", mean ? ojson(*mean) : ojson(nullptr)}};
  ojson repos = ojson::array();
  for (const auto& repo : r.repos) {
    ojson j = {{"path", repo.path},
               {"status", repo.status},
               {"error", repo.error.empty() ? ojson(nullptr) : ojson(repo.error)},
               {"score", repo.score ? ojson(*repo.score) : ojson(nullptr)},
               {"passed", repo.passed},
               {"failed", repo.failed},
               {"not_applicable", repo.not_applicable},
               {"manual", repo.manual},
               {"not_checked", repo.not_checked},
               {"files_linted", repo.files_linted},
               {"findings", repo.findings},
               {"checkpoints", repo.checkpoints},
               {"dangerous_checkpoints", repo.dangerous_checkpoints},
               {"failed_items", repo.failed_items}};
    if (r.has_baseline) j["baseline_score"] = repo.baseline_score ? ojson(*repo.baseline_score) : ojson(nullptr);
    repos.push_back(std::move(j));
  }
  doc["repositories"] = std::move(repos);
  ojson items = ojson::array();
  for (const auto& item : r.worst_items) {
    items.push_back({{"id", item.id},
                     {"title", item.title},
                     {"failing_repositories", item.repos.size()},
                     {"repositories", item.repos}});
  }
  doc["worst_items"] = std::move(items);
  doc["rule_findings"] = r.rule_findings;
  ojson verdicts = ojson::object();
  for (const auto& v : verdict_order()) verdicts[v] = r.verdicts.contains(v) ? r.verdicts.at(v) : 0;
  ojson dirs = ojson::array();
  for (const auto& d : r.directories) dirs.push_back({{"path", d.path}, {"total", d.total}, {"verdicts", d.verdicts}});
  ojson listed = ojson::array();
  for (const FleetCheckpoint* cp : flagged(r)) {
    listed.push_back({{"path", cp->path},
                      {"safety", cp->safety},
                      {"safety_detail", cp->safety_detail},
                      {"format", cp->format},
                      {"findings", cp->codes},
                      {"status", cp->status},
                      {"error", cp->error.empty() ? ojson(nullptr) : ojson(cp->error)}});
  }
  doc["checkpoints"] = {{"verdicts", verdicts}, {"by_directory", dirs}, {"flagged", listed}};
  ojson errors = ojson::array();
  for (const auto& e : r.errors) errors.push_back({{"kind", e.kind}, {"path", e.path}, {"message", e.message}});
  doc["errors"] = std::move(errors);
  doc["malformed"] = r.malformed;
  if (r.has_baseline) {
    doc["trends"] = {{"baseline_records", r.baseline_records},
                     {"mean_score", r.mean_score ? ojson(*r.mean_score) : ojson(nullptr)},
                     {"baseline_mean_score", r.baseline_mean_score ? ojson(*r.baseline_mean_score) : ojson(nullptr)},
                     {"repositories_added", r.repos_added},
                     {"repositories_removed", r.repos_removed},
                     {"baseline_dangerous_checkpoints", r.baseline_dangerous},
                     {"newly_dangerous", r.newly_dangerous}};
  } else {
    doc["trends"] = nullptr;
  }
  out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

void write_fleet_markdown(std::ostream& out, const FleetReport& r) {
  auto mean = mean_score(r);
  out << "# torchlint fleet report\n\n"
      << r.repos.size() << " repositories, " << r.checkpoints.size() << " checkpoint files from " << r.shards
      << " shards (" << r.records << " records, " << r.duplicates << " duplicates left out); " << r.errors.size()
      << (r.errors.size() == 1 ? " unit failed" : " units failed")
      << (r.malformed.empty() ? "" : "; " + std::to_string(r.malformed.size()) + " malformed lines") << ". Generated "
      << r.generated_at << ".\n\n";
  if (mean) out << "Mean score: **" << fixed1(*mean) << "/100**.\n\n";
  if (r.has_baseline) {
    out << "## Trends\n\n";
    if (r.mean_score && r.baseline_mean_score) {
      out << "Mean score of the repositories in both runs: " << fixed1(*r.baseline_mean_score) << " → "
          << fixed1(*r.mean_score) << ".\n";
    }
    out << "Repositories added: " << r.repos_added.size() << ", removed: " << r.repos_removed.size()
        << ". Dangerous checkpoints: " << r.baseline_dangerous << " → "
        << (r.verdicts.contains("dangerous") ? r.verdicts.at("dangerous") : 0) << " (" << r.newly_dangerous.size()
        << " new).\n\n";
  }
  if (!r.repos.empty()) {
    out << "## Repositories\n\n| repository | score | " << (r.has_baseline ? "change | " : "")
        << "failed items | findings | checkpoints (dangerous) |\n|---|---|" << (r.has_baseline ? "---|" : "")
        << "---|---|---|\n";
    for (const auto& repo : r.repos) {
      out << "| " << markdown_cell(repo.path) << " | "
          << (repo.score ? std::to_string(*repo.score) : "error: " + markdown_cell(repo.error)) << " | ";
      if (r.has_baseline) out << delta(repo) << " | ";
      out << repo.failed << " | " << repo.findings << " | " << repo.checkpoints << " (" << repo.dangerous_checkpoints
          << ") |\n";
    }
    out << '\n';
  }
  if (!r.worst_items.empty()) {
    out << "## Worst checklist items\n\n| item | title | failing repositories |\n|---|---|---|\n";
    for (const auto& item : r.worst_items) {
      out << "| " << markdown_cell(item.id) << " | " << markdown_cell(item.title) << " | " << item.repos.size()
          << " of " << r.repos.size() << " |\n";
    }
    out << '\n';
    out << "Findings by rule (most first): ";
    auto rules = top_rules(r, 15);
    for (size_t i = 0; i < rules.size(); ++i) out << (i ? ", " : "") << rules[i].first << " " << rules[i].second;
    out << ".\n\n";
  }
  if (!r.checkpoints.empty()) {
    out << "## Checkpoints\n\n| verdict | files |\n|---|---|\n";
    for (const auto& v : verdict_order())
      out << "| " << v << " | " << (r.verdicts.contains(v) ? r.verdicts.at(v) : 0) << " |\n";
    out << "\n| directory | files |";
    for (const auto& v : verdict_order()) out << ' ' << v << " |";
    out << "\n|---|---|";
    for (size_t i = 0; i < verdict_order().size(); ++i) out << "---|";
    out << '\n';
    for (const auto& d : r.directories) {
      out << "| " << markdown_cell(d.path) << " | " << d.total << " |";
      for (const auto& v : verdict_order()) out << ' ' << (d.verdicts.contains(v) ? d.verdicts.at(v) : 0) << " |";
      out << '\n';
    }
    auto list = flagged(r);
    if (!list.empty()) {
      out << "\n### Flagged checkpoints\n\n| path | verdict | findings | why |\n|---|---|---|---|\n";
      for (size_t i = 0; i < list.size() && i < kListed; ++i) {
        std::string codes;
        for (const auto& c : list[i]->codes) codes += (codes.empty() ? "" : " ") + c;
        out << "| " << markdown_cell(list[i]->path) << " | " << list[i]->safety << " | " << codes << " | "
            << markdown_cell(list[i]->status == "error" ? list[i]->error : list[i]->safety_detail) << " |\n";
      }
      if (list.size() > kListed)
        out << "\n… and " << list.size() - kListed << " more (the JSON report lists them all).\n";
    }
    out << '\n';
  }
  if (!r.errors.empty() || !r.malformed.empty()) {
    out << "## Errors\n\n";
    for (const auto& e : r.errors) out << "- " << e.kind << " `" << e.path << "`: " << e.message << '\n';
    for (const auto& m : r.malformed) out << "- malformed line " << m << '\n';
    out << '\n';
  }
}

void write_fleet_html(std::ostream& out, const FleetReport& r) {
  auto esc = [](std::string_view s) { return html_escape(s); };
  auto badge = [](const std::string& v) {
    const char* cls = v == "dangerous" ? "danger" : v == "safe" || v == "no code" ? "safe" : "trust";
    return std::string("<span class=\"badge ") + cls + "\">" + html_escape(v) + "</span>";
  };
  auto mean = mean_score(r);
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
         "content=\"width=device-width\">"
      << "<title>torchlint fleet report</title><style>" << audit_html_style()
      << "#repos th:first-child,#items th:first-child,#directories th:first-child{width:auto}#flagged "
         "th:first-child{width:40%}.chart{max-width:560px}</style></head><body><main>\n"
      << "<h1>torchlint fleet report</h1><p class=\"muted\">Generated " << esc(r.generated_at) << " from " << r.shards
      << " shards (" << r.records << " records, " << r.duplicates << " duplicates left out).</p>\n"
      << "<section class=\"summary\" id=\"summary\"><div class=\"counts\">"
      << "<div><b>" << r.repos.size() << "</b>repositories</div><div><b>" << (mean ? fixed1(*mean) : std::string("–"))
      << "</b>mean score</div><div><b>" << r.checkpoints.size() << "</b>checkpoints</div><div><b>"
      << (r.verdicts.contains("dangerous") ? r.verdicts.at("dangerous") : 0) << "</b>dangerous</div><div><b>"
      << r.errors.size() << "</b>units failed</div></div></section>\n";
  if (r.has_baseline) {
    out << "<h2 id=\"trends\">Trends</h2><p>";
    if (r.mean_score && r.baseline_mean_score) {
      out << "Mean score of the repositories in both runs: " << fixed1(*r.baseline_mean_score) << " → <b>"
          << fixed1(*r.mean_score) << "</b>. ";
    }
    out << "Repositories added: " << r.repos_added.size() << ", removed: " << r.repos_removed.size()
        << ". Dangerous checkpoints: " << r.baseline_dangerous << " → "
        << (r.verdicts.contains("dangerous") ? r.verdicts.at("dangerous") : 0) << " (" << r.newly_dangerous.size()
        << " new).</p>\n";
  }
  if (!r.repos.empty()) {
    std::vector<std::pair<std::string, size_t>> bars;
    for (const auto& repo : r.repos)
      bars.emplace_back(chart_label(repo.path), static_cast<size_t>(std::max(0, repo.score.value_or(0))));
    out << "<h2 id=\"repositories\">Repositories</h2><table id=\"repos\"><thead><tr><th>repository</th><th>score</th>"
        << (r.has_baseline ? "<th>change</th>" : "")
        << "<th>failed items</th><th>findings</th><th>checkpoints (dangerous)</th></tr></thead><tbody>\n";
    for (const auto& repo : r.repos) {
      out << "<tr class=\"repo\"><td><code>" << esc(repo.path) << "</code></td><td>"
          << (repo.score ? "<b>" + std::to_string(*repo.score) + "</b>" : badge("unknown") + " " + esc(repo.error))
          << "</td>";
      if (r.has_baseline) out << "<td>" << esc(delta(repo)) << "</td>";
      out << "<td>" << repo.failed << "</td><td>" << repo.findings << "</td><td>" << repo.checkpoints << " ("
          << repo.dangerous_checkpoints << ")</td></tr>\n";
    }
    out << "</tbody></table>\n<div class=\"chart\"><h3>Score per repository</h3>"
        << svg_bar_chart(bars, "#1a7f37", "score per repository") << "</div>\n";
  }
  if (!r.worst_items.empty()) {
    std::vector<std::pair<std::string, size_t>> bars;
    for (const auto& [code, n] : top_rules(r, 12)) bars.emplace_back(code, n);
    out << "<h2 id=\"worst-items\">Worst checklist items</h2><table id=\"items\"><thead><tr><th>item</th><th>title</th>"
        << "<th>failing repositories</th></tr></thead><tbody>\n";
    for (const auto& item : r.worst_items) {
      out << "<tr class=\"item\"><td class=\"id\">" << esc(item.id) << "</td><td>" << esc(item.title) << "</td><td>"
          << item.repos.size() << " of " << r.repos.size() << "</td></tr>\n";
    }
    out << "</tbody></table>\n<div class=\"chart\"><h3>Findings by rule</h3>"
        << svg_bar_chart(bars, "#0969da", "findings by rule") << "</div>\n";
  }
  if (!r.checkpoints.empty()) {
    std::vector<std::pair<std::string, size_t>> bars;
    for (const auto& v : verdict_order()) bars.emplace_back(v, r.verdicts.contains(v) ? r.verdicts.at(v) : 0);
    out << "<h2 id=\"checkpoints\">Checkpoints</h2><div class=\"chart\"><h3>Safety verdicts</h3>"
        << svg_bar_chart(bars, "#cf222e", "checkpoints by safety verdict") << "</div>\n"
        << "<h3>By directory</h3><table id=\"directories\"><thead><tr><th>directory</th><th>files</th>";
    for (const auto& v : verdict_order()) out << "<th>" << esc(v) << "</th>";
    out << "</tr></thead><tbody>\n";
    for (size_t i = 0; i < r.directories.size() && i < kListed; ++i) {
      const auto& d = r.directories[i];
      out << "<tr><td><code>" << esc(d.path) << "</code></td><td>" << d.total << "</td>";
      for (const auto& v : verdict_order()) out << "<td>" << (d.verdicts.contains(v) ? d.verdicts.at(v) : 0) << "</td>";
      out << "</tr>\n";
    }
    out << "</tbody></table>\n";
    auto list = flagged(r);
    if (!list.empty()) {
      out << "<h3>Flagged checkpoints</h3><table "
             "id=\"flagged\"><thead><tr><th>path</th><th>verdict</th><th>findings</th>"
          << "<th>why</th></tr></thead><tbody>\n";
      for (size_t i = 0; i < list.size() && i < kListed; ++i) {
        std::string codes;
        for (const auto& c : list[i]->codes) codes += (codes.empty() ? "" : " ") + c;
        out << "<tr class=\"flagged\"><td><code>" << esc(list[i]->path) << "</code></td><td>" << badge(list[i]->safety)
            << "</td><td>" << esc(codes) << "</td><td>"
            << esc(list[i]->status == "error" ? list[i]->error : list[i]->safety_detail) << "</td></tr>\n";
      }
      out << "</tbody></table>\n";
      if (list.size() > kListed)
        out << "<p class=\"muted\">… and " << list.size() - kListed << " more (the JSON report lists them all).</p>\n";
    }
  }
  if (!r.errors.empty() || !r.malformed.empty()) {
    out << "<h2 id=\"errors\">Errors</h2><ul>\n";
    for (const auto& e : r.errors)
      out << "<li>" << esc(e.kind) << " <code>" << esc(e.path) << "</code>: " << esc(e.message) << "</li>\n";
    for (const auto& m : r.malformed) out << "<li>malformed line " << esc(m) << "</li>\n";
    out << "</ul>\n";
  }
  out << "<footer>torchlint " << TORCHLINT_VERSION << " · schema " << kFleetSchema
      << "</footer></main></body></html>\n";
}

}  // namespace torchlint::report
