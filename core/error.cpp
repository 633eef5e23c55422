#include "core/error.hpp"

#include <cstring>

namespace cplab {

RankTag& current_rank_tag() {
  thread_local RankTag tag;
  return tag;
}

void throw_error(const char* file, int line, const std::string& message) {
  const char* base = std::strrchr(file, '/');
  base = base ? base + 1 : file;
  const RankTag& tag = current_rank_tag();
  if (tag.rank >= 0) {
    throw Error(fmt::format("{}:{}: rank {}/{}: {}", base, line, tag.rank, tag.size, message));
  }
  throw Error(fmt::format("{}:{}: {}", base, line, message));
}

}  // namespace cplab
