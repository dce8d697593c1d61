#include "synk/core/process/control/exchange.h"

#include <cstring>

#include "synk/core/error.h"

namespace synk {

ExchangeResult exchange(Barrier& barrier, Waiter& waiter, bool ok, const ByteWriter& mine) {
  SYNK_CHECK(mine.size() + sizeof(uint64_t) <= kExchangeBytes, "exchange of ", mine.size(),
             " bytes exceeds the control block's ", kExchangeBytes);
  const uint64_t size = mine.size();
  std::byte* out = barrier.outbox(sizeof size + size);
  std::memcpy(out, &size, sizeof size);
  if (size) std::memcpy(out + sizeof size, mine.data(), size);
  ExchangeResult result;
  result.all_ok = barrier.arrive(waiter, BarrierSite::Exchange, ok);
  for (int r = 0; r < barrier.size(); ++r) {
    const std::byte* in = barrier.exchangeOf(r);
    uint64_t n = 0;
    std::memcpy(&n, in, sizeof n);
    result.from.emplace_back(in + sizeof n, n);
  }
  return result;
}

}  // namespace synk
