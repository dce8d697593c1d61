// The seed's introductory example (Synkhronos manual, "Introductory Example"):
//   z = mean(x · y) over rows, x (100 x 10) scattered over the ranks, y (10) broadcast.
// The distributed result must equal the one-process result (as_local).
#include <cmath>
#include <cstdio>
#include <random>

#include "synk/plugins/examples/example_options.h"

int main(int argc, char** argv) {
  synk::ForkOptions options = synk::examples::parseForkOptions(argc, argv, "intro_example");
  try {
    synk::Session session = synk::fork(options);
    std::printf("synk: %d ranks on the %s backend, master rank %d\n", session.size(),
                session.backend().c_str(), session.masterRank());
    synk::Model model = session.load(synk::pluginPath("synk_example_intro"));
    synk::Function f = session.function(model, "z", {.broadcast = {"y"}});
    session.distribute();

    std::mt19937 rng(1234);  // fixed, so every run (and backend) prints the same data
    std::normal_distribution<float> normal;
    synk::Array x_dat(synk::DType::Float32, {100, 10});
    synk::Array y_dat(synk::DType::Float32, {10});
    for (int64_t i = 0; i < x_dat.size(); ++i)
      x_dat.as<float>()[i] = normal(rng);
    for (int64_t i = 0; i < y_dat.size(); ++i)
      y_dat.as<float>()[i] = normal(rng);
    synk::Data x_synk = session.data(x_dat, {.name = "x"});
    synk::Data y_synk = session.data(y_dat, {.name = "y"});

    const float r_local = f.asLocal({x_dat, y_dat}).at(0).as<float>()[0];
    const float r = f({x_synk, y_synk}).at(0).as<float>()[0];
    std::printf("z (as_local, one process): %.6f\n", r_local);
    std::printf("z (synk, %d ranks):        %.6f\n", session.size(), r);
    if (std::fabs(r - r_local) > 1e-5f * std::max(1.0f, std::fabs(r_local))) {
      std::printf("MISMATCH\n");
      return 1;
    }
    std::printf("All assertions passed.\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "intro_example: %s\n", e.what());
    return 1;
  }
}
