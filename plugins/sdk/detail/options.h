#pragma once
// Load-time options of a model (ABI 1.1): typed getters with defaults. Part of
// plugins/sdk/synk_sdk.h.
//
//   static sdk::Spec spec(const sdk::Options& options) {
//     const int64_t depth = options.getInt("depth", 2, "hidden layers");
//     const auto widths = options.getIntList("widths", {256, 128});
//     ...
//   }
//
// Every key a getter is asked for is a key the model accepts: the SDK declares them to the host
// after spec() returns, with their defaults, and the host refuses any other key. So spec() asks
// for every option the model has, also those it uses only sometimes (or calls declare()). The
// model's constructor reads the same values through Context::options().
#include <charconv>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "synk/plugins/abi/synk_plugin.h"
#include "synk/plugins/sdk/detail/types.h"

namespace synk::sdk {

class Options {
 public:
  struct Declared {
    std::string name;
    std::string default_value;
    std::string help;
  };

  Options() = default;
  explicit Options(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  // From the ABI's list (walked by the host's struct_size); NULL or 0: no options.
  Options(const synk_option* items, uint32_t count) {
    for (uint32_t i = 0; i < count && items; ++i) {
      const synk_option& item = *synk_option_at(items, i);
      if (item.key) values_[item.key] = item.value ? item.value : "";
    }
  }

  // Whether the key was given (rather than left at its default).
  bool has(std::string_view key) const { return values_.count(std::string(key)) != 0; }
  const std::map<std::string, std::string>& given() const { return values_; }
  // The accepted keys, in the order they were first asked for.
  const std::vector<Declared>& declared() const { return declared_; }

  // Accepts `key` without reading it (an option only some configurations use).
  void declare(const std::string& key, const std::string& default_value,
               const std::string& help = "") const {
    for (const Declared& d : declared_) {
      if (d.name == key) return;
    }
    declared_.push_back({key, default_value, help});
  }

  std::string getString(const std::string& key, const std::string& default_value,
                        const std::string& help = "") const {
    declare(key, default_value, help);
    const auto it = values_.find(key);
    return it == values_.end() ? default_value : it->second;
  }

  // One of `choices`; anything else is refused naming them.
  std::string getChoice(const std::string& key, const std::string& default_value,
                        const std::vector<std::string>& choices,
                        const std::string& help = "") const {
    std::string value = getString(key, default_value, help);
    std::string listed;
    for (const std::string& choice : choices) {
      if (choice == value) return value;
      listed += (listed.empty() ? "" : ", ") + choice;
    }
    throw Error(Status::InvalidArgument,
                "option '" + key + "' is '" + value + "'; choose one of " + listed);
  }

  int64_t getInt(const std::string& key, int64_t default_value,
                 const std::string& help = "") const {
    const std::string text = getString(key, std::to_string(default_value), help);
    return parseInt(key, text, text);
  }

  double getDouble(const std::string& key, double default_value,
                   const std::string& help = "") const {
    const std::string text = getString(key, formatDouble(default_value), help);
    double value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || ptr != end) {
      throw Error(Status::InvalidArgument, "option '" + key + "' is '" + text + "', not a number");
    }
    return value;
  }

  // true/false, 1/0, yes/no, on/off.
  bool getBool(const std::string& key, bool default_value, const std::string& help = "") const {
    const std::string text = getString(key, default_value ? "true" : "false", help);
    if (text == "true" || text == "1" || text == "yes" || text == "on") return true;
    if (text == "false" || text == "0" || text == "no" || text == "off") return false;
    throw Error(Status::InvalidArgument,
                "option '" + key + "' is '" + text + "', not true or false");
  }

  // A comma-separated list of integers ("256,128"); an empty string is an empty list.
  std::vector<int64_t> getIntList(const std::string& key, const std::vector<int64_t>& default_value,
                                  const std::string& help = "") const {
    std::string fallback;
    for (int64_t v : default_value) {
      if (!fallback.empty()) fallback += ',';
      fallback += std::to_string(v);
    }
    const std::string text = getString(key, fallback, help);
    std::vector<int64_t> out;
    size_t begin = 0;
    while (begin < text.size()) {
      size_t end = text.find(',', begin);
      if (end == std::string::npos) end = text.size();
      out.push_back(parseInt(key, text.substr(begin, end - begin), text));
      begin = end + 1;
      if (end + 1 == text.size()) parseInt(key, "", text);  // a trailing comma
    }
    return out;
  }

 private:
  static int64_t parseInt(const std::string& key, const std::string& item,
                          const std::string& whole) {
    int64_t value = 0;
    const char* end = item.data() + item.size();
    const auto [ptr, ec] = std::from_chars(item.data(), end, value);
    if (item.empty() || ec != std::errc() || ptr != end) {
      throw Error(Status::InvalidArgument,
                  "option '" + key + "' is '" + whole + "', not " +
                      (item == whole ? "an integer" : "a comma-separated integer list"));
    }
    return value;
  }
  static std::string formatDouble(double value) {
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, result.ptr);
  }

  std::map<std::string, std::string> values_;
  mutable std::vector<Declared> declared_;  // getters record what they were asked for
};

}  // namespace synk::sdk
