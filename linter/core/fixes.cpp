#include "fixes.h"

#include <algorithm>

namespace torchlint {

FixResult apply_fixes(std::string_view original, const std::vector<const Diagnostic*>& diagnostics) {
  struct Pending {
    uint32_t start, end;
    const Diagnostic* diagnostic;
  };
  std::vector<Pending> fixes;
  for (const Diagnostic* d : diagnostics) {
    if (!d->fix || d->fix->edits.empty()) continue;
    uint32_t start = UINT32_MAX, end = 0;
    for (const auto& e : d->fix->edits) {
      start = std::min(start, e.start);
      end = std::max(end, e.end);
    }
    fixes.push_back({start, end, d});
  }
  std::stable_sort(fixes.begin(), fixes.end(), [](const Pending& a, const Pending& b) { return a.start < b.start; });
  FixResult result;
  std::vector<Edit> edits;
  uint32_t covered_until = 0;
  bool any = false;
  for (const auto& f : fixes) {
    if (any && f.start < covered_until) {
      ++result.skipped;
      continue;
    }
    for (const auto& e : f.diagnostic->fix->edits) edits.push_back(e);
    result.applied_from.push_back(f.diagnostic);
    covered_until = std::max(f.end, f.start + 1);
    any = true;
    ++result.applied;
  }
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.start < b.start; });
  size_t pos = 0;
  for (const auto& e : edits) {
    if (e.start < pos || e.end > original.size()) continue;
    result.text.append(original.substr(pos, e.start - pos));
    result.text.append(e.replacement);
    pos = e.end;
  }
  result.text.append(original.substr(pos));
  return result;
}

namespace {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size() - 1;
    lines.push_back(text.substr(pos, eol - pos + 1));
    pos = eol + 1;
  }
  return lines;
}

}  // namespace

std::string unified_diff(const std::string& path, std::string_view before, std::string_view after) {
  if (before == after) return {};
  auto a = split_lines(before);
  auto b = split_lines(after);
  // Fixes are local, so a diff of the changed middle is exact: trim the common prefix and
  // suffix, then emit hunks of changed runs inside it by matching equal lines greedily.
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  const size_t context = 3;
  std::string out = "--- " + path + "\n+++ " + path + "\n";
  auto emit = [&](char sign, std::string_view line) {
    out += sign;
    out += line;
    if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
  };
  auto header = [&](size_t a0, size_t an, size_t b0, size_t bn) {
    out += "@@ -" + std::to_string(a0 + 1) + "," + std::to_string(an) + " +" + std::to_string(b0 + 1) + "," +
           std::to_string(bn) + " @@\n";
  };
  if (a.size() == b.size()) {
    // Fixes that rewrite lines in place (the usual case): one hunk per group of changed
    // lines less than 2 * context apart.
    size_t i = 0;
    while (i < a.size()) {
      if (a[i] == b[i]) {
        ++i;
        continue;
      }
      size_t first = i, last = i;
      for (size_t j = i + 1; j < a.size() && j <= last + 2 * context; ++j) {
        if (a[j] != b[j]) last = j;
      }
      size_t begin = first > context ? first - context : 0;
      size_t end = std::min(a.size(), last + 1 + context);
      header(begin, end - begin, begin, end - begin);
      for (size_t k = begin; k < end; ++k) {
        if (a[k] == b[k]) {
          emit(' ', a[k]);
        } else {
          emit('-', a[k]);
          emit('+', b[k]);
        }
      }
      i = end;
    }
    return out;
  }
  size_t a_begin = prefix > context ? prefix - context : 0;
  size_t a_mid = a.size() - suffix, b_mid = b.size() - suffix;
  size_t a_end = std::min(a.size(), a_mid + context);
  size_t b_end = std::min(b.size(), b_mid + context);
  header(a_begin, a_end - a_begin, a_begin, b_end - a_begin);
  for (size_t k = a_begin; k < prefix; ++k) emit(' ', a[k]);
  for (size_t k = prefix; k < a_mid; ++k) emit('-', a[k]);
  for (size_t k = prefix; k < b_mid; ++k) emit('+', b[k]);
  for (size_t k = a_mid; k < a_end; ++k) emit(' ', a[k]);
  return out;
}

}  // namespace torchlint
