// The audit as one self-contained HTML file: inline CSS and SVG, no script, no network.
// Top to bottom: score and summary, what to do next, charts, the checklist by phase with
// evidence excerpts, checkpoints, probe figures.
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

#include "audit.h"

namespace torchlint::report {

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

std::string esc(std::string_view s) { return html_escape(s); }

// Messages and rule summaries write code in backticks, as in Markdown: `x` becomes <code>x</code>
// (an unpaired backtick stays as it is).
std::string prose(std::string_view s) {
  std::string out;
  size_t pos = 0;
  for (;;) {
    size_t open = s.find('`', pos);
    size_t close = open == std::string_view::npos ? open : s.find('`', open + 1);
    if (close == std::string_view::npos) break;
    out += esc(s.substr(pos, open - pos)) + "<code>" + esc(s.substr(open + 1, close - open - 1)) + "</code>";
    pos = close + 1;
  }
  return out + esc(s.substr(pos));
}

const char* status_class(ItemStatus s) {
  switch (s) {
    case ItemStatus::kPassed:
      return "passed";
    case ItemStatus::kFailed:
      return "failed";
    case ItemStatus::kNotApplicable:
      return "na";
    case ItemStatus::kManual:
      return "manual";
    case ItemStatus::kNotChecked:
      return "unchecked";
  }
  return "unchecked";
}

const char* status_label(ItemStatus s) {
  switch (s) {
    case ItemStatus::kPassed:
      return "passed";
    case ItemStatus::kFailed:
      return "failed";
    case ItemStatus::kNotApplicable:
      return "not applicable";
    case ItemStatus::kManual:
      return "needs a person";
    case ItemStatus::kNotChecked:
      return "not checked";
  }
  return "";
}

constexpr const char* kStyle = R"css(
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#ffffff;--panel:#f6f8fa;
--pass:#1a7f37;--fail:#cf222e;--warn:#9a6700;--na:#6e7781;--manual:#8250df}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:1100px;margin:0 auto;padding:32px 24px 64px}
h1{font-size:26px;margin:0 0 4px}h2{font-size:20px;margin:40px 0 12px;border-bottom:1px solid var(--line);padding-bottom:6px}
h3{font-size:16px;margin:24px 0 8px}.muted{color:var(--muted)}
.summary{display:flex;gap:28px;align-items:center;margin:20px 0;padding:20px;background:var(--panel);border:1px solid var(--line);border-radius:10px}
.counts{display:grid;grid-template-columns:repeat(5,auto);gap:4px 20px}.counts b{font-size:22px;display:block}
.badge{display:inline-block;padding:1px 9px;border-radius:12px;font-size:12px;font-weight:600;color:#fff;white-space:nowrap}
.badge.passed{background:var(--pass)}.badge.failed{background:var(--fail)}.badge.na{background:var(--na)}
.badge.manual{background:var(--manual)}.badge.unchecked{background:#afb8c1;color:#1f2328}
table{width:100%;border-collapse:collapse;margin:8px 0;table-layout:fixed}th:first-child{width:56px}
#checklist th:nth-child(2){width:34%}th,td{text-align:left;vertical-align:top;padding:8px 10px;border-bottom:1px solid var(--line)}
th{font-size:13px;color:var(--muted);font-weight:600}td.id{font-weight:600;white-space:nowrap}
code,pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:8px 10px;margin:6px 0;white-space:pre-wrap;overflow-wrap:anywhere}
td{overflow-wrap:anywhere}
.finding{margin:6px 0 10px}.finding .sev{font-weight:600;text-transform:uppercase;font-size:11px}
.sev.error{color:var(--fail)}.sev.warning{color:var(--warn)}.sev.info{color:var(--na)}
ol.next li{margin:8px 0}.charts{display:grid;grid-template-columns:1fr 1fr;gap:24px}
.chart{background:var(--panel);border:1px solid var(--line);border-radius:10px;padding:12px 16px}
details summary{cursor:pointer;color:var(--muted)}a{color:#0969da;text-decoration:none}a:hover{text-decoration:underline}
footer{margin-top:48px;color:var(--muted);font-size:13px}
.badge.safe{background:var(--pass)}.badge.trust{background:var(--warn)}.badge.danger{background:var(--fail)}
#checkpoints th:first-child{width:24%}#checkpoints th:nth-child(3){width:80px}
.probe-model{border:1px solid var(--line);border-radius:10px;padding:4px 16px 12px;margin:16px 0}
.probe-model table th:first-child{width:120px}.probe-model table th:nth-child(2){width:110px}.note{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:8px 12px}
.legend{font-size:12px;color:var(--muted)}.legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin:0 4px 0 12px}
)css";

struct Series {
  const char* name;
  const char* color;
};
struct Group {
  std::string label;
  std::vector<std::optional<double>> values;  // one per series
};

// Grouped horizontal bars (one group per batch size or variant), scaled to the largest
// value; `format` writes a value's label. Optional `marker`: a dashed line (a tolerance).
template <class Format>
std::string grouped_chart(const char* title, const std::vector<Series>& series, const std::vector<Group>& groups,
                          Format format, std::optional<double> marker = std::nullopt, const char* marker_label = "") {
  double max = marker.value_or(0);
  for (const auto& g : groups) {
    for (const auto& v : g.values) max = std::max(max, v.value_or(0));
  }
  if (max <= 0) max = 1;
  const int bar = 12, gap = 10, label_w = 90, width = 460, bar_w = width - label_w - 90;
  int rows = static_cast<int>(series.size());
  int height = static_cast<int>(groups.size()) * (rows * (bar + 3) + gap) + 6 + (marker ? 14 : 0);
  std::ostringstream svg;
  svg << "<svg role=\"img\" aria-label=\"" << esc(title) << "\" width=\"100%\" viewBox=\"0 0 " << width << " " << height
      << "\" xmlns=\"http://www.w3.org/2000/svg\">";
  int y = 4;
  for (const auto& g : groups) {
    svg << "<text x=\"0\" y=\"" << y + bar + 1 << "\" font-size=\"12\" fill=\"#59636e\">" << esc(g.label) << "</text>";
    for (int i = 0; i < rows; ++i) {
      const auto& v = i < static_cast<int>(g.values.size()) ? g.values[i] : std::optional<double>();
      int w = v ? static_cast<int>(static_cast<double>(bar_w) * std::max(0.0, *v) / max) : 0;
      if (v) {
        svg << "<rect x=\"" << label_w << "\" y=\"" << y << "\" width=\"" << std::max(w, 2) << "\" height=\"" << bar
            << "\" rx=\"2\" fill=\"" << series[i].color << "\"><title>" << esc(series[i].name) << ": "
            << esc(format(*v)) << "</title></rect>";
      }
      svg << "<text x=\"" << label_w + (v ? std::max(w, 2) : 0) + 5 << "\" y=\"" << y + bar - 2
          << "\" font-size=\"11\" fill=\"#1f2328\">" << (v ? esc(format(*v)) : "n/a") << "</text>";
      y += bar + 3;
    }
    y += gap;
  }
  if (marker) {
    int x = label_w + static_cast<int>(static_cast<double>(bar_w) * *marker / max);
    svg << "<line x1=\"" << x << "\" y1=\"2\" x2=\"" << x << "\" y2=\"" << y
        << "\" stroke=\"#cf222e\" stroke-dasharray=\"4 3\"/>"
        << "<text x=\"" << x << "\" y=\"" << y + 10 << "\" font-size=\"11\" text-anchor=\"middle\" fill=\"#cf222e\">"
        << esc(marker_label) << "</text>";
  }
  svg << "</svg>";
  std::string legend = "<div class=\"legend\">";
  for (const auto& s : series) legend += std::string("<i style=\"background:") + s.color + "\"></i>" + esc(s.name);
  return legend + "</div>" + svg.str();
}

std::string number_text(double v, const char* fmt) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

const char* safety_class(const std::string& safety) {
  if (safety == "safe" || safety == "no code") return "safe";
  if (safety == "needs trust") return "trust";
  if (safety == "dangerous") return "danger";
  return "unchecked";
}

// The score as a ring: the filled share is the score.
std::string score_ring(int score) {
  const double r = 42, circumference = 2 * 3.14159265 * r;
  const char* color = score >= 80 ? "#1a7f37" : score >= 50 ? "#9a6700" : "#cf222e";
  std::ostringstream svg;
  svg << "<svg width=\"110\" height=\"110\" viewBox=\"0 0 110 110\" role=\"img\" aria-label=\"score " << score
      << " of 100\" xmlns=\"http://www.w3.org/2000/svg\"><circle cx=\"55\" cy=\"55\" r=\"" << r
      << "\" fill=\"none\" stroke=\"#d1d9e0\" stroke-width=\"10\"/><circle cx=\"55\" cy=\"55\" r=\"" << r
      << "\" fill=\"none\" stroke=\"" << color << "\" stroke-width=\"10\" stroke-linecap=\"round\" stroke-dasharray=\""
      << circumference * score / 100.0 << " " << circumference << "\" transform=\"rotate(-90 55 55)\"/>"
      << "<text x=\"55\" y=\"62\" text-anchor=\"middle\" font-size=\"26\" font-weight=\"700\" fill=\"#1f2328\">"
      << score << "</text></svg>";
  return svg.str();
}

std::string excerpt(const Diagnostic& d, const ReportContext& ctx) {
  auto it = ctx.outcome.sources.find(d.path);
  if (it == ctx.outcome.sources.end() || d.cell || d.start.line == 0) return {};
  std::string_view line = it->second->line_text(d.start.line);
  if (line.size() > 200) line = line.substr(0, 200);
  return "<pre><span class=\"muted\">" + std::to_string(d.start.line) + " │ </span>" + esc(line) + "</pre>";
}

std::string finding_html(const Diagnostic& d, const ReportContext& ctx) {
  std::string where = d.path + ":" + std::to_string(d.start.line) + ":" + std::to_string(d.start.column);
  return "<div class=\"finding\"><span class=\"sev " + std::string(severity_name(d.severity)) + "\">" +
         std::string(severity_name(d.severity)) + "</span> <a href=\"" + esc(d.path) + "\"><code>" + esc(where) +
         "</code></a> <code>" + esc(d.code) + "</code> " + prose(d.message) + excerpt(d, ctx) + "</div>";
}

}  // namespace

// Horizontal bars, one per label; pure SVG so the file stays self-contained.
std::string svg_bar_chart(const std::vector<ChartBar>& bars, const char* title) {
  size_t max = 1;
  for (const auto& bar : bars) max = std::max(max, bar.n);
  const int row = 26, label_w = 300, width = 620, bar_w = width - label_w - 50;
  int height = static_cast<int>(bars.size()) * row + 8;
  std::ostringstream svg;
  svg << "<svg role=\"img\" aria-label=\"" << esc(title) << "\" width=\"100%\" viewBox=\"0 0 " << width << " " << height
      << "\" xmlns=\"http://www.w3.org/2000/svg\">";
  int y = 4;
  for (const auto& [label, n, color] : bars) {
    int w = static_cast<int>(static_cast<double>(bar_w) * static_cast<double>(n) / static_cast<double>(max));
    svg << "<text x=\"0\" y=\"" << y + 16 << "\" font-size=\"13\" fill=\"#59636e\">" << esc(label) << "</text>"
        << "<rect x=\"" << label_w << "\" y=\"" << y + 4 << "\" width=\"" << std::max(w, n ? 2 : 0)
        << "\" height=\"16\" rx=\"3\" fill=\"" << color << "\"/>"
        << "<text x=\"" << label_w + w + 6 << "\" y=\"" << y + 16 << "\" font-size=\"13\" fill=\"#1f2328\">" << n
        << "</text>";
    y += row;
  }
  svg << "</svg>";
  return svg.str();
}

std::string svg_bar_chart(const std::vector<std::pair<std::string, size_t>>& bars, const char* color,
                          const char* title) {
  std::vector<ChartBar> coloured;
  for (const auto& [label, n] : bars) coloured.push_back({label, n, color});
  return svg_bar_chart(coloured, title);
}

const char* audit_html_style() { return kStyle; }

void write_audit_html(std::ostream& out, const AuditContext& ctx) {
  const Scorecard& card = ctx.scorecard;
  size_t probed = 0;
  for (const auto& m : ctx.probe.models) probed += m.status == "probed";
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      << "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
      << "<title>torchlint audit: " << esc(ctx.project) << "</title><style>" << kStyle
      << "</style></head><body><main>\n";
  out << "<header id=\"summary\"><h1>torchlint audit: " << esc(ctx.project) << "</h1><div class=\"muted\">Generated "
      << esc(ctx.generated_at) << " by torchlint " << TORCHLINT_VERSION << " · " << ctx.files_linted
      << " source files · " << ctx.checkpoints.size() << " checkpoints · " << probed << " models probed · "
      << ctx.findings.outcome.diagnostics.size() << " findings</div>"
      << "<div class=\"summary\">" << score_ring(card.score) << "<div><div class=\"counts\">"
      << "<div><b>" << card.passed << "</b><span class=\"badge passed\">passed</span></div>"
      << "<div><b>" << card.failed << "</b><span class=\"badge failed\">failed</span></div>"
      << "<div><b>" << card.not_applicable << "</b><span class=\"badge na\">not applicable</span></div>"
      << "<div><b>" << card.manual << "</b><span class=\"badge manual\">needs a person</span></div>"
      << "<div><b>" << card.not_checked << "</b><span class=\"badge unchecked\">not checked</span></div>"
      << "</div><p class=\"muted\">The score counts passed items among those decided (passed or "
         "failed).</p></div></div></header>\n";

  out << "<section id=\"next\"><h2>What to do next</h2>";
  auto next = items_by_impact(card);
  if (next.empty()) {
    out << "<p>Nothing failed. Review the items that need a person below.</p>";
  } else {
    out << "<ol class=\"next\">";
    for (const ItemResult* r : next) {
      std::map<std::string, size_t> per_rule;
      for (const Diagnostic* d : r->evidence) per_rule[d->code]++;
      out << "<li><a href=\"#item-" << esc(r->item->id) << "\"><b>" << esc(r->item->id) << "</b> "
          << esc(r->item->title) << "</a> — " << r->evidence.size()
          << (r->evidence.size() == 1 ? " finding" : " findings") << ", worst " << severity_name(r->worst) << "<ul>";
      for (const auto& [code, n] : per_rule) {
        const RuleInfo* rule = ctx.findings.registry.find(code);
        out << "<li><code>" << esc(code) << "</code> " << (rule ? esc(rule->name) : "") << " ×" << n
            << (rule ? ": " + prose(rule->summary()) : "") << "</li>";
      }
      out << "</ul></li>";
    }
    out << "</ol>";
  }
  out << "</section>\n";

  // Charts: findings by checklist part and by severity.
  std::map<std::string, size_t> by_part;
  for (const auto& r : card.items) {
    std::string_view name = checklist_part_name(r.item->part);
    by_part["Part " + r.item->part + (name.empty() ? "" : ": " + std::string(name))] += r.evidence.size();
  }
  std::vector<ChartBar> part_bars;
  for (const auto& [part, n] : by_part) part_bars.push_back({part, n, "#0969da"});
  size_t errors = 0, warnings = 0, infos = 0;
  for (const auto& d : ctx.findings.outcome.diagnostics) {
    (d.severity == Severity::kError ? errors : d.severity == Severity::kWarning ? warnings : infos)++;
  }
  out << "<section id=\"charts\"><h2>Findings</h2><div class=\"charts\"><div class=\"chart\"><h3>By checklist part</h3>"
      << svg_bar_chart(part_bars, "findings by checklist part") << "</div><div class=\"chart\"><h3>By severity</h3>"
      << svg_bar_chart({{"error", errors, "#cf222e"}, {"warning", warnings, "#bf8700"}, {"info", infos, "#0969da"}},
                       "findings by severity")
      << "</div></div></section>\n";

  out << "<section id=\"checklist\"><h2>Checklist</h2>";
  for (const auto& [title, rows] : items_by_phase(card)) {
    out << "<h3 class=\"phase\">" << title
        << "</h3><table><thead><tr><th>Item</th><th>Status</th><th>Evidence</th></tr></thead><tbody>";
    for (const ItemResult* r : rows) {
      out << "<tr id=\"item-" << esc(r->item->id) << "\"><td class=\"id\">" << esc(r->item->id) << "</td><td><div>"
          << esc(r->item->title) << "</div>";
      if (!r->item->rationale.empty()) out << "<div class=\"muted\">" << esc(r->item->rationale) << "</div>";
      out << "<span class=\"badge " << status_class(r->status) << "\">" << status_label(r->status)
          << "</span></td><td>";
      if (!r->evidence.empty()) {
        size_t shown = 0;
        for (const Diagnostic* d : r->evidence) {
          if (shown++ == 3) {
            out << "<details><summary>" << r->evidence.size() - 3 << " more</summary>";
          }
          out << finding_html(*d, ctx.findings);
        }
        if (r->evidence.size() > 3) out << "</details>";
      } else if (!r->advisory.empty()) {
        // Below --fail-on: advice that did not fail the item.
        out << "<details><summary>" << r->advisory.size() << " advisory "
            << (r->advisory.size() == 1 ? "finding" : "findings") << " (below the failing severity)</summary>";
        for (const Diagnostic* d : r->advisory) out << finding_html(*d, ctx.findings);
        out << "</details>";
      } else if (!r->reason.empty()) {
        out << "<span class=\"muted\">" << esc(r->reason) << "</span>";
      } else {
        std::string rules;
        for (const auto& c : r->checked_by) rules += (rules.empty() ? "" : ", ") + c;
        out << "<span class=\"muted\">checked by " << esc(rules) << "</span>";
      }
      out << "</td></tr>";
    }
    out << "</tbody></table>";
  }
  out << "</section>\n";

  out << "<section id=\"checkpoints\"><h2>Checkpoints</h2>";
  if (ctx.checkpoints.empty()) {
    out << "<p class=\"muted\">No checkpoint files were found (files are recognised by their bytes; virtualenvs, VCS "
           "and "
           "build folders are skipped).</p>";
  } else {
    out << "<table><thead><tr><th>File</th><th>Format</th><th>Size</th><th>Training "
           "state</th><th>Safety</th><th>Findings</th>"
           "</tr></thead><tbody>";
    for (const auto& c : ctx.checkpoints) {
      std::string codes;
      for (const auto& code : c.codes) codes += (codes.empty() ? "<code>" : ", <code>") + esc(code) + "</code>";
      out << "<tr class=\"checkpoint\"><td><code>" << esc(c.path) << "</code></td><td>" << esc(c.format) << "</td><td>"
          << esc(human_size(c.bytes)) << "</td><td><div>" << esc(c.training_state) << "</div><div class=\"muted\">"
          << esc(c.training_detail) << "</div></td><td><span class=\"badge " << safety_class(c.safety) << "\">"
          << esc(c.safety) << "</span><div class=\"muted\">" << esc(c.safety_detail) << "</div></td><td>"
          << (codes.empty() ? "<span class=\"muted\">none</span>" : codes) << "</td></tr>";
    }
    out << "</tbody></table>";
  }
  for (const auto& note : ctx.checkpoint_notes) out << "<p class=\"muted\">" << esc(note) << "</p>";
  out << "</section>\n";

  out << "<section id=\"probe\"><h2>Runtime probe</h2>";
  const ProbeSection& probe = ctx.probe;
  if (!probe.requested) {
    out << "<p class=\"muted\">Not run: <code>torchlint audit --probe</code> runs torchlint-probe on the TorchScript "
           "models "
           "found, with the input spec of <code>[tool.torchlint.probe]</code> or <code>--probe-input</code>.</p>";
  } else {
    if (!probe.inputs.empty()) {
      out << "<p class=\"muted\">Inputs";
      for (const auto& i : probe.inputs) out << " <code>" << esc(i) << "</code>";
      out << " (from " << esc(probe.inputs_source) << ")";
      if (!probe.binary.empty()) out << " · <code>" << esc(probe.binary) << "</code>";
      out << "</p>";
    }
    if (!probe.note.empty()) out << "<p class=\"note\" id=\"probe-note\">" << esc(probe.note) << "</p>";
    for (const auto& m : probe.models) {
      ProbeFigures f = probe_figures(m.report);
      out << "<div class=\"probe-model\"><h3><code>" << esc(m.path) << "</code> <span class=\"badge "
          << (m.status == "probed"    ? "passed"
              : m.status == "skipped" ? "unchecked"
                                      : "failed")
          << "\">" << esc(m.status) << "</span></h3>";
      if (!f.device.empty() || f.parameters) {
        out << "<p class=\"muted\">";
        if (!f.device.empty()) out << "on " << esc(f.device);
        if (f.parameters) out << (f.device.empty() ? "" : " · ") << *f.parameters << " parameters";
        out << "</p>";
      }
      if (!m.note.empty()) out << "<p class=\"note\">" << esc(m.note) << "</p>";
      if (!f.checks.empty()) {
        out << "<table><thead><tr><th>Check</th><th>Status</th><th>Result</th></tr></thead><tbody>";
        for (const auto& c : f.checks) {
          const char* cls = c.status == "passed"                          ? "passed"
                            : c.status == "failed" || c.status == "error" ? "failed"
                                                                          : "unchecked";
          out << "<tr><td><code>" << esc(c.name) << "</code></td><td><span class=\"badge " << cls << "\">"
              << esc(c.status) << "</span></td><td>" << esc(c.headline) << "</td></tr>";
        }
        out << "</tbody></table>";
      }
      out << "<div class=\"charts\">";
      auto mib = [](double v) { return human_size(static_cast<uint64_t>(std::max(0.0, v))); };
      if (!f.memory.empty()) {
        std::vector<Group> groups;
        for (const auto& r : f.memory) {
          groups.push_back({"batch " + std::to_string(r.batch), {r.forward, r.forward_backward, r.predicted_training}});
        }
        out << "<div class=\"chart probe-chart\"><h3>Memory per batch size</h3>"
            << grouped_chart("memory per batch size",
                             {{"forward peak", "#0969da"},
                              {"forward+backward peak", "#8250df"},
                              {"predicted training step", "#9a6700"}},
                             groups, mib)
            << "</div>";
      }
      if (!f.latency.empty()) {
        std::vector<Group> groups;
        for (const auto& l : f.latency) groups.push_back({"batch " + std::to_string(l.batch), {l.p50_ms, l.p99_ms}});
        out << "<div class=\"chart probe-chart\"><h3>Latency</h3>"
            << grouped_chart("latency per batch size", {{"p50", "#1a7f37"}, {"p99", "#cf222e"}}, groups,
                             [](double v) { return number_text(v, "%.2f ms"); })
            << "</div>";
      }
      if (!f.amp.empty()) {
        std::vector<Group> groups;
        std::optional<double> tolerance;
        for (const auto& a : f.amp) {
          groups.push_back({a.variant, {a.max_rel}});
          if (a.tolerance) tolerance = tolerance ? std::min(*tolerance, *a.tolerance) : *a.tolerance;
        }
        out << "<div class=\"chart probe-chart\"><h3>Mixed precision error</h3>"
            << grouped_chart(
                   "autocast relative error against float32", {{"max relative error vs float32", "#0969da"}}, groups,
                   [](double v) { return number_text(v, "%.3g"); }, tolerance, "tolerance")
            << "</div>";
      }
      out << "</div></div>";
    }
  }
  out << "</section>\n<footer>torchlint " << TORCHLINT_VERSION
      << " · rule documentation: <code>torchlint rule CODE</code></footer>\n</main></body></html>\n";
}

}  // namespace torchlint::report
