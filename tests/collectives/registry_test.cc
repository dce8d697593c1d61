// The default registry and the cpu backend's factory and objects.
#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "synk/collectives/cpu/cpu_backend.h"
#include "synk/collectives/registry.h"
#include "synk/collectives/shm/shm_communicator.h"
#include "synk/core/error.h"
#include "synk/core/session.h"
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
#else
namespace {
// Whether a library whose file name contains `name` is mapped into this process.
bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(name) != std::string::npos) return true;
  }
  return false;
}
}  // namespace

TEST_CASE("the cuda backend's library is loaded only when a program asks for cuda", "[coll]") {
  unsetenv("SYNK_PLUGIN_PATH");
  // This program links no CUDA library: the cpu backend needs none.
  const BackendRegistry registry = makeDefaultRegistry();
  CHECK_FALSE(mapped("libcudart"));
  CHECK_FALSE(mapped("libsynk_cuda_backend"));
  BackendFactory* cuda = registry.find("cuda");
  REQUIRE(cuda != nullptr);
  std::string why;
  const bool viable = cuda->isViable(&why);  // loads it: viable where a GPU is
  CHECK(mapped("libsynk_cuda_backend.so"));
  CHECK(mapped("libcudart"));
  if (!viable) {
    CHECK_THAT(
        why, !Catch::Matchers::Contains("cannot load") && !Catch::Matchers::Contains("not found"));
  }
}

TEST_CASE("a file that is not synk's cuda backend is refused, saying why", "[coll]") {
  namespace fs = std::filesystem;
  const fs::path folder = fs::temp_directory_path() / str("synk-registry-", getpid());
  fs::create_directories(folder);
  fs::create_symlink(fs::path(SYNK_PLUGIN_DIR) / "libsynk_example_intro.so",
                     folder / "libsynk_cuda_backend.so");
  setenv("SYNK_PLUGIN_PATH", folder.c_str(), 1);
  const BackendRegistry registry = makeDefaultRegistry();
  std::string why;
  CHECK_FALSE(registry.find("cuda")->isViable(&why));
  CHECK_THAT(why, Catch::Matchers::Contains((folder / "libsynk_cuda_backend.so").string()) &&
                      Catch::Matchers::Contains("not synk's cuda backend"));
  unsetenv("SYNK_PLUGIN_PATH");
  fs::remove_all(folder);
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

// The cpu backend behind another name, whose create() refuses unless this process handed it the
// program's link first (createBackend, core/backend.h): a rank that skipped the link would leave
// a backend module's logs and phases unlinked without a sound.
class LinkCheckingFactory : public BackendFactory {
 public:
  explicit LinkCheckingFactory(std::string name)
      : name_(std::move(name)), cpu_(makeCpuBackendFactory()) {}
  std::string name() const override { return name_; }
  bool isViable(std::string* why) const override { return cpu_->isViable(why); }
  int deviceCount() const override { return cpu_->deviceCount(); }
  bool bindsDevices() const override { return false; }
  std::unique_ptr<Backend> create(RankEnvironment& env) override {
    if (!linked_) throw std::runtime_error("create() before linkHost() in this rank");
    return cpu_->create(env);
  }
  void linkHost(const SynkHostLink& link) override {
    linked_ = true;  // in this process: every rank is a process of its own
    cpu_->linkHost(link);
  }

 private:
  std::string name_;
  std::unique_ptr<BackendFactory> cpu_;
  bool linked_ = false;
};

TEST_CASE("every rank links the program's host before it creates its backend", "[coll]") {
  SECTION("the test fixture's ranks") {
    LinkCheckingFactory factory("linked-cpu");
    runOnRanks(factory, 2, [](RankContext& ctx) {
      if (!ctx.device().isHost()) throw std::runtime_error("not the cpu backend");
    });
  }
  SECTION("a session's ranks") {
    BackendRegistry registry;
    registry.add(std::make_unique<LinkCheckingFactory>("linked-cpu"));
    ForkOptions options;
    options.backend = "linked-cpu";
    options.n_parallel = 2;
    Session session = forkSession(options, std::move(registry), nullptr);
    CHECK(session.size() == 2);
    session.close();
  }
}

}  // namespace
}  // namespace synk::test
