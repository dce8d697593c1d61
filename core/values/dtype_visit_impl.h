#pragma once
// Implementation of visitDType (included from core/dtype.h only).
#include "synk/core/error.h"

namespace synk {

template <typename Fn>
decltype(auto) visitDType(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::Float32:
      return fn(float{});
    case DType::Float64:
      return fn(double{});
    case DType::Int32:
      return fn(int32_t{});
    case DType::Int64:
      return fn(int64_t{});
    case DType::UInt8:
      return fn(uint8_t{});
    case DType::Float16:
      return fn(Half{});
    case DType::BFloat16:
      return fn(BFloat16{});
  }
  throw InvalidArgument(str("unknown dtype code ", static_cast<int>(dtype)));
}

}  // namespace synk
