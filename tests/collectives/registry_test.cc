// The default registry and the cpu backend's factory and objects.
#include <catch2/catch.hpp>
#include <stdexcept>

#include "collectives/registry.h"
#include "collectives/shm/shm_communicator.h"
#include "core/error.h"
#include "tests/support/rank_fixture.h"

namespace synk::test {
namespace {

TEST_CASE("the default registry lists cpu and cuda", "[coll]") {
  const BackendRegistry registry = makeDefaultRegistry();
  CHECK(registry.names() == std::vector<std::string>{"cpu", "cuda"});
  CHECK(registry.find("tpu") == nullptr);
  BackendFactory* cpu = registry.find("cpu");
  REQUIRE(cpu != nullptr);
  std::string why;
  CHECK(cpu->isViable(&why));
  CHECK(cpu->deviceCount() >= 1);
}

#if !SYNK_TEST_HAVE_CUDA
TEST_CASE("without CUDA the cuda backend is listed but says why it cannot run", "[coll]") {
  const BackendRegistry registry = makeDefaultRegistry();
  BackendFactory* cuda = registry.find("cuda");
  REQUIRE(cuda != nullptr);
  std::string why;
  CHECK_FALSE(cuda->isViable(&why));
  CHECK_THAT(why, Catch::Matchers::Contains("built without CUDA"));
  CHECK(cuda->deviceCount() == 0);
}
#endif

TEST_CASE("the cpu backend is a host device with the shm communicator", "[coll]") {
  const BackendRegistry registry = makeDefaultRegistry();
  runOnRanks(*registry.find("cpu"), 2, [](RankContext& ctx) {
    Device& device = ctx.device();
    if (!device.isHost() || device.ordinal() != -1 || device.describe() != "cpu") {
      throw std::runtime_error(str("unexpected device ", device.describe()));
    }
    Communicator& native = ctx.backend.communicator(true);
    if (&native != &ctx.backend.communicator(false) || std::string(native.name()) != "shm") {
      throw std::runtime_error("cpu must use the shm communicator for both choices");
    }
    void* p = device.allocate(100);
    if (!ctx.heap.locate(p)) throw std::runtime_error("device memory is not in the heap");
    device.release(p);
  });
}

}  // namespace
}  // namespace synk::test
