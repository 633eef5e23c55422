#include "comm/wait_for.hpp"

#include <fmt/format.h>

#include <map>

namespace cplab::sim {
namespace {

// "rank 2" / "ranks 0 and 3" / "ranks 0, 1 and 3".
std::string rank_list(const std::vector<int>& ranks) {
  if (ranks.size() == 1) return fmt::format("rank {}", ranks[0]);
  std::string text = "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) text += i + 1 == ranks.size() ? " and " : ", ";
    text += std::to_string(ranks[i]);
  }
  return text;
}

// The predicate of one rank's clause, singular or plural.
std::string clause(const RankActivity& a, bool plural) {
  const char* wait = plural ? "wait" : "waits";
  using Kind = RankActivity::Kind;
  switch (a.kind) {
    case Kind::collective:
      return fmt::format("{} in {} #{}", wait, a.call, a.seq);
    case Kind::recv:
      return fmt::format("{} in recv from rank {} tag {}", wait, a.peer, a.tag);
    case Kind::send:
      return fmt::format("{} in send to rank {} tag {} (for it to be received)", wait, a.peer,
                         a.tag);
    case Kind::finished:
      return plural ? "have finished" : "has finished";
    case Kind::failed:
      return plural ? "have failed" : "has failed";
    case Kind::busy:
      return fmt::format("{} busy ({})", plural ? "are" : "is", a.call);
    case Kind::computing:
      break;
  }
  return fmt::format("{} computing{}", plural ? "are" : "is",
                     a.call.empty() ? "" : " (" + a.call + ")");
}

}  // namespace

bool RankActivity::waiting() const {
  return kind == Kind::collective || kind == Kind::recv || kind == Kind::send;
}

std::string waited_call(const RankActivity& a) {
  using Kind = RankActivity::Kind;
  switch (a.kind) {
    case Kind::collective:
      return fmt::format("{} #{}", a.call, a.seq);
    case Kind::recv:
      return fmt::format("recv from rank {} (tag {})", a.peer, a.tag);
    case Kind::send:
      return fmt::format("send to rank {} (tag {})", a.peer, a.tag);
    default:
      return doing(a);
  }
}

std::string doing(const RankActivity& a) {
  using Kind = RankActivity::Kind;
  switch (a.kind) {
    case Kind::collective:
    case Kind::recv:
    case Kind::send:
      return "in " + waited_call(a);
    case Kind::finished:
      return "returned";
    case Kind::failed:
      return "failed";
    case Kind::busy:
    case Kind::computing:
      break;
  }
  return a.call.empty() ? "running" : a.call;
}

std::string wait_for_picture(const std::vector<RankActivity>& ranks) {
  // Clauses keyed by their text, in order of first appearance (the lowest rank in each).
  std::vector<std::string> order;
  std::map<std::string, std::vector<int>> members;
  std::map<std::string, const RankActivity*> sample;
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r) {
    const std::string key = clause(ranks[static_cast<std::size_t>(r)], false);
    if (members[key].empty()) {
      order.push_back(key);
      sample[key] = &ranks[static_cast<std::size_t>(r)];
    }
    members[key].push_back(r);
  }
  std::string picture;
  for (const std::string& key : order) {
    if (!picture.empty()) picture += "; ";
    const std::vector<int>& who = members[key];
    picture += rank_list(who) + " " + clause(*sample[key], who.size() > 1);
  }
  return picture;
}

}  // namespace cplab::sim
