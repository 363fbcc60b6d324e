// Length-prefixed protobuf framing over a Boost.Asio stream, with a deadline.
#pragma once
#include <utility>  // before Boost.Asio under C++20

#include <boost/asio.hpp>
#include <chrono>
#include <string>

#include "core/status.h"
#include "google/protobuf/message.h"

namespace orrery::remote {

// The longest frame either side sends or accepts.
inline constexpr uint32_t kMaxFrameBytes = 64u << 20;

// Writes one framed message; false on error (filled into `error`).
template <typename Stream>
bool WriteFrame(Stream& s, const google::protobuf::Message& m, std::string* error) {
  std::string body;
  if (!m.SerializeToString(&body)) {
    *error = "the message does not serialize";
    return false;
  }
  if (body.size() > kMaxFrameBytes) {
    *error = "a frame of " + std::to_string(body.size()) + " bytes, over the protocol's limit of 64 MiB";
    return false;
  }
  const uint32_t n = static_cast<uint32_t>(body.size());
  char head[4] = {static_cast<char>(n & 0xff), static_cast<char>((n >> 8) & 0xff), static_cast<char>((n >> 16) & 0xff),
                  static_cast<char>((n >> 24) & 0xff)};
  boost::system::error_code ec;
  std::array<boost::asio::const_buffer, 2> bufs = {boost::asio::buffer(head, 4), boost::asio::buffer(body)};
  boost::asio::write(s, bufs, ec);
  if (ec) {
    *error = ec.message();
    return false;
  }
  return true;
}

enum class ReadResult { kOk, kClosed, kTimeout, kGarbage, kError };

// Reads one framed message within `timeout` (the io_context must be the
// stream's and not running elsewhere).
template <typename Stream>
ReadResult ReadFrame(boost::asio::io_context& io, Stream& s, google::protobuf::Message* m,
                     std::chrono::milliseconds timeout, std::string* detail) {
  char head[4];
  std::string body;
  boost::system::error_code result = boost::asio::error::would_block;
  bool too_big = false;
  boost::asio::async_read(s, boost::asio::buffer(head, 4), [&](const boost::system::error_code& ec, size_t) {
    if (ec) {
      result = ec;
      return;
    }
    const uint32_t n = static_cast<uint8_t>(head[0]) | (static_cast<uint8_t>(head[1]) << 8) |
                       (static_cast<uint8_t>(head[2]) << 16) |
                       (static_cast<uint32_t>(static_cast<uint8_t>(head[3])) << 24);
    if (n > kMaxFrameBytes) {
      too_big = true;
      result = boost::system::error_code();
      return;
    }
    body.resize(n);
    boost::asio::async_read(s, boost::asio::buffer(body),
                            [&](const boost::system::error_code& ec2, size_t) { result = ec2; });
  });
  io.restart();
  io.run_for(timeout);
  if (result == boost::asio::error::would_block) {
    s.cancel();
    io.restart();
    io.run();  // let the cancelled handlers finish
    return ReadResult::kTimeout;
  }
  if (too_big) {
    *detail = "a frame length over 64 MiB";
    return ReadResult::kGarbage;
  }
  if (result == boost::asio::error::eof || result == boost::asio::error::connection_reset) return ReadResult::kClosed;
  if (result) {
    *detail = result.message();
    return ReadResult::kError;
  }
  if (!m->ParseFromString(body)) {
    *detail = "bytes that do not parse as a protocol message";
    return ReadResult::kGarbage;
  }
  return ReadResult::kOk;
}

}  // namespace orrery::remote
