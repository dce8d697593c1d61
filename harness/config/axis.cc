#include "synk/harness/config/axis.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "synk/harness/base/errors.h"
#include "synk/harness/base/strings.h"

namespace synk::harness {
namespace {

std::string quoted(std::string_view text) {
  return "'" + std::string(text) + "'";
}

// x * factor, or BadInput when it does not fit in int64.
int64_t multiply(int64_t x, int64_t factor, std::string_view item) {
  if (x != 0 && factor > std::numeric_limits<int64_t>::max() / (x < 0 ? -x : x)) {
    throw BadInput("value " + quoted(item) + " is too large");
  }
  return x * factor;
}

void append(std::vector<int64_t>& out, int64_t value, std::string_view text) {
  if (std::find(out.begin(), out.end(), value) != out.end()) return;
  if (out.size() >= kMaxAxisValues) {
    throw BadInput(quoted(text) + " expands to more than " + std::to_string(kMaxAxisValues) +
                   " values");
  }
  out.push_back(value);
}

int64_t parseValue(std::string_view text, Unit unit) {
  return unit == Unit::Bytes ? parseSize(text) : parseCount(text);
}

void expandRange(std::string_view item, std::vector<int64_t>& out, std::string_view text,
                 Unit unit) {
  const std::vector<std::string_view> parts = splitOn(item, ':');
  if (parts.size() < 2 || parts.size() > 3) {
    throw BadInput("range " + quoted(item) + " must be first:last or first:last:step");
  }
  const int64_t first = parseValue(parts[0], unit), last = parseValue(parts[1], unit);
  if (last < first) throw BadInput("range " + quoted(item) + " ends before it starts");
  const std::string_view step = parts.size() == 3 ? trim(parts[2]) : std::string_view("1");
  int64_t factor = 0, increment = 0;
  if (step == "pow2") {
    if (first <= 0 || (first & (first - 1)) != 0) {
      throw BadInput("range " + quoted(item) + ": pow2 needs a power of two to start from");
    }
    factor = 2;
  } else if (!step.empty() && (step[0] == 'x' || step[0] == '*')) {
    factor = parseCount(step.substr(1));
    if (factor < 2) throw BadInput("range " + quoted(item) + ": the factor must be at least 2");
    if (first <= 0) throw BadInput("range " + quoted(item) + ": a geometric range starts above 0");
  } else {
    increment = parseValue(step, unit);
    if (increment < 1) throw BadInput("range " + quoted(item) + ": the step must be at least 1");
  }
  for (int64_t v = first; v <= last;) {
    append(out, v, text);
    if (factor != 0) {
      if (v > last / factor) break;
      v *= factor;
    } else {
      if (v > last - increment) break;
      v += increment;
    }
  }
}

}  // namespace

std::vector<std::string_view> splitOn(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t at = 0;
  while (true) {
    const size_t next = text.find(separator, at);
    parts.push_back(trim(text.substr(at, next == std::string_view::npos ? next : next - at)));
    if (next == std::string_view::npos) return parts;
    at = next + 1;
  }
}

int64_t parseSize(std::string_view text) {
  const std::string_view item = trim(text);
  int64_t value = 0;
  const char* begin = item.data();
  const char* end = item.data() + item.size();
  auto [rest, error] = std::from_chars(begin, end, value);
  if (error == std::errc::result_out_of_range)
    throw BadInput("value " + quoted(item) + " is too large");
  if (error != std::errc() || rest == begin) {
    throw BadInput(quoted(item) + " is not an integer" + (item.empty() ? " (empty)" : ""));
  }
  std::string_view suffix(rest, static_cast<size_t>(end - rest));
  if (suffix.empty()) return value;
  int64_t unit = 0;
  switch (suffix[0]) {
    case 'K':
    case 'k':
      unit = int64_t{1} << 10;
      break;
    case 'M':
      unit = int64_t{1} << 20;
      break;
    case 'G':
      unit = int64_t{1} << 30;
      break;
    default:
      break;
  }
  suffix.remove_prefix(1);
  if (unit == 0 || !(suffix.empty() || suffix == "B" || suffix == "iB")) {
    throw BadInput(quoted(item) + " has an unknown unit (use K, M or G, 1024-based)");
  }
  return multiply(value, unit, item);
}

int64_t parseCount(std::string_view text) {
  const std::string_view item = trim(text);
  int64_t value = 0;
  auto [rest, error] = std::from_chars(item.data(), item.data() + item.size(), value);
  if (error == std::errc() && rest == item.data() + item.size()) return value;
  if (error == std::errc() && rest != item.data() &&
      std::string_view("kKMG").find(*rest) != std::string_view::npos) {
    throw BadInput(quoted(item) + " is a count: it takes no unit (K, M and G, 1024-based, are " +
                   "for byte sizes such as axes.bytes)");
  }
  if (error == std::errc() && rest != item.data()) {
    throw BadInput(quoted(item) + " is not an integer");
  }
  return parseSize(item);  // its message: too large, or not an integer
}

std::vector<int64_t> parseIntAxis(std::string_view text, int64_t min_value, Unit unit) {
  std::vector<int64_t> out;
  for (std::string_view item : splitOn(text, ',')) {
    if (item.empty()) throw BadInput("empty item in " + quoted(text));
    if (item.find(':') != std::string_view::npos) {
      expandRange(item, out, text, unit);
    } else {
      append(out, parseValue(item, unit), text);
    }
  }
  for (int64_t v : out) {
    if (v < min_value) {
      throw BadInput("value " + std::to_string(v) + " in " + quoted(text) + " is below " +
                     std::to_string(min_value));
    }
  }
  return out;
}

std::vector<std::string> parseNameList(std::string_view text) {
  std::vector<std::string> out;
  for (std::string_view item : splitOn(text, ',')) {
    if (item.empty()) throw BadInput("empty item in " + quoted(text));
    if (std::find(out.begin(), out.end(), item) != out.end()) {
      throw BadInput(quoted(item) + " is listed twice in " + quoted(text));
    }
    out.emplace_back(item);
  }
  return out;
}

}  // namespace synk::harness
