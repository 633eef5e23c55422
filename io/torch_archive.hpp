#pragma once
// The torch.save reading both readers of io/ share (torch_batch.cpp, torch_tensors.cpp; libtorch
// translation units only). A file is hostile until checked: libtorch 1.13 sizes a tensor's storage
// by the element count its pickle claims, not by the record the zip holds, so a tensor is read
// only after its view has been checked against the record it was loaded from.
#include <ATen/ATen.h>
#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <new>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/tensor.hpp"

namespace cplab::io::detail {

class CheckedArchive {
 public:
  // Parses a torch.save zip held in bytes, read from path (libtorch's exceptions on a malformed
  // one).
  CheckedArchive(const std::vector<char>& bytes, std::string path);
  CheckedArchive(const CheckedArchive&) = delete;
  CheckedArchive& operator=(const CheckedArchive&) = delete;

  const c10::IValue& root() const { return root_; }

  // cplab::Error unless value is a dense CPU tensor of at most 64 dimensions whose view (sizes,
  // strides, offset) lies inside the storage record it was loaded from, and whose dense copy (of
  // copy_itemsize bytes an element; 0: its own) fits what is left of the file's allowance: the
  // dense copies of all its tensors together hold at most the file's size plus
  // kMaxCopiedBytesBeyondFile. Judged from the declared sizes alone, before anything is copied;
  // each tensor is checked once, right before its copy is made.
  void check_readable(const at::Tensor& value, const std::string& key,
                      std::int64_t copy_itemsize = 0) const;

 private:
  std::map<const void*, std::uint64_t> records_;  // storage address → bytes its record holds
  std::string path_;
  std::uint64_t file_bytes_ = 0;
  mutable std::uint64_t copied_bytes_ = 0;  // the dense copies admitted so far
  c10::IValue root_;
};

// A tensor of the archive as cplab's Tensor, its view checked first (check_readable); a dtype
// cplab does not know is one line naming key. And a cplab Tensor as a libtorch one, to save.
Tensor from_at(const CheckedArchive& archive, const at::Tensor& value, const std::string& key);
at::Tensor to_at(const Tensor& t);

// The whole file at path; a cplab::Error "cannot open <kind>'path'" when it cannot be opened or
// read (kind: "batch file " or "").
std::vector<char> read_file_bytes(const std::string& path, const std::string& kind);

// libtorch's messages run over many lines (a C++ backtrace, "Exception raised from ..."): the
// first line is the message, the rest is detail for --verbose.
std::string first_line(const std::string& text);

// body(), with what libtorch and the standard library throw on a malformed file turned into one
// line about path (the full text kept for --verbose) and std::bad_alloc into a ResourceError.
template <class Body>
auto guard_torch_errors(const std::string& path, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const Error&) {
    throw;
  } catch (const c10::Error& e) {
    throw DetailedError(fmt::format("'{}' is not a torch.save file cplab can read: {}", path,
                                    first_line(e.what_without_backtrace())),
                        e.what());
  } catch (const std::bad_alloc&) {
    throw ResourceError(fmt::format("'{}': out of memory while reading it", path));
  } catch (const std::exception& e) {
    // libtorch's reader throws standard exceptions too (a bad zip, a truncated record).
    throw DetailedError(
        fmt::format("'{}' is not a torch.save file cplab can read: {}", path, first_line(e.what())),
        e.what());
  }
}

}  // namespace cplab::io::detail
