#pragma once
// The key = value entries of an INI text and of --set overrides, with where each came from.
// Parsing is Boost.Program_options' config-file parser ("[section]" prefixes "section." to the
// keys after it, '#' starts a comment); this file adds what it lacks: the line of every key,
// duplicate detection, and overrides applied on top.
#include <map>
#include <string>
#include <vector>

namespace synk::harness {

struct ConfigEntry {
  std::string value;
  std::string where;  // "experiments/quickstart.ini:12" or "--set axes.ranks=1,2"
};

// key -> entry. Throws BadInput on a syntax error or a key given twice in the text.
std::map<std::string, ConfigEntry> readConfigEntries(const std::string& text,
                                                     const std::string& origin);

// Applies "key=value" overrides (the later of two for one key wins).
void applyOverrides(std::map<std::string, ConfigEntry>& entries,
                    const std::vector<std::string>& overrides);

}  // namespace synk::harness
