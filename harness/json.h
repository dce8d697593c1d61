#pragma once
// The JSON synk-bench writes (exports, a point's axes) and the one shape it reads back: a flat
// object of strings. Nothing more is needed, so no JSON library is.
#include <map>
#include <string>
#include <string_view>

namespace synk::harness {

// "a\"b" -> "\"a\\\"b\"" (RFC 8259 escaping; bytes >= 0x80 pass through as UTF-8).
std::string jsonString(std::string_view text);
// A number with 10 significant digits, or null when it is not finite (JSON has no NaN).
std::string jsonNumber(double value);
// {"name":"value",...} in key order.
std::string toJson(const std::map<std::string, std::string>& object);
// The inverse of toJson; throws BadInput on anything else.
std::map<std::string, std::string> parseFlatJson(std::string_view text);

}  // namespace synk::harness
