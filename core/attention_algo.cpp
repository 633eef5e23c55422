// The names of the CP attention algorithms (SPEC §13), as the field names them.
#include "core/attention_algo.hpp"

#include <fmt/ranges.h>

#include "core/error.hpp"

namespace cplab::sim {

const char* algo_name(AttentionAlgo algo) {
  switch (algo) {
    case AttentionAlgo::all_gather:
      return "all-gather";
    case AttentionAlgo::ring:
      return "ring";
    case AttentionAlgo::ulysses:
      return "ulysses";
    case AttentionAlgo::usp:
      return "usp";
  }
  return "?";
}

const std::vector<AttentionAlgo>& all_algos() {
  static const std::vector<AttentionAlgo> algos{AttentionAlgo::all_gather, AttentionAlgo::ring,
                                                AttentionAlgo::ulysses, AttentionAlgo::usp};
  return algos;
}

AttentionAlgo parse_algo(const std::string& name) {
  std::vector<std::string> names;
  for (AttentionAlgo a : all_algos()) {
    if (name == algo_name(a)) return a;
    names.emplace_back(algo_name(a));
  }
  CPLAB_FAIL("unknown attention algorithm '{}'; known: {}", name, fmt::join(names, ", "));
}

}  // namespace cplab::sim
