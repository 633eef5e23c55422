// Every layout any registry knows has all of its parts: a construction in the reference
// (reference/layouts/NAME.cpp), a descriptor with a registered closed form (layouts/NAME.cpp),
// a property entry with its load-balance rule (properties/layouts/NAME.cpp); and one row of it
// goes through every layer (reference, twin partition, closed form, cost model) and agrees.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "core/error.hpp"
#include "core/source_dir.hpp"
#include "layouts/cost_model.hpp"
#include "layouts/magi.hpp"
#include "layouts/partition.hpp"
#include "properties/layout_table.hpp"
#include "reference/plan.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::properties {
namespace {

namespace fs = std::filesystem;
using Ints = std::vector<std::int64_t>;

std::vector<std::string> every_registered_name() {
  std::set<std::string> names;
  for (const std::string& name : reference::layout_names()) names.insert(name);
  for (const std::string& name : sim::layout_descriptor_names()) names.insert(name);
  return {names.begin(), names.end()};
}

std::string file_stem(std::string name) {
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

TEST(LayoutParts, every_registered_layout_has_all_its_parts) {
  std::string table_error;
  try {
    layout_table();
  } catch (const Error& e) {
    table_error = e.what();
  }
  ASSERT_EQ(table_error, "") << "the property layout table refuses its entries";
  const fs::path root = cplab::source_dir();
  for (const std::string& name : every_registered_name()) {
    SCOPED_TRACE(name);
    EXPECT_NO_THROW(reference::layout_info(name)) << "no reference construction";
    EXPECT_NO_THROW(sim::layout_descriptor(name)) << "no layout descriptor";
    EXPECT_NO_THROW(layout_entry(name)) << "no property entry";
    for (const char* folder : {"layouts", "reference/layouts", "properties/layouts"}) {
      EXPECT_TRUE(fs::exists(root / folder / (file_stem(name) + ".cpp")))
          << "missing " << folder << "/" << file_stem(name) << ".cpp";
    }
    const sim::LayoutDescriptor& d = sim::layout_descriptor(name);
    EXPECT_TRUE(d.map.form >= 0 && d.map.form < index_math::form_count())
        << "closed form " << d.map.form;
    EXPECT_NE(layout_entry(name).balance, nullptr) << "no load-balance rule";
  }
}

TEST(LayoutParts, one_row_of_every_layout_agrees_through_every_layer) {
  for (const sim::LayoutDescriptor& d : sim::layout_descriptors()) {
    for (const std::int64_t cp : {1, 3}) {
      if (cp > 1 && d.cp_off) continue;
      SCOPED_TRACE(::testing::Message() << d.name << " cp " << cp);
      LayoutSpec spec;
      spec.layout = d.name;
      spec.cp = cp;
      layouts::magi_chunk_size.set(spec, 2);
      sim::MicrobatchRows rows;
      rows.rows = 1;
      // 13 slots, or the nearest length the layout takes (as the caller pads it for the layout).
      rows.caller_len = sim::nearest_accepted_len(spec, 13);
      const Ints docs = {5, 3, 4};
      if (!d.bshd_rows) {
        rows.packed = true;
        rows.seq_lens = docs;
      }
      const RowPlan row = reference::plan_row(spec, rows.caller_len, rows.packed ? &docs : nullptr);
      const sim::LayoutMap closed(d, cp, row.padded_len, row.map);
      for (std::int64_t r = 0; r < cp; ++r) {
        const ShardLayout mine = sim::partition_rank(spec, r, rows);
        ASSERT_EQ(mine.padded_len, row.padded_len);
        EXPECT_EQ(mine.index[0], row.index[static_cast<std::size_t>(r)]) << "twin, rank " << r;
        EXPECT_EQ(closed.local_index(r), row.index[static_cast<std::size_t>(r)])
            << "closed form, rank " << r;
        EXPECT_EQ(sim::LayoutMap::of(mine, 0).local_index(r), mine.index[0])
            << "closed form from the twin's recorded parameters, rank " << r;
      }
      const auto costs = sim::rank_costs(spec, rows, {});
      EXPECT_EQ(static_cast<std::int64_t>(costs.size()), cp);
    }
  }
}

}  // namespace
}  // namespace cplab::properties
