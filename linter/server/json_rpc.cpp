#include "json_rpc.h"

#include <charconv>

#include "core/text.h"

namespace torchlint::server {

namespace {

bool header_name_is(std::string_view line, std::string_view name) {
  if (line.size() < name.size() + 1 || line[name.size()] != ':') return false;
  return ascii_iequals(line.substr(0, name.size()), name);
}

}  // namespace

bool FrameReader::read_line(std::string& line) {
  line.clear();
  for (int c = std::getc(in_); c != EOF; c = std::getc(in_)) {
    if (c == '\n') {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return true;
    }
    // A header line longer than this is not a header: stop growing it (the frame is bad).
    if (line.size() < 4096) line.push_back(static_cast<char>(c));
  }
  return false;
}

Frame FrameReader::next() {
  Frame frame;
  std::optional<size_t> length;
  bool bad_length = false, any_header = false;
  std::string line;
  while (true) {
    if (!read_line(line)) return frame;  // kEnd
    if (line.empty()) {
      if (!any_header) continue;  // stray blank lines between messages
      break;
    }
    any_header = true;
    if (header_name_is(line, "Content-Length")) {
      std::string_view value = std::string_view(line).substr(15);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
      size_t n = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || end != value.data() + value.size()) {
        bad_length = true;
      } else {
        length = n;
      }
    }
    // Other headers (Content-Type) carry nothing the server needs.
  }
  if (!length || bad_length) {
    frame.kind = Frame::Kind::kBadFrame;
    frame.error = "message headers without a valid Content-Length";
    return frame;
  }
  if (*length > kMaxMessageBytes) {
    // Skip the body without keeping it.
    char chunk[65536];
    size_t left = *length;
    while (left > 0) {
      size_t got = std::fread(chunk, 1, std::min(left, sizeof chunk), in_);
      if (got == 0) return Frame{};  // kEnd
      left -= got;
    }
    frame.kind = Frame::Kind::kBadFrame;
    frame.error =
        "message of " + std::to_string(*length) + " bytes is over the limit of " + std::to_string(kMaxMessageBytes);
    return frame;
  }
  frame.body.resize(*length);
  size_t got = 0;
  while (got < *length) {
    size_t n = std::fread(frame.body.data() + got, 1, *length - got, in_);
    if (n == 0) return Frame{};  // the client went away mid-message
    got += n;
  }
  frame.kind = Frame::Kind::kMessage;
  return frame;
}

bool FrameWriter::write(const nlohmann::json& message) {
  // Invalid UTF-8 in a file's text (a message quoting it) must not throw: replace it.
  std::string body = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::lock_guard lock(mutex_);
  if (broken_) return false;
  std::string header = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  if (std::fwrite(header.data(), 1, header.size(), out_) != header.size() ||
      std::fwrite(body.data(), 1, body.size(), out_) != body.size() || std::fflush(out_) != 0) {
    broken_ = true;
  }
  return !broken_;
}

}  // namespace torchlint::server
