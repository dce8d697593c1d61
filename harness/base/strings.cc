#include "synk/harness/base/strings.h"

namespace synk::harness {

std::string_view trim(std::string_view text) {
  const char* space = " \t\r\n";
  const size_t begin = text.find_first_not_of(space);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(space) - begin + 1);
}

}  // namespace synk::harness
