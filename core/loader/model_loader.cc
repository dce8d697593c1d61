#include "synk/core/model_loader.h"

#include "synk/core/error.h"

namespace synk {

void* CallFrame::output(size_t index, int ndim, const int64_t* dims) {
  if (index >= declared_->size()) {
    throw InvalidArgument(
        str("allocate_output(", index, "): the function has ", declared_->size(), " outputs"));
  }
  const TensorSpec& out = (*declared_)[index];
  if (allocated_[index]) {
    throw InvalidArgument(str("output '", out.name, "' allocated twice"));
  }
  if (ndim != out.ndim) {
    throw InvalidArgument(str("output '", out.name, "' is declared with ", out.ndim,
                              " dimensions; allocate_output asked for ", ndim));
  }
  if (ndim > 0 && !dims) throw InvalidArgument(str("output '", out.name, "': shape is NULL"));
  Shape shape(dims, dims + ndim);
  for (int64_t dim : shape) {
    if (dim < 0) {
      throw InvalidArgument(
          str("output '", out.name, "': negative dimension in ", shapeString(shape)));
    }
  }
  void* data = allocate(static_cast<int>(index), shape);
  allocated_[index] = 1;
  return data;
}

}  // namespace synk
