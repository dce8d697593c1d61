// The one Catch2 (v2, as Debian ships it) main of every test binary.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
