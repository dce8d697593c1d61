// The seed's shared-variable example (Synkhronos manual, "Theano Shared Variable Example"), on
// 2 ranks: s = [1, 1]; f updates s <- sum over rows of (x * s); x = [[1,1],[2,2],[3,3],[4,4]].
#include <cstdio>

#include "synk/plugins/examples/example_options.h"

namespace {
void show(const char* what, const synk::Array& value) {
  std::printf("%s:\n %s\n", what, value.toString().c_str());
}
}  // namespace

int main(int argc, char** argv) {
  synk::ForkOptions options =
      synk::examples::parseForkOptions(argc, argv, "shared_variable_example");
  try {
    synk::Session session = synk::fork(options);
    synk::Model model = session.load(synk::pluginPath("synk_example_shared_variable"));
    synk::Function f = session.function(model, "f");
    synk::Variable s = model.variable("s");
    session.distribute();

    const synk::Array x_dat = synk::Array::of<float>({4, 2}, {1, 1, 2, 2, 3, 3, 4, 4});
    const synk::Array s_init = synk::Array::vector<float>({1, 1});
    synk::Data x = session.data(x_dat, {.name = "x"});

    show("s initial", s.getValue());
    f.asLocal({x_dat});
    show("s after a one-process (as_local) call", s.getValue());

    s.setValue(s_init);
    f({x});
    show("local s after reset and synk call", s.getValue());
    show("gathered s", session.gather({s}, 1).at(0));
    session.reduce({s}, synk::ReduceOp::Sum);
    show("local s after in-place reduce", s.getValue());
    show("gathered s after reduce", session.gather({s}, 1).at(0));

    session.broadcast({s}, {s_init});
    f({x});
    session.allReduce({s}, synk::ReduceOp::Sum);
    show("gathered s after reset broadcast, synk call, and all-reduce",
         session.gather({s}, 1).at(0));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shared_variable_example: %s\n", e.what());
    return 1;
  }
}
