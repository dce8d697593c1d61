#include "core/communicator.h"

#include "core/error.h"

namespace synk {

void checkRoot(int root, int n_ranks, std::string_view what) {
  if (root < 0 || root >= n_ranks) {
    throw InvalidArgument(str(what, ": root ", root, " is not a rank of ", n_ranks));
  }
}

void partOffsets(const std::vector<size_t>& counts, int n_ranks, std::string_view what,
                 std::vector<size_t>& offsets) {
  if (static_cast<int>(counts.size()) != n_ranks) {
    throw InvalidArgument(str(what, ": ", counts.size(), " counts given for ", n_ranks, " ranks"));
  }
  offsets.assign(1, 0);
  for (const size_t count : counts)
    offsets.push_back(offsets.back() + count);
}

}  // namespace synk
