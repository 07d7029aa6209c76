// TL207 detect-anomaly-enabled: autograd anomaly detection left on in training code.
#include <cctype>
#include <regex>

#include "catalog.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

// A condition that reads like a debugging switch (`if args.debug:`, `if cfg.detect_anomaly:`).
bool debugging_guard(const SemanticModel& model) {
  static const std::regex debug(R"(debug|anomal|detect|verbose|sanity)", std::regex::icase);
  for (TSNode cond : model.enclosing_conditions()) {
    std::string text(model.text(cond));
    if (std::regex_search(text, debug)) return true;
  }
  return false;
}

class DetectAnomalyEnabled final : public Rule {
 public:
  // Only anomaly detection is judged.
  static constexpr std::string_view kTriggers[] = {"set_detect_anomaly", "detect_anomaly"};

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    if (!call.qualname) return;
    const SemanticModel& model = ctx.model();
    bool enables = false;
    if (*call.qualname == api::kSetDetectAnomaly) {
      TSNode mode = call.keyword("mode", model.source());
      if (ts_node_is_null(mode)) mode = call.positional(0);
      enables = !ts_node_is_null(mode) && Syntax::get().kind(mode) == Kind::kTrue;
    } else if (*call.qualname == api::kDetectAnomaly) {
      enables = true;
    }
    if (!enables || model.is_pytest_file() || debugging_guard(model)) return;
    ctx.report(call.node,
               "autograd anomaly detection is on: every backward pass records and checks each op's traceback, "
               "slowing training several-fold; enable it only behind a debug switch");
  }
};

}  // namespace
}  // namespace python

python::RuleEntry detect_anomaly_enabled_rule() {
  return python::rule_entry<python::DetectAnomalyEnabled>(catalog_entry("TL207"));
}

}  // namespace torchlint
