// The audit as JSON: the documented schema (README, "Audit report JSON").
#include "audit.h"

namespace torchlint::report {

namespace {

nlohmann::ordered_json findings_json(const std::vector<const Diagnostic*>& findings) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Diagnostic* d : findings) {
    out.push_back({{"code", d->code},
                   {"path", d->path},
                   {"line", d->start.line},
                   {"column", d->start.column},
                   {"severity", severity_name(d->severity)},
                   {"message", d->message}});
  }
  return out;
}

}  // namespace

void write_audit_json(std::ostream& out, const AuditContext& ctx) {
  using json = nlohmann::ordered_json;
  const Scorecard& card = ctx.scorecard;
  size_t probed = 0;
  for (const auto& m : ctx.probe.models) probed += m.status == "probed";
  json doc;
  doc["schema"] = "torchlint-audit/2";
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
                    {"files_linted", ctx.files_linted},
                    {"checkpoints", ctx.checkpoints.size()},
                    {"probed_models", probed}};
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
    item["evidence"] = findings_json(r.evidence);
    item["advisory"] = findings_json(r.advisory);  // below --fail-on: shown, did not fail the item
    items.push_back(std::move(item));
  }
  doc["items"] = items;
  json next = json::array();
  for (const ItemResult* r : items_by_impact(card)) {
    next.push_back({{"id", r->item->id},
                    {"title", r->item->title},
                    {"findings", r->evidence.size()},
                    {"worst", severity_name(r->worst)}});
  }
  doc["next_steps"] = next;
  json checkpoints = json::array();
  for (const auto& c : ctx.checkpoints) {
    checkpoints.push_back({{"path", c.path},
                           {"format", c.format},
                           {"bytes", c.bytes},
                           {"files", c.files},
                           {"training_state", c.training_state},
                           {"training_detail", c.training_detail},
                           {"safety", c.safety},
                           {"safety_detail", c.safety_detail},
                           {"torchscript", c.torchscript},
                           {"findings", c.codes}});
  }
  doc["checkpoints"] = checkpoints;
  doc["checkpoint_notes"] = ctx.checkpoint_notes;
  json probe;
  probe["requested"] = ctx.probe.requested;
  probe["binary"] = ctx.probe.binary.empty() ? json(nullptr) : json(ctx.probe.binary);
  probe["inputs"] = ctx.probe.inputs;
  probe["inputs_source"] = ctx.probe.inputs_source;
  probe["note"] = ctx.probe.note;
  json models = json::array();
  for (const auto& m : ctx.probe.models) {
    ProbeFigures f = probe_figures(m.report);
    auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
    json figures;
    figures["parameters"] = f.parameters ? json(*f.parameters) : json(nullptr);
    figures["device"] = f.device;
    json checks = json::array();
    for (const auto& c : f.checks) checks.push_back({{"name", c.name}, {"status", c.status}, {"headline", c.headline}});
    figures["checks"] = checks;
    json memory = json::array();
    for (const auto& r : f.memory) {
      memory.push_back({{"batch", r.batch},
                        {"forward_peak_bytes", opt(r.forward)},
                        {"forward_backward_peak_bytes", opt(r.forward_backward)},
                        {"predicted_training_bytes", opt(r.predicted_training)},
                        {"out_of_memory", r.out_of_memory}});
    }
    figures["memory"] = memory;
    json amp = json::array();
    for (const auto& a : f.amp) {
      amp.push_back({{"variant", a.variant},
                     {"max_abs", opt(a.max_abs)},
                     {"max_rel", opt(a.max_rel)},
                     {"tolerance", opt(a.tolerance)},
                     {"cosine", opt(a.cosine)},
                     {"passed", a.passed},
                     {"error", a.error}});
    }
    figures["amp"] = amp;
    json latency = json::array();
    for (const auto& l : f.latency) {
      latency.push_back({{"batch", l.batch},
                         {"p50_ms", opt(l.p50_ms)},
                         {"p99_ms", opt(l.p99_ms)},
                         {"throughput_per_s", opt(l.throughput)},
                         {"out_of_memory", l.out_of_memory}});
    }
    figures["latency"] = latency;
    json model{
        {"path", m.path}, {"status", m.status}, {"exit_code", m.exit_code}, {"note", m.note}, {"figures", figures}};
    model["report"] = m.report;
    models.push_back(std::move(model));
  }
  probe["models"] = models;
  doc["probe"] = probe;
  out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace torchlint::report
