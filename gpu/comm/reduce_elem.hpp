#pragma once
// DType and ReduceOp of the Comm interface onto the device reduction's types
// (gpu/kernels/reduce_elementwise).
#include "comm/comm.hpp"
#include "gpu/kernels/reduce_elementwise.hpp"

namespace cplab::gpu {

// Throws for dtypes a device reduction does not support, listing those it does; `what` names the
// call.
ReduceElem reduce_elem(DType dtype, const char* what);
inline ReduceKind reduce_kind(ReduceOp op) {
  return op == ReduceOp::sum ? ReduceKind::sum : ReduceKind::max;
}

}  // namespace cplab::gpu
