#pragma once
// Command-line options shared by the example programs (Boost.Program_options).
#include <boost/program_options.hpp>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "synk/synk.h"

namespace synk::examples {

// Parses --backend, --ranks, --master-rank, --devices; prints help and exits on --help or bad
// input.
inline ForkOptions parseForkOptions(int argc, char** argv, const char* what) {
  namespace po = boost::program_options;
  ForkOptions options;
  options.n_parallel = 2;
  std::string devices;
  po::options_description desc(what);
  desc.add_options()("help,h", "show this help")(
      "backend", po::value(&options.backend)->default_value("cpu"), "cpu or cuda")(
      "ranks", po::value(&options.n_parallel)->default_value(2), "number of ranks")(
      "master-rank", po::value(&options.master_rank)->default_value(0), "rank of the master")(
      "devices", po::value(&devices),
      "device of each rank, comma-separated (cuda: 0,0 puts two ranks on GPU 0)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "error: " << e.what() << "\n" << desc;
    std::exit(2);
  }
  if (vm.count("help")) {
    std::cout << desc;
    std::exit(0);
  }
  std::stringstream list(devices);
  for (std::string item; std::getline(list, item, ',');) {
    try {
      size_t used = 0;
      options.devices.push_back(std::stoi(item, &used));
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      std::cerr << "error: --devices: '" << item << "' is not a device number\n" << desc;
      std::exit(2);
    }
  }
  return options;
}

}  // namespace synk::examples
