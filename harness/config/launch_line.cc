#include "synk/harness/config/launch_line.h"

#include <unistd.h>

#include <filesystem>

#include "synk/harness/base/errors.h"
#include "synk/harness/config/axis.h"

namespace synk::harness {
namespace {

const std::string kNodes = "{nodes}", kRanksPerNode = "{ranks_per_node}";

std::vector<std::string> splitWords(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : text) {
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote) throw BadInput(std::string("an unclosed ") + quote + " quote");
  if (in_word) words.push_back(word);
  return words;
}

void replaceAll(std::string& text, const std::string& what, const std::string& with) {
  for (size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += with.size())
    text.replace(at, what.size(), with);
}

bool isAssignment(const std::string& word) {
  const size_t equals = word.find('=');
  return equals != std::string::npos && equals > 0 && word.find('/') > equals;
}

}  // namespace

LaunchLine LaunchLine::parse(const std::string& text) {
  LaunchLine line;
  line.words = splitWords(text);
  if (line.words.empty()) throw BadInput("needs the launcher's command line");
  bool nodes = false;
  for (const std::string& word : line.words) {
    nodes = nodes || word.find(kNodes) != std::string::npos;
    std::string rest = word;
    replaceAll(rest, kNodes, "");
    replaceAll(rest, kRanksPerNode, "");
    const size_t open = rest.find('{');
    if (open != std::string::npos && rest.find('}', open) != std::string::npos) {
      throw BadInput("'" + word + "': the placeholders are {nodes} and {ranks_per_node}");
    }
  }
  // Without it every point would run on the nodes the line fixes, whatever its nodes value.
  if (!nodes) {
    throw BadInput(
        "has no {nodes}: the launcher must start one process per node of each point "
        "(mpirun -np {nodes} --map-by ppr:1:node, srun -N {nodes} --ntasks-per-node=1)");
  }
  if (line.program().empty()) throw BadInput("names no program to run");
  return line;
}

std::vector<std::string> LaunchLine::expand(int nodes, int ranks_per_node) const {
  std::vector<std::string> out = words;
  for (std::string& word : out) {
    replaceAll(word, kNodes, std::to_string(nodes));
    replaceAll(word, kRanksPerNode, std::to_string(ranks_per_node));
  }
  return out;
}

std::string LaunchLine::program() const {
  size_t at = 0;
  if (at < words.size() && words[at] == "env") {
    ++at;
    while (at < words.size() && isAssignment(words[at]))
      ++at;
  }
  return at < words.size() ? words[at] : "";
}

std::optional<std::string> findProgram(const std::string& program, const std::string& path) {
  if (program.find('/') != std::string::npos) {
    if (access(program.c_str(), X_OK) == 0) return program;
    return std::nullopt;
  }
  for (std::string_view folder : splitOn(path, ':')) {
    const std::string candidate = (folder.empty() ? "." : std::string(folder)) + "/" + program;
    std::error_code error;
    if (std::filesystem::is_regular_file(candidate, error) && access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return std::nullopt;
}

}  // namespace synk::harness
