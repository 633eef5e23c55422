#include "gpu/comm/reduce_elem.hpp"

namespace cplab::gpu {

ReduceElem reduce_elem(DType dtype, const char* what) {
  switch (dtype) {
    case DType::f32:
      return ReduceElem::f32;
    case DType::bf16:
      return ReduceElem::bf16;
    case DType::f16:
      return ReduceElem::f16;
    case DType::i64:
      return ReduceElem::i64;
    case DType::i32:
      return ReduceElem::i32;
    case DType::u8:
      return ReduceElem::u8;
    case DType::b8:
      break;
  }
  CPLAB_FAIL("{}: cannot reduce {} on the device; supported: f32, bf16, f16, i64, i32, u8", what,
             dtype_name(dtype));
}

}  // namespace cplab::gpu
