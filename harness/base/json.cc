#include "synk/harness/base/json.h"

#include <cmath>

#include "synk/harness/base/errors.h"

namespace synk::harness {

std::string toJson(const std::map<std::string, std::string>& object) {
  return Json(object).dump();
}

std::map<std::string, std::string> parseFlatJson(std::string_view text) {
  const Json parsed = parseJsonText(text, "stored axes");
  if (!parsed.is_object()) throw BadInput("stored axes: not a JSON object");
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : parsed.items()) {
    if (!value.is_string()) throw BadInput("stored axes: '" + key + "' is not a string");
    out[key] = value.get<std::string>();
  }
  return out;
}

Json parseJsonText(std::string_view text, const std::string& source) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    // e.byte is 1-based: the character where parsing stopped.
    size_t line = 1, column = 1;
    for (size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    // "[json.exception.parse_error.101] parse error at line 1, column 19: syntax error ...":
    // the place is said once, in front.
    std::string what = e.what();
    const size_t detail = what.find(": ", what.find("parse error"));
    if (detail != std::string::npos) what = what.substr(detail + 2);
    throw BadInput(source + ":" + std::to_string(line) + ":" + std::to_string(column) +
                   ": not JSON: " + what);
  }
}

OrderedJson jsonNumber(double value) {
  return std::isfinite(value) ? OrderedJson(value) : OrderedJson(nullptr);
}

}  // namespace synk::harness
