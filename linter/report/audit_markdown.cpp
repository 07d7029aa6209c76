// The audit as GitHub-flavoured Markdown: tables per phase, findings in collapsible
// details, what to do next first.
#include <map>

#include "audit.h"

namespace torchlint::report {

namespace {

const char* badge(ItemStatus s) {
  switch (s) {
    case ItemStatus::kPassed: return "✅ passed";
    case ItemStatus::kFailed: return "❌ failed";
    case ItemStatus::kNotApplicable: return "➖ not applicable";
    case ItemStatus::kManual: return "👀 needs a person";
    case ItemStatus::kNotChecked: return "⚪ not checked";
  }
  return "";
}

// Table cells cannot hold pipes or newlines.
std::string cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

std::string link(const Diagnostic& d) {
  std::string where = d.path + ":" + std::to_string(d.start.line);
  return "[" + cell(where) + "](" + d.path + "#L" + std::to_string(d.start.line) + ")";
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

}  // namespace

void write_audit_markdown(std::ostream& out, const AuditContext& ctx) {
  const Scorecard& card = ctx.scorecard;
  out << "# torchlint audit: " << ctx.project << "\n\n";
  out << "**Score: " << card.score << "/100** — " << card.passed << " passed · " << card.failed << " failed · "
      << card.not_applicable << " not applicable · " << card.manual << " need a person · " << card.not_checked
      << " not checked\n\n";
  out << "Generated " << ctx.generated_at << " by torchlint " << TORCHLINT_VERSION << " from " << ctx.files_linted
      << " source files, " << ctx.checkpoints.size() << " checkpoints; " << ctx.findings.outcome.diagnostics.size()
      << " findings. The score counts passed items among those decided (passed or failed).\n\n";

  auto next = items_by_impact(card);
  out << "## What to do next\n\n";
  if (next.empty()) out << "Nothing failed. Review the items that need a person below.\n";
  int rank = 0;
  for (const ItemResult* r : next) {
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
  out << "\n## Checklist\n";
  static const std::pair<const char*, const char*> kPhases[] = {
      {"development", "Development"}, {"training", "Training"}, {"evaluation", "Evaluation"},
      {"production", "Production"}, {"", "Other"}};
  for (const auto& [phase, title] : kPhases) {
    std::vector<const ItemResult*> rows;
    for (const auto& r : card.items) {
      bool known = r.item->phase == "development" || r.item->phase == "training" || r.item->phase == "evaluation" ||
                   r.item->phase == "production";
      if ((*phase && r.item->phase == phase) || (!*phase && !known)) rows.push_back(&r);
    }
    if (rows.empty()) continue;
    out << "\n### " << title << "\n\n| Item | Status | Evidence |\n|---|---|---|\n";
    for (const ItemResult* r : rows) {
      out << "| **" << r->item->id << "** " << cell(r->item->title) << " | " << badge(r->status) << " | ";
      if (!r->evidence.empty()) {
        const Diagnostic& d = *r->evidence.front();
        out << link(d) << " `" << d.code << "` " << cell(d.message.substr(0, 120)) << (d.message.size() > 120 ? "…" : "");
        if (r->evidence.size() > 1) out << " (+" << r->evidence.size() - 1 << " more)";
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
      out << "\n<details><summary>" << r->item->id << ": all " << r->evidence.size() << " findings</summary>\n\n";
      for (const Diagnostic* d : r->evidence) {
        out << "- " << link(*d) << " `" << d->code << "` " << d->message << "\n";
      }
      out << "\n</details>\n";
    }
  }
  out << "\n## Checkpoints\n\n";
  if (ctx.checkpoints.empty()) {
    out << "No checkpoint files were found.\n";
  } else {
    out << "| File | Format | Size | Training state | Safety |\n|---|---|---|---|---|\n";
    for (const auto& c : ctx.checkpoints) {
      out << "| `" << cell(c.path) << "` | " << cell(c.format) << " | " << human_size(c.bytes) << " | "
          << cell(c.training_state) << " | " << cell(c.safety) << " |\n";
    }
  }
  if (ctx.probe.is_array() && !ctx.probe.empty()) {
    out << "\n## Runtime probe\n\n<details><summary>Probe reports (" << ctx.probe.size()
        << ")</summary>\n\n```json\n" << ctx.probe.dump(2) << "\n```\n\n</details>\n";
  }
}

}  // namespace torchlint::report
