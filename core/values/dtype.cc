#include "synk/core/dtype.h"

#include "synk/core/error.h"

namespace synk {
namespace {

struct DTypeInfo {
  const char* name;
  size_t size;
  bool floating;
};

constexpr DTypeInfo kInfo[kNumDTypes] = {
    {"float32", 4, true}, {"float64", 8, true}, {"int32", 4, false},   {"int64", 8, false},
    {"uint8", 1, false},  {"float16", 2, true}, {"bfloat16", 2, true},
};

const DTypeInfo& info(DType dtype) {
  const auto raw = static_cast<int32_t>(dtype);
  if (!isValidDType(raw)) throw InvalidArgument(str("unknown dtype code ", raw));
  return kInfo[raw];
}

}  // namespace

bool isValidDType(int32_t raw) {
  return raw >= 0 && raw < kNumDTypes;
}
size_t dtypeSize(DType dtype) {
  return info(dtype).size;
}
const char* dtypeName(DType dtype) {
  return info(dtype).name;
}
bool isFloating(DType dtype) {
  return info(dtype).floating;
}

DType parseDType(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (name == kInfo[i].name) return static_cast<DType>(i);
  }
  std::string known;
  for (const auto& entry : kInfo)
    known += str(known.empty() ? "" : ", ", entry.name);
  throw InvalidArgument(str("unknown dtype '", name, "' (known: ", known, ")"));
}

bool canCastSafely(DType from, DType to) {
  using D = DType;
  if (from == to) return true;
  switch (from) {
    case D::UInt8:
      return to != D::UInt8;  // 0..255 is exact in every other type
    case D::Int32:
      return to == D::Int64 || to == D::Float64;
    case D::Int64:
      return to == D::Float64;
    case D::Float16:
    case D::BFloat16:
      return to == D::Float32 || to == D::Float64;
    case D::Float32:
      return to == D::Float64;
    case D::Float64:
      return false;
  }
  return false;
}

}  // namespace synk
