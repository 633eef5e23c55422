#pragma once
// What each rank of a group is doing, as its comm sees it, and the one-line "wait-for picture"
// every comm prints when ranks can no longer move:
//   rank 2 waits in recv from rank 1 tag 7; rank 1 has finished; ranks 0 and 3 wait in all_gather
//   #4
// Any comm (threads, device-sim, processes) can describe its ranks with RankActivity and print
// the same picture.
#include <cstdint>
#include <string>
#include <vector>

namespace cplab::sim {

struct RankActivity {
  enum class Kind : std::uint8_t {
    computing,   // outside the comm: it may still call it
    busy,        // inside the comm but not waiting for another rank (a delay, a copy)
    collective,  // waiting for the other ranks in collective `call` number `seq`
    recv,        // waiting for a message from `peer` with `tag`
    send,        // waiting for `peer` to take its message with `tag`
    finished,    // left the group normally
    failed,      // left the group with an error
  };
  Kind kind = Kind::computing;
  std::string call;  // collective: its name; busy, computing: what it is doing ("" = running)
  std::int64_t seq = -1;
  int peer = -1;
  int tag = 0;

  // Waiting for another rank: only such ranks can be stuck in a deadlock.
  bool waiting() const;
  // Left the group: it will never send or join anything again.
  bool left() const { return kind == Kind::finished || kind == Kind::failed; }
};

// The call a waiting rank is in, as messages name it: "all_gather #3", "recv from rank 1 (tag 7)",
// "send to rank 1 (tag 7)"; for other ranks what doing() says.
std::string waited_call(const RankActivity& activity);

// A short description of one rank's activity, as error messages quote it after its rank:
// "running", "in all_gather #3", "in recv from rank 1 (tag 7)", "returned", "failed".
std::string doing(const RankActivity& activity);

// The wait-for picture of a whole group (element r describes rank r): ranks in the same state
// are listed together, groups in order of their lowest rank.
std::string wait_for_picture(const std::vector<RankActivity>& ranks);

}  // namespace cplab::sim
