#include "synk/harness/json.h"

#include <cmath>
#include <cstdio>

#include "synk/harness/errors.h"

namespace synk::harness {
namespace {

class FlatReader {
 public:
  explicit FlatReader(std::string_view text) : text_(text) {}

  std::map<std::string, std::string> object() {
    std::map<std::string, std::string> out;
    expect('{');
    if (peek() == '}') {
      ++at_;
    } else {
      while (true) {
        std::string key = string();
        expect(':');
        out[std::move(key)] = string();
        if (peek() == ',') {
          ++at_;
          continue;
        }
        expect('}');
        break;
      }
    }
    if (peek() != '\0') fail("text after the object");
    return out;
  }

 private:
  [[noreturn]] void fail(const char* why) const {
    throw BadInput(std::string("bad JSON at offset ") + std::to_string(at_) + ": " + why);
  }
  char peek() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\n'))
      ++at_;
    return at_ < text_.size() ? text_[at_] : '\0';
  }
  void expect(char c) {
    if (peek() != c) fail("unexpected character");
    ++at_;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (at_ < text_.size() && text_[at_] != '"') {
      char c = text_[at_++];
      if (c == '\\') {
        if (at_ >= text_.size()) fail("unfinished escape");
        c = text_[at_++];
        switch (c) {
          case 'n':
            c = '\n';
            break;
          case 't':
            c = '\t';
            break;
          case 'r':
            c = '\r';
            break;
          case 'b':
            c = '\b';
            break;
          case 'f':
            c = '\f';
            break;
          case 'u': {
            if (at_ + 4 > text_.size()) fail("short \\u escape");
            const unsigned code = std::stoul(std::string(text_.substr(at_, 4)), nullptr, 16);
            at_ += 4;
            if (code >= 0x80) fail("\\u escapes above 0x7f are not written by synk-bench");
            c = static_cast<char>(code);
            break;
          }
          default:
            break;  // \" \\ \/
        }
      }
      out += c;
    }
    expect('"');
    return out;
  }

  std::string_view text_;
  size_t at_ = 0;
};

}  // namespace

std::string jsonNumber(double value) {
  if (!std::isfinite(value)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", value);
  return buf;
}

std::string jsonString(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string toJson(const std::map<std::string, std::string>& object) {
  std::string out = "{";
  for (const auto& [key, value] : object) {
    if (out.size() > 1) out += ",";
    out += jsonString(key) + ":" + jsonString(value);
  }
  return out + "}";
}

std::map<std::string, std::string> parseFlatJson(std::string_view text) {
  return FlatReader(text).object();
}

}  // namespace synk::harness
