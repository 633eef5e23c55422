// Buffers a rank holds during an attention schedule and the exchanges that move them. Every
// message is the buffer's pieces (i64 triples) followed by its values in the wire dtype, sent as
// bytes: the receiver learns whose tokens it got from the message itself.
#include "sim/attention/held_buffer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/error.hpp"

namespace cplab::sim {
namespace {

std::size_t encoded_size(const HeldBuffer& b, DType wire) {
  return sizeof(std::int64_t) * (1 + 3 * b.pieces.size()) + b.data.size() * dtype_size(wire);
}

void encode(const HeldBuffer& b, DType wire, std::byte* out) {
  std::vector<std::int64_t> header{static_cast<std::int64_t>(b.pieces.size())};
  for (const BufferPiece& p : b.pieces) {
    header.insert(header.end(), {p.rank, p.local.begin, p.local.end});
  }
  std::memcpy(out, header.data(), header.size() * sizeof(std::int64_t));
  out += header.size() * sizeof(std::int64_t);
  const Tensor values =
      Tensor::from<float>({static_cast<std::int64_t>(b.data.size())}, b.data).to(wire);
  std::memcpy(out, values.raw(), values.nbytes());
}

// Reads a message into `into`, whose shape (tokens, heads, d, piece count) the sender shares.
void decode(const std::byte* in, DType wire, HeldBuffer& into) {
  std::int64_t pieces = 0;
  std::memcpy(&pieces, in, sizeof pieces);
  CPLAB_CHECK(pieces == static_cast<std::int64_t>(into.pieces.size()),
              "attention exchange: a message of {} pieces where {} were expected", pieces,
              into.pieces.size());
  std::vector<std::int64_t> header(static_cast<std::size_t>(3 * pieces));
  std::memcpy(header.data(), in + sizeof pieces, header.size() * sizeof(std::int64_t));
  for (std::size_t i = 0; i < into.pieces.size(); ++i) {
    into.pieces[i] = {header[3 * i], {header[3 * i + 1], header[3 * i + 2]}};
  }
  in += sizeof(std::int64_t) * (1 + header.size());
  Tensor values(wire, {static_cast<std::int64_t>(into.data.size())});
  std::memcpy(values.raw(), in, values.nbytes());
  const Tensor f = values.to(DType::f32);
  std::copy(f.data<float>().begin(), f.data<float>().end(), into.data.begin());
}

// The buffer's tokens with only global heads `heads`, in that order.
HeldBuffer with_heads(const HeldBuffer& b, const std::vector<std::int64_t>& heads) {
  HeldBuffer out{.pieces = b.pieces, .heads = heads, .tokens = b.tokens, .d = b.d, .data = {}};
  out.data.resize(static_cast<std::size_t>(b.tokens * out.stride()));
  for (std::size_t j = 0; j < heads.size(); ++j) {
    const std::int64_t from = b.head_index(heads[j]);
    CPLAB_CHECK(from >= 0, "attention exchange: head {} is not among the {} heads held", heads[j],
                b.width());
    for (std::int64_t t = 0; t < b.tokens; ++t)
      std::copy_n(b.at(t, from), b.d, out.at(t, static_cast<std::int64_t>(j)));
  }
  return out;
}

// Tokens [begin, begin + n) of b.
HeldBuffer token_range(const HeldBuffer& b, std::int64_t begin, std::int64_t n,
                       std::vector<BufferPiece> pieces) {
  HeldBuffer out{.pieces = std::move(pieces), .heads = b.heads, .tokens = n, .d = b.d, .data = {}};
  const auto from = b.data.begin() + begin * b.stride();
  out.data.assign(from, from + n * b.stride());
  return out;
}

std::int64_t member_index(const std::vector<int>& group, int rank) {
  const auto it = std::find(group.begin(), group.end(), rank);
  CPLAB_CHECK(it != group.end(), "attention exchange: rank {} is not in its own group", rank);
  return it - group.begin();
}

// One block per member: encoded[u] goes to group[u]; returns what each member sent this rank.
std::vector<std::vector<std::byte>> exchange_blocks(Comm& comm, const std::vector<int>& group,
                                                    const std::vector<std::vector<std::byte>>& out,
                                                    std::size_t in_size) {
  const auto n = static_cast<std::int64_t>(group.size());
  const std::int64_t me = member_index(group, comm.rank());
  std::vector<std::vector<std::byte>> in(group.size(), std::vector<std::byte>(in_size));
  if (n == comm.size()) {
    const std::size_t block = out[0].size();
    for (const auto& o : out)
      CPLAB_CHECK(o.size() == block, "attention all_to_all: blocks of unequal size");
    CPLAB_CHECK(in_size == block, "attention all_to_all: blocks of {} bytes out, {} expected in",
                block, in_size);
    std::vector<std::byte> send(block * group.size()), recv(block * group.size());
    for (std::size_t u = 0; u < group.size(); ++u)
      std::copy(out[u].begin(), out[u].end(),
                send.begin() + static_cast<std::ptrdiff_t>(u * block));
    comm.all_to_all(bytes_of(send), bytes_of(recv), block, DType::u8);
    for (std::size_t u = 0; u < group.size(); ++u) {
      const auto from = recv.begin() + static_cast<std::ptrdiff_t>(u * block);
      in[u].assign(from, from + static_cast<std::ptrdiff_t>(block));
    }
    return in;
  }
  in[static_cast<std::size_t>(me)] = out[static_cast<std::size_t>(me)];
  for (std::int64_t o = 1; o < n; ++o) {
    const auto to = static_cast<std::size_t>((me + o) % n);
    const auto from = static_cast<std::size_t>((me - o + n) % n);
    comm.send_recv(bytes_of(out[to]), out[to].size(), group[to], bytes_of(in[from]), in_size,
                   group[from], DType::u8, static_cast<int>(0x7a00 + o));
  }
  return in;
}

}  // namespace

std::int64_t HeldBuffer::head_index(std::int64_t h) const {
  const auto it = std::find(heads.begin(), heads.end(), h);
  return it == heads.end() ? -1 : it - heads.begin();
}

HeldBuffer HeldBuffer::zeros_like() const {
  HeldBuffer out{.pieces = pieces, .heads = heads, .tokens = tokens, .d = d, .data = {}};
  out.data.assign(data.size(), 0.0f);
  return out;
}

HeldBuffer own_buffer(const Tensor& t, std::int64_t b, std::int64_t rank) {
  const std::int64_t len = t.size(1), heads = t.size(2), d = t.size(3);
  HeldBuffer out{.pieces = {{rank, {0, len}}}, .heads = {}, .tokens = len, .d = d, .data = {}};
  for (std::int64_t h = 0; h < heads; ++h) out.heads.push_back(h);
  const std::int64_t n = len * heads * d;
  out.data.resize(static_cast<std::size_t>(n));
  t.read(b * n, out.data);  // row b only
  return out;
}

void store_row(Tensor& t, std::int64_t b, const HeldBuffer& held) {
  const std::int64_t n = held.tokens * held.stride();
  CPLAB_CHECK(t.numel() >= (b + 1) * n, "attention: a row of {} values for {}", n, tensor_brief(t));
  t.write(b * n, held.data);
}

std::string pieces_str(const std::vector<BufferPiece>& pieces) {
  std::string s;
  for (const BufferPiece& p : pieces) {
    if (!s.empty()) s += " + ";
    s += fmt::format("rank {} local [{}, {})", p.rank, p.local.begin, p.local.end);
  }
  return s.empty() ? "nothing" : s;
}

void pass_buffers(Comm& comm, const std::vector<HeldBuffer*>& bufs, const std::vector<DType>& wire,
                  int to, int from, int tag) {
  std::size_t size = 0;
  for (std::size_t i = 0; i < bufs.size(); ++i) size += encoded_size(*bufs[i], wire[i]);
  std::vector<std::byte> send(size), recv(size);
  std::size_t at = 0;
  for (std::size_t i = 0; i < bufs.size(); ++i) {
    encode(*bufs[i], wire[i], send.data() + at);
    at += encoded_size(*bufs[i], wire[i]);
  }
  comm.send_recv(bytes_of(send), size, to, bytes_of(recv), size, from, DType::u8, tag);
  at = 0;
  for (std::size_t i = 0; i < bufs.size(); ++i) {
    decode(recv.data() + at, wire[i], *bufs[i]);
    at += encoded_size(*bufs[i], wire[i]);
  }
}

HeldBuffer gather_buffers(Comm& comm, const HeldBuffer& mine, DType wire) {
  const std::size_t block = encoded_size(mine, wire);
  std::vector<std::byte> send(block), recv(block * static_cast<std::size_t>(comm.size()));
  encode(mine, wire, send.data());
  comm.all_gather(bytes_of(send), bytes_of(recv), block, DType::u8);
  HeldBuffer out{.pieces = {}, .heads = mine.heads, .tokens = 0, .d = mine.d, .data = {}};
  for (int r = 0; r < comm.size(); ++r) {
    HeldBuffer part = mine;
    decode(recv.data() + static_cast<std::size_t>(r) * block, wire, part);
    out.pieces.insert(out.pieces.end(), part.pieces.begin(), part.pieces.end());
    out.data.insert(out.data.end(), part.data.begin(), part.data.end());
    out.tokens += part.tokens;
  }
  return out;
}

HeldBuffer reduce_to_owners(Comm& comm, const HeldBuffer& gathered, std::int64_t rank, DType wire) {
  const std::int64_t len = gathered.tokens / comm.size(), count = len * gathered.stride();
  HeldBuffer out = token_range(gathered, 0, len, {{rank, {0, len}}});
  if (wire == DType::f32) {  // the accumulators as they are: no conversion copies
    comm.reduce_scatter(bytes_of(gathered.data), bytes_of(out.data),
                        static_cast<std::size_t>(count), DType::f32, ReduceOp::sum);
    return out;
  }
  const Tensor sent =
      Tensor::from<float>({static_cast<std::int64_t>(gathered.data.size())}, gathered.data)
          .to(wire);
  Tensor mine(wire, {count});
  comm.reduce_scatter(bytes_of(sent), bytes_of(mine), static_cast<std::size_t>(count), wire,
                      ReduceOp::sum);
  const Tensor summed = mine.to(DType::f32);
  std::memcpy(out.data.data(), summed.raw(), summed.nbytes());
  return out;
}

HeldBuffer group_all_to_all(Comm& comm, const std::vector<int>& group, const HeldBuffer& mine,
                            const std::vector<std::vector<std::int64_t>>& heads_of, DType wire) {
  const std::int64_t me = member_index(group, comm.rank());
  std::vector<std::vector<std::byte>> out;
  for (std::size_t u = 0; u < group.size(); ++u) {
    const HeldBuffer part = with_heads(mine, heads_of[u]);
    out.emplace_back(encoded_size(part, wire));
    encode(part, wire, out.back().data());
  }
  HeldBuffer shape = with_heads(mine, heads_of[static_cast<std::size_t>(me)]);
  const auto in = exchange_blocks(comm, group, out, encoded_size(shape, wire));
  HeldBuffer held{.pieces = {}, .heads = shape.heads, .tokens = 0, .d = mine.d, .data = {}};
  for (const auto& block : in) {
    decode(block.data(), wire, shape);
    held.pieces.insert(held.pieces.end(), shape.pieces.begin(), shape.pieces.end());
    held.data.insert(held.data.end(), shape.data.begin(), shape.data.end());
    held.tokens += shape.tokens;
  }
  return held;
}

HeldBuffer group_all_to_all_back(Comm& comm, const std::vector<int>& group, const HeldBuffer& held,
                                 const std::vector<std::vector<std::int64_t>>& heads_of,
                                 std::int64_t heads, std::int64_t my_tokens, DType wire) {
  const std::int64_t me = member_index(group, comm.rank());
  const auto n = static_cast<std::int64_t>(group.size());
  CPLAB_CHECK(held.tokens == n * my_tokens,
              "attention exchange back: {} tokens held for a group of {} × {}", held.tokens, n,
              my_tokens);
  std::vector<std::vector<std::byte>> out;
  for (std::int64_t u = 0; u < n; ++u) {
    const HeldBuffer part =
        token_range(held, u * my_tokens, my_tokens, {held.pieces[static_cast<std::size_t>(u)]});
    out.emplace_back(encoded_size(part, wire));
    encode(part, wire, out.back().data());
  }
  const auto in = exchange_blocks(comm, group, out, out[static_cast<std::size_t>(me)].size());
  HeldBuffer mine{.pieces = {{comm.rank(), {0, my_tokens}}},
                  .heads = {},
                  .tokens = my_tokens,
                  .d = held.d,
                  .data = {}};
  for (std::int64_t h = 0; h < heads; ++h) mine.heads.push_back(h);
  mine.data.assign(static_cast<std::size_t>(my_tokens * mine.stride()), 0.0f);
  for (std::int64_t u = 0; u < n; ++u) {
    HeldBuffer part{.pieces = {{}},
                    .heads = heads_of[static_cast<std::size_t>(u)],
                    .tokens = my_tokens,
                    .d = held.d,
                    .data = {}};
    part.data.resize(static_cast<std::size_t>(my_tokens * part.stride()));
    decode(in[static_cast<std::size_t>(u)].data(), wire, part);
    CPLAB_CHECK(part.pieces[0] == mine.pieces[0],
                "attention exchange back: rank {} got {} from group member {}, expected its own",
                comm.rank(), pieces_str(part.pieces), group[static_cast<std::size_t>(u)]);
    for (std::int64_t t = 0; t < my_tokens; ++t) {
      for (std::int64_t j = 0; j < part.width(); ++j) {
        float* to = mine.at(t, part.heads[static_cast<std::size_t>(j)]);
        const float* from = part.at(t, j);
        for (std::int64_t e = 0; e < held.d; ++e) to[e] += from[e];
      }
    }
  }
  return mine;
}

}  // namespace cplab::sim
