#pragma once
// Text helpers every stage shares.
#include <string_view>

namespace synk::harness {

// `text` without the spaces, tabs and line ends around it.
std::string_view trim(std::string_view text);

}  // namespace synk::harness
