// The audit as GitHub-flavoured Markdown: tables per phase, findings in collapsible
// details, what to do next first.
#include <algorithm>
#include <cstdio>
#include <map>

#include "audit.h"

namespace torchlint::report {

// Table cells cannot hold pipes or newlines.
std::string markdown_cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

namespace {

const char* badge(ItemStatus s) {
  switch (s) {
    case ItemStatus::kPassed:
      return "✅ passed";
    case ItemStatus::kFailed:
      return "❌ failed";
    case ItemStatus::kNotApplicable:
      return "➖ not applicable";
    case ItemStatus::kManual:
      return "👀 needs a person";
    case ItemStatus::kNotChecked:
      return "⚪ not checked";
  }
  return "";
}

std::string cell(std::string_view s) { return markdown_cell(s); }

std::string link(const Diagnostic& d) {
  std::string where = d.path + ":" + std::to_string(d.start.line);
  return "[" + cell(where) + "](" + d.path + "#L" + std::to_string(d.start.line) + ")";
}

const char* safety_icon(const std::string& safety) {
  if (safety == "safe" || safety == "no code") return "✅ ";
  if (safety == "needs trust") return "⚠️ ";
  if (safety == "dangerous") return "⛔ ";
  return "❔ ";
}

std::string fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string sci(const std::optional<double>& v) {
  if (!v) return "–";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3g", *v);
  return buf;
}

std::string bytes_cell(const std::optional<double>& v) {
  return v ? human_size(static_cast<uint64_t>(*v < 0 ? 0 : *v)) : std::string("–");
}

std::string ms_cell(const std::optional<double>& v) { return v ? fixed(*v, 2) : std::string("–"); }

void write_probe(std::ostream& out, const ProbeSection& probe) {
  out << "\n## Runtime probe\n\n";
  if (!probe.requested) {
    out << "Not run: `torchlint audit --probe` runs torchlint-probe on the TorchScript models found, with the input "
           "spec of `[tool.torchlint.probe]` or `--probe-input`.\n";
    return;
  }
  if (!probe.inputs.empty()) {
    out << "Inputs";
    for (const auto& i : probe.inputs) out << " `" << i << "`";
    out << " (from " << probe.inputs_source << ")";
    if (!probe.binary.empty()) out << " · `" << probe.binary << "`";
    out << "\n\n";
  }
  if (!probe.note.empty()) out << "**Note:** " << probe.note << "\n\n";
  for (const auto& m : probe.models) {
    ProbeFigures f = probe_figures(m.report);
    out << "### `" << m.path << "` — " << m.status;
    if (!f.device.empty()) out << " on " << f.device;
    if (f.parameters) out << ", " << *f.parameters << " parameters";
    out << "\n\n";
    if (!m.note.empty()) out << m.note << "\n\n";
    if (!f.checks.empty()) {
      out << "| Check | Status | Result |\n|---|---|---|\n";
      for (const auto& c : f.checks)
        out << "| " << cell(c.name) << " | " << cell(c.status) << " | " << cell(c.headline) << " |\n";
      out << "\n";
    }
    if (!f.memory.empty()) {
      out << "Memory per batch size:\n\n| Batch | Forward peak | Forward+backward peak | Predicted training step "
             "|\n|---|---|---|---|\n";
      for (const auto& r : f.memory) {
        out << "| " << r.batch << " | " << (r.out_of_memory ? "out of memory" : bytes_cell(r.forward)) << " | "
            << bytes_cell(r.forward_backward) << " | " << bytes_cell(r.predicted_training) << " |\n";
      }
      out << "\n";
    }
    if (!f.amp.empty()) {
      out << "Mixed precision against float32:\n\n| Autocast | Max abs error | Max rel error | Tolerance | Cosine | "
             "Verdict |\n"
             "|---|---|---|---|---|---|\n";
      for (const auto& a : f.amp) {
        out << "| " << cell(a.variant) << " | " << sci(a.max_abs) << " | " << sci(a.max_rel) << " | "
            << sci(a.tolerance) << " | " << (a.cosine ? fixed(*a.cosine, 6) : "–") << " | "
            << (a.error.empty() ? (a.passed ? "passed" : "failed") : "error: " + cell(a.error)) << " |\n";
      }
      out << "\n";
    }
    if (!f.latency.empty()) {
      out << "Latency:\n\n| Batch | p50 (ms) | p99 (ms) | Samples/s |\n|---|---|---|---|\n";
      for (const auto& l : f.latency) {
        out << "| " << l.batch << " | " << (l.out_of_memory ? "out of memory" : ms_cell(l.p50_ms)) << " | "
            << ms_cell(l.p99_ms) << " | " << (l.throughput ? fixed(*l.throughput, 1) : "–") << " |\n";
      }
      out << "\n";
    }
  }
}

void write_heading(std::ostream& out, const AuditContext& ctx) {
  const Scorecard& card = ctx.scorecard;
  out << "# torchlint audit: " << ctx.project << "\n\n";
  out << "**Score: " << card.score << "/100** — " << card.passed << " passed · " << card.failed << " failed · "
      << card.not_applicable << " not applicable · " << card.manual << " need a person · " << card.not_checked
      << " not checked\n\n";
  out << "Generated " << ctx.generated_at << " by torchlint " << TORCHLINT_VERSION << " from " << ctx.files_linted
      << " source files, " << ctx.checkpoints.size() << " checkpoints; " << ctx.findings.outcome.diagnostics.size()
      << " findings. The score counts passed items among those decided (passed or failed).\n\n";
}

// The failed items by impact, each with its rules; at most `limit` items.
void write_next_steps(std::ostream& out, const AuditContext& ctx, size_t limit) {
  auto next = items_by_impact(ctx.scorecard);
  out << "## What to do next\n\n";
  if (next.empty()) out << "Nothing failed. Review the items that need a person below.\n";
  int rank = 0;
  for (const ItemResult* r : next) {
    if (static_cast<size_t>(rank) == limit) {
      out << "\n… and " << next.size() - limit << " more failed items.\n";
      break;
    }
    std::map<std::string, size_t> per_rule;
    for (const Diagnostic* d : r->evidence) per_rule[d->code]++;
    out << ++rank << ". **" << r->item->id << " " << r->item->title << "** — " << r->evidence.size()
        << (r->evidence.size() == 1 ? " finding" : " findings") << " (worst: " << severity_name(r->worst) << ")";
    for (const auto& [code, n] : per_rule) {
      const RuleInfo* rule = ctx.findings.registry.find(code);
      out << "\n   - `" << code << "` " << (rule ? rule->name : "") << " ×" << n;
      if (rule) out << ": " << rule->summary() << " See `torchlint rule " << code << "`.";
    }
    out << "\n";
  }
}

// A finding on one line of a list, its message cut to `width` characters.
void write_finding_line(std::ostream& out, const Diagnostic& d, size_t width) {
  out << "- " << link(d) << " `" << d.code << "` " << d.message.substr(0, width)
      << (d.message.size() > width ? "…" : "") << "\n";
}

// Findings listed under an item in the full report: enough to act on; the JSON and HTML
// reports hold them all. Keeps the Markdown of a large repository under a PR comment's size.
constexpr size_t kListedFindings = 15;

}  // namespace

void write_audit_summary_markdown(std::ostream& out, const AuditContext& ctx, const std::string& report_url) {
  write_heading(out, ctx);
  if (!report_url.empty()) out << "Full report: " << report_url << "\n\n";
  write_next_steps(out, ctx, 10);
  // Each failed item with its first findings: at most 10 items x 5 lines of ~300 characters.
  size_t shown = 0;
  for (const ItemResult* r : items_by_impact(ctx.scorecard)) {
    if (shown++ == 10) break;
    out << "\n<details><summary>" << r->item->id << " " << cell(r->item->title) << ": " << r->evidence.size()
        << (r->evidence.size() == 1 ? " finding" : " findings") << "</summary>\n\n";
    for (size_t i = 0; i < r->evidence.size() && i < 5; ++i) write_finding_line(out, *r->evidence[i], 200);
    if (r->evidence.size() > 5) out << "- … " << r->evidence.size() - 5 << " more in the full report\n";
    out << "\n</details>\n";
  }
}

void write_audit_markdown(std::ostream& out, const AuditContext& ctx) {
  const Scorecard& card = ctx.scorecard;
  write_heading(out, ctx);
  write_next_steps(out, ctx, card.items.size());
  out << "\n## Checklist\n";
  for (const auto& [title, rows] : items_by_phase(card)) {
    out << "\n### " << title << "\n\n| Item | Status | Evidence |\n|---|---|---|\n";
    for (const ItemResult* r : rows) {
      out << "| **" << r->item->id << "** " << cell(r->item->title) << " | " << badge(r->status) << " | ";
      if (!r->evidence.empty()) {
        const Diagnostic& d = *r->evidence.front();
        out << link(d) << " `" << d.code << "` " << cell(d.message.substr(0, 120))
            << (d.message.size() > 120 ? "…" : "");
        if (r->evidence.size() > 1) out << " (+" << r->evidence.size() - 1 << " more)";
      } else if (!r->advisory.empty()) {
        const Diagnostic& d = *r->advisory.front();
        out << r->advisory.size() << " advisory (" << severity_name(d.severity) << ", below `--fail-on`): " << link(d)
            << " `" << d.code << "`";
      } else if (!r->reason.empty()) {
        out << cell(r->reason);
      } else {
        std::string rules;
        for (const auto& c : r->checked_by) rules += (rules.empty() ? "" : ", ") + c;
        out << "checked by " << rules;
      }
      out << " |\n";
    }
    for (const ItemResult* r : rows) {
      if (r->evidence.size() < 2) continue;
      size_t total = r->evidence.size();
      out << "\n<details><summary>" << r->item->id << ": " << (total > kListedFindings ? "first " : "all ")
          << std::min(total, kListedFindings) << " of " << total << " findings</summary>\n\n";
      for (size_t i = 0; i < total && i < kListedFindings; ++i) write_finding_line(out, *r->evidence[i], 300);
      if (total > kListedFindings) {
        out << "- … " << total - kListedFindings << " more: `--output-format html` or `json` lists them all\n";
      }
      out << "\n</details>\n";
    }
  }
  out << "\n## Checkpoints\n\n";
  if (ctx.checkpoints.empty()) {
    out << "No checkpoint files were found.\n";
  } else {
    out << "| File | Format | Size | Training state | Safety | Findings |\n|---|---|---|---|---|---|\n";
    for (const auto& c : ctx.checkpoints) {
      std::string codes;
      for (const auto& code : c.codes) codes += (codes.empty() ? "`" : ", `") + code + "`";
      out << "| `" << cell(c.path) << "` | " << cell(c.format) << " | " << human_size(c.bytes) << " | "
          << cell(c.training_state) << " | " << safety_icon(c.safety) << cell(c.safety) << " | "
          << (codes.empty() ? "none" : codes) << " |\n";
    }
    out << "\n<details><summary>What each checkpoint holds</summary>\n\n";
    for (const auto& c : ctx.checkpoints) {
      out << "- `" << c.path << "`: " << c.training_detail << ". Safety: " << c.safety << ", " << c.safety_detail
          << "\n";
    }
    out << "\n</details>\n";
  }
  for (const auto& note : ctx.checkpoint_notes) out << "\n- " << note;
  if (!ctx.checkpoint_notes.empty()) out << "\n";
  write_probe(out, ctx.probe);
}

}  // namespace torchlint::report
