#pragma once
// What the collective benchmarks of every comm (ThreadComm, device-sim, NCCL) share: the
// self-locating elements each rank sends, the element every rank must then hold, and algbw /
// busbw as nccl-tests defines them. Host-only arithmetic, so the CPU tests check it on ThreadComm.
#include <cstddef>
#include <string>

namespace cplab::bench {

enum class Collective { all_gather, reduce_scatter, all_to_all, ring_exchange };

// "all_gather", "reduce_scatter", "all_to_all", "ring_exchange".
inline const char* collective_name(Collective what) {
  switch (what) {
    case Collective::all_gather:
      return "all_gather";
    case Collective::reduce_scatter:
      return "reduce_scatter";
    case Collective::all_to_all:
      return "all_to_all";
    case Collective::ring_exchange:
      return "ring_exchange";
  }
  return "?";
}

// Element i of rank `rank`'s send buffer: unique per rank and offset, and sums of C of them stay
// exact in float (C <= 15).
inline float collective_element(int rank, std::size_t i) {
  return static_cast<float>(rank + 1 + 16 * (i % 4096));
}

// f32 elements each rank sends and receives, `count` being one rank block.
inline std::size_t send_elements(Collective what, std::size_t count, int cp) {
  return what == Collective::all_gather || what == Collective::ring_exchange
             ? count
             : count * static_cast<std::size_t>(cp);
}
inline std::size_t recv_elements(Collective what, std::size_t count, int cp) {
  return what == Collective::reduce_scatter || what == Collective::ring_exchange
             ? count
             : count * static_cast<std::size_t>(cp);
}

// What rank r must hold at element i of its receive buffer. The ring exchange sends to r + 1 and
// receives from r - 1.
inline float expected_element(Collective what, int r, std::size_t i, std::size_t count, int cp) {
  switch (what) {
    case Collective::all_gather:
      return collective_element(static_cast<int>(i / count), i % count);
    case Collective::reduce_scatter: {
      float sum = 0.0f;
      for (int p = 0; p < cp; ++p)
        sum += collective_element(p, static_cast<std::size_t>(r) * count + i);
      return sum;
    }
    case Collective::all_to_all:
      return collective_element(static_cast<int>(i / count),
                                static_cast<std::size_t>(r) * count + i % count);
    case Collective::ring_exchange:
      return collective_element((r + cp - 1) % cp, i);
  }
  return 0.0f;
}

// nccl-tests' S (bytes) of one operation: the gathered bytes for all-gather, the bytes each rank
// sends for reduce-scatter and all-to-all, the bytes each rank sends for the ring exchange.
inline double algbw_bytes(Collective what, std::size_t count, int cp) {
  const double block = static_cast<double>(count) * 4.0;
  return what == Collective::ring_exchange ? block : block * cp;
}
// busbw = algbw · this: (n - 1) / n for all-gather, reduce-scatter and all-to-all, 1 for a
// point-to-point exchange.
inline double bus_factor(Collective what, int cp) {
  return what == Collective::ring_exchange ? 1.0 : static_cast<double>(cp - 1) / cp;
}

// Every rank's receive buffer against expected_element: "" when right, else which rank and
// element are wrong. recv(r) returns rank r's buffer (host memory).
template <typename RecvOf>
std::string check_collective(Collective what, std::size_t count, int cp, RecvOf&& recv) {
  for (int r = 0; r < cp; ++r) {
    const float* got = recv(r);
    const std::size_t n = recv_elements(what, count, cp);
    for (std::size_t i = 0; i < n; ++i) {
      if (got[i] != expected_element(what, r, i, count, cp))
        return "rank " + std::to_string(r) + " received a wrong element at " + std::to_string(i);
    }
  }
  return "";
}

}  // namespace cplab::bench
