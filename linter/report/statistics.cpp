// `--statistics`: how often each rule fired, most frequent first.
#include <algorithm>
#include <iomanip>
#include <map>

#include "report.h"

namespace torchlint::report {

void write_statistics(std::ostream& out, const ReportContext& ctx) {
  std::map<std::string, std::pair<size_t, size_t>> counts;  // code -> (findings, fixable)
  for (const auto& d : ctx.outcome.diagnostics) {
    auto& c = counts[d.code];
    ++c.first;
    if (d.fix) ++c.second;
  }
  std::vector<std::pair<std::string, std::pair<size_t, size_t>>> rows(counts.begin(), counts.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  for (const auto& [code, c] : rows) {
    const RuleInfo* rule = ctx.registry.find(code);
    out << std::setw(5) << std::right << c.first << "  " << std::left << std::setw(6) << code << ' '
        << (c.second ? "[*] " : "    ") << (rule ? rule->name : std::string()) << '\n';
  }
}

}  // namespace torchlint::report
