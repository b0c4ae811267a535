#include "services/providers/aws/event_stream.h"

#include <boost/crc.hpp>

namespace skillrunner::providers::aws {

namespace {

std::uint32_t Crc32(std::string_view bytes) {
  boost::crc_32_type crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

std::uint32_t Read32(std::string_view bytes, std::size_t at) {
  auto b = [&](std::size_t i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i])); };
  return (b(0) << 24) | (b(1) << 16) | (b(2) << 8) | b(3);
}

std::uint16_t Read16(std::string_view bytes, std::size_t at) {
  return static_cast<std::uint16_t>((static_cast<unsigned char>(bytes[at]) << 8) |
                                    static_cast<unsigned char>(bytes[at + 1]));
}

void Put32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xFF));
}

// The size of a header value of `type` at `at` (after the type byte), or nullopt for an unknown type.
std::optional<std::size_t> ValueSize(std::string_view headers, std::size_t at, unsigned char type) {
  static constexpr std::size_t kFixed[] = {0, 0, 1, 2, 4, 8, 0, 0, 8, 16};
  if (type > 9) return std::nullopt;
  if (type != 6 && type != 7) return kFixed[type];
  if (at + 2 > headers.size()) return std::nullopt;
  return 2 + static_cast<std::size_t>(Read16(headers, at));
}

}  // namespace

std::string_view EventMessage::Header(std::string_view name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string_view() : std::string_view(it->second);
}

std::optional<std::string> EventStreamDecoder::Decode(std::string_view frame, EventMessage& out) const {
  const std::uint32_t headers_length = Read32(frame, 4);
  if (Read32(frame, 8) != Crc32(frame.substr(0, 8))) return "an event frame's prelude CRC does not match";
  if (Read32(frame, frame.size() - 4) != Crc32(frame.substr(0, frame.size() - 4))) {
    return "an event frame's message CRC does not match";
  }
  if (12 + static_cast<std::size_t>(headers_length) + 4 > frame.size()) return "an event frame's headers overrun it";
  std::string_view headers = frame.substr(12, headers_length);
  for (std::size_t at = 0; at < headers.size();) {
    const std::size_t name_length = static_cast<unsigned char>(headers[at]);
    if (at + 1 + name_length + 1 > headers.size()) return "an event frame's header is cut";
    std::string name(headers.substr(at + 1, name_length));
    at += 1 + name_length;
    const unsigned char type = static_cast<unsigned char>(headers[at++]);
    auto size = ValueSize(headers, at, type);
    if (!size || at + *size > headers.size()) return "an event frame's header value is cut or of an unknown type";
    if (type == 7) out.headers[name] = std::string(headers.substr(at + 2, *size - 2));
    at += *size;
  }
  out.payload = std::string(frame.substr(12 + headers_length, frame.size() - 16 - headers_length));
  return std::nullopt;
}

std::optional<std::string> EventStreamDecoder::Feed(std::string_view bytes,
                                                    const std::function<void(const EventMessage&)>& on_message) {
  if (broken_) return broken_;
  buffer_.append(bytes);
  std::size_t at = 0;
  while (buffer_.size() - at >= 12) {
    std::string_view rest = std::string_view(buffer_).substr(at);
    const std::uint32_t total = Read32(rest, 0);
    if (total < 16 || total > kMaxEventFrame || Read32(rest, 4) > total - 16) {
      broken_ = "an event frame's lengths cannot be (" + std::to_string(total) + " bytes)";
      return broken_;
    }
    if (rest.size() < total) break;
    EventMessage message;
    if (auto problem = Decode(rest.substr(0, total), message)) {
      broken_ = std::move(problem);
      return broken_;
    }
    at += total;
    on_message(message);
  }
  buffer_.erase(0, at);
  return std::nullopt;
}

std::string EncodeEventFrame(const std::map<std::string, std::string, std::less<>>& headers, std::string_view payload) {
  std::string encoded_headers;
  for (const auto& [name, value] : headers) {
    encoded_headers.push_back(static_cast<char>(name.size()));
    encoded_headers += name;
    encoded_headers.push_back(7);
    encoded_headers.push_back(static_cast<char>((value.size() >> 8) & 0xFF));
    encoded_headers.push_back(static_cast<char>(value.size() & 0xFF));
    encoded_headers += value;
  }
  std::string out;
  Put32(out, static_cast<std::uint32_t>(16 + encoded_headers.size() + payload.size()));
  Put32(out, static_cast<std::uint32_t>(encoded_headers.size()));
  Put32(out, Crc32(out));
  out += encoded_headers;
  out += payload;
  Put32(out, Crc32(out));
  return out;
}

}  // namespace skillrunner::providers::aws
