#include "synk/harness/config/config_file.h"

#include <boost/program_options/errors.hpp>
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/parsers.hpp>
#include <sstream>

#include "synk/harness/base/errors.h"
#include "synk/harness/base/strings.h"

namespace synk::harness {
namespace {

namespace po = boost::program_options;

// Line numbers of each key, in file order, found the way Boost's parser reads the text (it keeps
// none): "[name]" sets the section, "key = value" lines define section.key, '#' starts a comment.
std::map<std::string, std::vector<int>> keyLines(const std::string& text) {
  std::map<std::string, std::vector<int>> lines;
  std::istringstream in(text);
  std::string line, section;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string_view s = trim(std::string_view(line).substr(0, line.find('#')));
    if (s.empty()) continue;
    if (s.front() == '[' && s.back() == ']') {
      section = std::string(trim(s.substr(1, s.size() - 2)));
      if (!section.empty()) section += '.';
      continue;
    }
    const size_t eq = s.find('=');
    if (eq != std::string_view::npos)
      lines[section + std::string(trim(s.substr(0, eq)))].push_back(number);
  }
  return lines;
}

// The line Boost complained about ("the options configuration file contains an invalid line
// 'xyz'"): the first line whose text, comment removed, is that.
int lineOf(const std::string& text, const std::string& content) {
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (trim(std::string_view(line).substr(0, line.find('#'))) == trim(content)) return number;
  }
  return 0;
}

}  // namespace

std::map<std::string, ConfigEntry> readConfigEntries(const std::string& text,
                                                     const std::string& origin) {
  std::istringstream in(text);
  po::parsed_options parsed(nullptr);
  try {
    parsed = po::parse_config_file(in, po::options_description(), /*allow_unregistered=*/true);
  } catch (const po::invalid_config_file_syntax& e) {
    const int line = lineOf(text, e.tokens());
    throw BadInput(origin + (line ? ":" + std::to_string(line) : "") + ": cannot read '" +
                   e.tokens() + "': expected [section], key = value, or a # comment");
  } catch (const po::error& e) {
    throw BadInput(origin + ": " + e.what());
  }
  const std::map<std::string, std::vector<int>> lines = keyLines(text);
  std::map<std::string, ConfigEntry> entries;
  std::map<std::string, int> seen;
  for (const po::option& option : parsed.options) {
    const std::string& key = option.string_key;
    const int occurrence = seen[key]++;
    const auto found = lines.find(key);
    const int line = found != lines.end() && occurrence < static_cast<int>(found->second.size())
                         ? found->second[occurrence]
                         : 0;
    const std::string where = origin + (line ? ":" + std::to_string(line) : "");
    if (occurrence > 0) {
      throw BadInput(where + ": key '" + key + "' is given twice (first at " + entries[key].where +
                     ")");
    }
    entries[key] = {option.value.empty() ? std::string() : option.value.front(), where};
  }
  return entries;
}

void applyOverrides(std::map<std::string, ConfigEntry>& entries,
                    const std::vector<std::string>& overrides) {
  for (const std::string& item : overrides) {
    const size_t eq = item.find('=');
    const std::string key(trim(std::string_view(item).substr(0, eq)));
    if (eq == std::string::npos || key.empty()) {
      throw BadInput("--set " + item + ": expected key=value (e.g. --set axes.ranks=1,2)");
    }
    entries[key] = {std::string(trim(std::string_view(item).substr(eq + 1))), "--set " + item};
  }
}

}  // namespace synk::harness
