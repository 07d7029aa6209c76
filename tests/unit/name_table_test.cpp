#include <doctest/doctest.h>

#include <cctype>
#include <string>
#include <vector>

#include "core/name_table.h"
#include "core/word_scan.h"
#include "python/rule.h"

using namespace torchlint;

TEST_CASE("NameSet finds exactly its names") {
  NameSet set = {"torch.load", "torch.save", "", "numpy.random.seed", "torch.load"};
  CHECK(set.contains("torch.load"));
  CHECK(set.contains("torch.save"));
  CHECK(set.contains(""));
  CHECK(set.contains(std::string("numpy.random.") + "seed"));  // equal text, other storage
  CHECK_FALSE(set.contains("torch.loa"));
  CHECK_FALSE(set.contains("torch.load "));
  CHECK_FALSE(set.contains("random.seed"));
  const std::string_view* stored = set.find(std::string("torch.save"));
  REQUIRE(stored);
  CHECK(*stored == "torch.save");
  CHECK(set.find("torch.jit.save") == nullptr);
}

TEST_CASE("NameSet keeps every name of a larger table and nothing else") {
  NameSet set = {"n0",  "n1",  "n2",  "n3",  "n4",  "n5",  "n6",  "n7",  "n8",  "n9",  "n10", "n11", "n12",
                 "n13", "n14", "n15", "n16", "n17", "n18", "n19", "n20", "n21", "n22", "n23", "n24", "n25",
                 "n26", "n27", "n28", "n29", "n30", "n31", "n32", "n33", "n34", "n35", "n36", "n37", "n38",
                 "n39", "n40", "n41", "n42", "n43", "n44", "n45", "n46", "n47", "n48", "n49", "n50", "n51",
                 "n52", "n53", "n54", "n55", "n56", "n57", "n58", "n59", "n60", "n61", "n62", "n63"};
  for (int i = 0; i < 64; ++i) CHECK(set.contains("n" + std::to_string(i)));
  for (int i = 64; i < 200; ++i) CHECK_FALSE(set.contains("n" + std::to_string(i)));
  NameSet empty = {};
  CHECK_FALSE(empty.contains(""));
}

TEST_CASE("NameMap returns the value of the first entry for a name") {
  NameMap<int> map = {{"a", 1}, {"b", 2}, {"a", 3}};
  REQUIRE(map.find("a"));
  CHECK(*map.find("a") == 1);
  CHECK(*map.find("b") == 2);
  CHECK(map.find("c") == nullptr);
}

namespace {
using namespace torchlint::python;
struct CallsOnly : Rule {
  void on_call(const CallEvent&, RuleContext&) override {}
};
struct CallsAndModuleEnd : CallsOnly {
  void on_module_end(RuleContext&) override {}
};
struct Inherits : CallsAndModuleEnd {};
struct AfterAssignOnly : Analysis {
  void after_assign(const AssignEvent&, RuleContext&) override {}
};
}  // namespace

TEST_CASE("NameGroups lists every id of a name, in the order given") {
  std::vector<std::string> names = {"a.f", "f", "b.f", "f", "a.f", "g"};
  std::vector<std::pair<std::string_view, uint32_t>> entries;
  for (uint32_t i = 0; i < names.size(); ++i) entries.emplace_back(names[i], i * 10);
  NameGroups groups(entries);
  auto ids = [&](std::string_view n) {
    auto s = groups.find(n);
    return std::vector<uint32_t>(s.begin(), s.end());
  };
  CHECK(ids("a.f") == std::vector<uint32_t>{0, 40});
  CHECK(ids("f") == std::vector<uint32_t>{10, 30});
  CHECK(ids("b.f") == std::vector<uint32_t>{20});
  CHECK(ids(std::string("g")) == std::vector<uint32_t>{50});
  CHECK(groups.find("h").empty());
  CHECK(groups.find("").empty());
  CHECK(NameGroups({}).find("f").empty());
}

TEST_CASE("NameGroups keeps a larger index whole") {
  std::vector<std::string> names;
  for (int i = 0; i < 3000; ++i) names.push_back("m" + std::to_string(i % 1000));
  std::vector<std::pair<std::string_view, uint32_t>> entries;
  for (uint32_t i = 0; i < names.size(); ++i) entries.emplace_back(names[i], i);
  NameGroups groups(entries);
  for (uint32_t k = 0; k < 1000; ++k) {
    auto s = groups.find("m" + std::to_string(k));
    CHECK(std::vector<uint32_t>(s.begin(), s.end()) == std::vector<uint32_t>{k, k + 1000, k + 2000});
  }
  CHECK(groups.find("m1000").empty());
}

TEST_CASE("handled_events reads which handlers a class declares") {
  CHECK(handled_events<CallsOnly, Rule>() == event_bit(Event::kCall));
  CHECK(handled_events<Inherits, Rule>() == (event_bit(Event::kCall) | event_bit(Event::kModuleEnd)));
  CHECK(handled_events<Rule, Rule>() == 0);
  CHECK(handled_events<AfterAssignOnly, Analysis>() == event_bit(Event::kAfterAssign));
  CHECK(rule_entry<Inherits>({}).events == handled_events<Inherits, Rule>());
}

TEST_CASE("WordScanner finds whole identifiers only, in code, strings and comments") {
  WordScanner words({"Linear", "step", "DataLoader", "__getitem__"});
  auto scan = [&](std::string_view text) {
    std::vector<bool> m = words.scan(text);
    std::string out;
    for (bool b : m) out += b ? '1' : '0';
    return out;
  };
  CHECK(scan("") == "0000");
  CHECK(scan("nn.Linear(3, 4)") == "1000");
  CHECK(scan("from torch.nn import Linear as L") == "1000");
  CHECK(scan("LazyLinear(4) + Linear2 + _Linear + Linear_") == "0000");  // parts of other names
  CHECK(scan("opt.step()\n# the DataLoader below\n") == "0110");
  CHECK(scan("s = 'DataLoader'") == "0010");
  CHECK(scan("def __getitem__(self, i):") == "0001");
  CHECK(scan("Linear") == "1000");                     // at both ends of the text
  CHECK(scan("\xc3\xa9step step\xc3\xa9") == "0000");  // non-ASCII letters belong to the name
  CHECK(scan("x.step\n") == "0100");
  CHECK_THROWS_AS(WordScanner({"two words"}), std::logic_error);
  CHECK_THROWS_AS(WordScanner({""}), std::logic_error);
}

TEST_CASE("WordScanner agrees with a byte-by-byte reading on long texts") {
  std::vector<std::string_view> list = {"ab", "step", "x", "Linear", "a_1", "__init__"};
  WordScanner words(list);
  // Names across the 64-byte blocks the scanner reads at once, at every offset.
  std::string alphabet = "ab_1 .(\n\xc3x";
  uint64_t seed = 12345;
  for (int round = 0; round < 400; ++round) {
    std::string text;
    size_t size = 1 + (round * 7) % 300;
    for (size_t i = 0; i < size; ++i) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      if ((seed >> 60) == 0) {
        text += list[(seed >> 40) % list.size()];
      } else {
        text += alphabet[(seed >> 33) % alphabet.size()];
      }
    }
    std::vector<bool> expected(list.size(), false);
    auto ident = [](unsigned char c) { return std::isalnum(c) || c == '_' || c >= 0x80; };
    for (size_t i = 0; i < text.size();) {
      if (!ident(static_cast<unsigned char>(text[i]))) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < text.size() && ident(static_cast<unsigned char>(text[j]))) ++j;
      for (size_t w = 0; w < list.size(); ++w) {
        if (text.substr(i, j - i) == list[w]) expected[w] = true;
      }
      i = j;
    }
    REQUIRE(words.scan(text) == expected);
  }
}
