// The property table: one line per file in properties/checks/, in the order a sweep runs them.
#include <fmt/ranges.h>

#include <set>

#include "core/error.hpp"
#include "properties/property.hpp"

namespace cplab::properties {

extern const PropertyInfo index_maps_property;
extern const PropertyInfo shard_gather_property;
extern const PropertyInfo token_data_property;
extern const PropertyInfo local_documents_property;
extern const PropertyInfo shifted_loss_property;
extern const PropertyInfo gather_backward_property;
extern const PropertyInfo attention_property;
extern const PropertyInfo load_balance_property;
extern const PropertyInfo microbatches_property;
extern const PropertyInfo ulysses_all_to_all_property;
extern const PropertyInfo ulysses_attention_property;
extern const PropertyInfo schedule_coverage_property;
extern const PropertyInfo schedule_balance_property;
extern const PropertyInfo cp_attention_property;
extern const PropertyInfo lse_merge_property;
extern const PropertyInfo mtp_loss_property;
extern const PropertyInfo token_shift_property;

namespace {

std::vector<PropertyInfo> registered(std::vector<PropertyInfo> entries) {
  std::set<std::string> names;
  for (const PropertyInfo& p : entries) {
    CPLAB_CHECK(!p.name.empty() && p.check != nullptr,
                "a property registers without a name or a check");
    CPLAB_CHECK(names.insert(p.name).second, "property '{}' registered twice", p.name);
    // Names go into case-insensitive file systems, XML and command lines: keep them plain.
    CPLAB_CHECK(
        p.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos,
        "property name '{}' must be snake_case", p.name);
  }
  return entries;
}

}  // namespace

const std::vector<PropertyInfo>& property_table() {
  static const std::vector<PropertyInfo> table = registered({
      index_maps_property,
      shard_gather_property,
      token_data_property,
      local_documents_property,
      shifted_loss_property,
      gather_backward_property,
      attention_property,
      load_balance_property,
      microbatches_property,
      ulysses_all_to_all_property,
      ulysses_attention_property,
      schedule_coverage_property,
      schedule_balance_property,
      cp_attention_property,
      lse_merge_property,
      // Multi-token prediction (SPEC §6.1), after the fifteen it extends: their jobs keep their
      // numbers in a report.
      mtp_loss_property,
      token_shift_property,
  });
  return table;
}

std::vector<std::string> property_names() {
  std::vector<std::string> names;
  for (const PropertyInfo& p : property_table()) names.push_back(p.name);
  return names;
}

const PropertyInfo& find_property(const std::string& name) {
  for (const PropertyInfo& p : property_table()) {
    if (p.name == name) return p;
  }
  CPLAB_FAIL("unknown property '{}'; known properties: {}", name,
             fmt::join(property_names(), ", "));
}

}  // namespace cplab::properties
