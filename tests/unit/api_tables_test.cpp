// The named sets of API names (python/api_names.def), checked as data: a name repeated or
// padded there is a slip the NameSet would absorb without a word.
#include <doctest/doctest.h>

#include <set>
#include <span>
#include <string_view>

#include "python/api_tables.h"

using namespace torchlint;
namespace api = torchlint::python::api;

namespace {

struct NamedSet {
  std::string_view id;
  std::span<const std::string_view> names;
  const NameSet& (*set)();
};

constexpr NamedSet kSets[] = {
#define API_NAME_SET(id, ...) {#id, api::names::id, api::id},
#include "python/api_names.def"
#undef API_NAME_SET
};

bool subset(std::span<const std::string_view> names, const NameSet& of) {
  for (std::string_view n : names) {
    if (!of.contains(n)) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("every API name set holds each of its names once, without blanks") {
  for (const NamedSet& s : kSets) {
    INFO(s.id);
    CHECK_FALSE(s.names.empty());
    std::set<std::string_view> seen;
    for (std::string_view n : s.names) {
      INFO(n);
      CHECK_FALSE(n.empty());
      CHECK(n.find_first_of(" \t") == std::string_view::npos);
      CHECK(seen.insert(n).second);
      CHECK(s.set().contains(n));
    }
  }
}

TEST_CASE("API name sets that narrow another stay inside it") {
  // A module method that keeps the module, in a mode chain or not, returns the module.
  CHECK(subset(api::names::module_moving_methods, api::module_methods_returning_self()));
  CHECK(subset(api::names::module_mode_chain_methods, api::module_methods_returning_self()));
  CHECK(subset(api::names::map_dataset_bases, api::dataset_bases()));
  CHECK(subset(api::names::iterable_dataset_bases, api::dataset_bases()));
  CHECK(subset(api::names::container_adders, api::module_container_adders()));
  CHECK(subset(api::names::legacy_activation_functions, api::output_saving_functions()));
  CHECK_FALSE(api::dataset_bases().contains("torch.utils.data.DataLoader"));
}
