// `path:line:col: CODE [*] message`, one line per finding: for editors and grep.
#include "report.h"

namespace torchlint::report {

void write_concise(std::ostream& out, const ReportContext& ctx) {
  for (const auto& d : ctx.outcome.diagnostics) {
    out << paint(ctx.color, "1", location_prefix(d)) << ' ' << paint(ctx.color, "1;31", d.code) << ' '
        << (d.fix && !d.fix->unsafe ? paint(ctx.color, "36", "[*] ") : "") << d.message << '\n';
  }
}

}  // namespace torchlint::report
