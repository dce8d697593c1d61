#pragma once
// synk-bench's JSON is nlohmann-json's (Debian's nlohmann-json3-dev): this header adds the one
// conversion the store needs (a point's axes, a flat object of strings) and the error every
// reader of outside JSON reports: the file and the line and column where it went wrong.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace synk::harness {

using Json = nlohmann::json;
// Objects in the order written: what synk-bench's documents (export, compare) use.
using OrderedJson = nlohmann::ordered_json;

// {"name":"value",...} in key order (the format the store has always written).
std::string toJson(const std::map<std::string, std::string>& object);
// The inverse; throws BadInput on anything else.
std::map<std::string, std::string> parseFlatJson(std::string_view text);

// Parses `text`; a syntax error throws BadInput "SOURCE:LINE:COLUMN: not JSON: what".
Json parseJsonText(std::string_view text, const std::string& source);

// A finite number, or null (JSON has no NaN or infinity).
OrderedJson jsonNumber(double value);

}  // namespace synk::harness
