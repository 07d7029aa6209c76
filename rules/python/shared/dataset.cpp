#include "dataset.h"

#include "python/api_tables.h"

namespace torchlint::python::dataset_util {

bool is_dataset_base(std::string_view q) { return api::dataset_bases().contains(q); }

bool is_dataset_class(std::string_view q, const SemanticModel& model, int depth) {
  if (is_dataset_base(q)) return true;
  const ClassInfo* local = model.class_info(q);
  if (!local || depth > 8) return false;
  for (const auto& b : local->bases) {
    if (is_dataset_class(b, model, depth + 1)) return true;
  }
  return false;
}

bool derives_from_dataset(TSNode class_node, const SemanticModel& model) {
  const Syntax& syn = Syntax::get();
  TSNode bases = field(class_node, syn.fields().superclasses);
  uint32_t n = ts_node_is_null(bases) ? 0 : ts_node_named_child_count(bases);
  for (uint32_t i = 0; i < n; ++i) {
    TSNode base = ts_node_named_child(bases, i);
    if (syn.kind(base) == Kind::kKeywordArgument) continue;
    if (syn.kind(base) == Kind::kSubscript) base = field(base, syn.fields().value);
    auto q = model.resolve_qualified_name(base);
    if (q && is_dataset_class(*q, model)) return true;
  }
  return false;
}

}  // namespace torchlint::python::dataset_util
