#pragma once
// What the registries do with each line of a generated rule list (rules/CMakeLists.txt):
// the file name gives the code, the factory takes its entry from the catalog by the code
// it spells, and the two must agree. A file renamed without its code, or the reverse, stops
// the program at its first use of the registry instead of running a rule under another code.
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace torchlint {

template <class Entry>
void add_listed_rule(std::vector<Entry>& rules, std::string_view kind, std::string_view code, Entry entry) {
  if (entry.info.code != code) {
    throw std::logic_error("rules/" + std::string(kind) + "/" + std::string(code) + "-*.cpp registers " +
                           entry.info.code);
  }
  rules.push_back(std::move(entry));
}

}  // namespace torchlint
