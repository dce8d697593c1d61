#include "synk/harness/base/rng.h"

namespace synk::harness {

uint64_t Rng::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t Rng::below(uint64_t n) {
  // Rejects the top partial block of 2^64 so every residue is equally likely.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do {
    x = next();
  } while (x >= limit);
  return x % n;
}

double Rng::uniform() {
  return double(next() >> 11) * 0x1.0p-53;
}

}  // namespace synk::harness
