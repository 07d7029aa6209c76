#include "diagnostic.h"

#include <tuple>

namespace torchlint {

bool diagnostic_less(const Diagnostic& a, const Diagnostic& b) {
  return std::tie(a.path, a.start.line, a.start.column, a.code, a.message) <
         std::tie(b.path, b.start.line, b.start.column, b.code, b.message);
}

}  // namespace torchlint
