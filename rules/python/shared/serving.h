#pragma once
// Which functions of a file are request handlers of a web or model-serving app, and which
// names hold library callables that are not torch models: what the serving rules
// (TL701-TL703) share. A shared analysis (computed once per file, see Analysis).
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "python/rule.h"

namespace torchlint::python {

// Knows the web and model-serving apps of a file (FastAPI, Flask, Starlette, Litestar,
// Sanic, Quart, aiohttp, BentoML, Ray Serve) and which functions they route requests to.
class RequestHandlers final : public Analysis {
 public:
  void on_assign(const AssignEvent& event, RuleContext& ctx) override;
  // Whether the function being traversed is a request handler.
  bool current_is_handler(RuleContext& ctx);
  // Whether any function of the file can be a request handler: false when the file names
  // no web or serving framework and has no route path literal, which is what every way
  // is_handler recognises a handler needs. Decided once per file from its text.
  bool may_have_handlers(RuleContext& ctx);
  // Whether `name` ("pipe", "self.yolo") holds the result of a library call that is not a
  // torch model run by forward (HF pipelines, tokenizers, YOLO wrappers, ONNX sessions).
  bool is_library_callable(std::string_view name, RuleContext& ctx) const;

 private:
  bool is_handler(const FunctionState& fn, const SemanticModel& model) const;
  std::unordered_set<std::string> apps_;               // names bound to app/router objects
  std::unordered_set<std::string> services_;           // names bound to bentoml.Service objects
  std::unordered_set<std::string> library_callables_;  // "<owner>|name"
  std::unordered_map<const void*, bool> cache_;
  std::optional<bool> may_have_handlers_;
};

}  // namespace torchlint::python
