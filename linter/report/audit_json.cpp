// The audit as JSON: the documented schema (README, "Audit report JSON").
#include "audit.h"

namespace torchlint::report {

void write_audit_json(std::ostream& out, const AuditContext& ctx) {
  using json = nlohmann::ordered_json;
  const Scorecard& card = ctx.scorecard;
  json doc;
  doc["schema"] = "torchlint-audit/1";
  doc["tool"] = {{"name", "torchlint"}, {"version", TORCHLINT_VERSION}};
  doc["project"] = ctx.project;
  doc["generated_at"] = ctx.generated_at;
  doc["summary"] = {{"score", card.score},
                    {"passed", card.passed},
                    {"failed", card.failed},
                    {"not_applicable", card.not_applicable},
                    {"manual", card.manual},
                    {"not_checked", card.not_checked},
                    {"findings", ctx.findings.outcome.diagnostics.size()},
                    {"files_linted", ctx.files_linted}};
  json items = json::array();
  for (const auto& r : card.items) {
    json item;
    item["id"] = r.item->id;
    item["title"] = r.item->title;
    item["part"] = r.item->part;
    item["phase"] = r.item->phase;
    item["status"] = item_status_name(r.status);
    item["rules"] = r.item->rules;
    item["checked_by"] = r.checked_by;
    if (!r.reason.empty()) item["reason"] = r.reason;
    json evidence = json::array();
    for (const Diagnostic* d : r.evidence) {
      evidence.push_back({{"code", d->code}, {"path", d->path}, {"line", d->start.line}, {"column", d->start.column},
                          {"severity", severity_name(d->severity)}, {"message", d->message}});
    }
    item["evidence"] = evidence;
    items.push_back(std::move(item));
  }
  doc["items"] = items;
  json next = json::array();
  for (const ItemResult* r : items_by_impact(card)) {
    next.push_back({{"id", r->item->id}, {"title", r->item->title}, {"findings", r->evidence.size()},
                    {"worst", severity_name(r->worst)}});
  }
  doc["next_steps"] = next;
  json checkpoints = json::array();
  for (const auto& c : ctx.checkpoints) {
    checkpoints.push_back({{"path", c.path}, {"format", c.format}, {"bytes", c.bytes},
                           {"training_state", c.training_state}, {"safety", c.safety}});
  }
  doc["checkpoints"] = checkpoints;
  doc["probe"] = ctx.probe.is_null() ? json::array() : json(ctx.probe);
  out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace torchlint::report
