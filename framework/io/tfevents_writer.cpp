#include "framework/io/tfevents_writer.h"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>

#include "framework/core/error.h"

namespace luong {
namespace {

std::array<uint32_t, 256> crc32c_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[i] = c;
  }
  return t;
}

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

template <typename T>
void put_little_endian(std::string& out, T v) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));  // x86-64 and aarch64 Linux are little-endian, as the format is
  out.append(bytes, sizeof(T));
}

// A length-delimited field: its key, the length, the bytes.
void put_bytes_field(std::string& out, int field, const std::string& bytes) {
  put_varint(out, static_cast<uint64_t>(field) << 3 | 2);
  put_varint(out, bytes.size());
  out += bytes;
}

// The Event fields every event carries: wall_time (a double, wire type 1) and step (a varint).
std::string event_header(double wall_time, int64_t step) {
  std::string e;
  put_varint(e, 1 << 3 | 1);
  put_little_endian(e, wall_time);
  put_varint(e, 2 << 3 | 0);
  put_varint(e, static_cast<uint64_t>(step));
  return e;
}

}  // namespace

uint32_t crc32c(const void* data, size_t n) {
  static const std::array<uint32_t, 256> table = crc32c_table();
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t masked_crc32c(const void* data, size_t n) {
  const uint32_t c = crc32c(data, n);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

double wall_time_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void EventsFile::open(const std::string& dir, int64_t start_step) {
  char host[256] = "host";
  ::gethostname(host, sizeof host - 1);
  const double now = wall_time_seconds();
  path_ = dir + "/events.out.tfevents." + std::to_string(static_cast<int64_t>(now)) + "." + host + "." +
          std::to_string(::getpid()) + ".luong";
  out_.open(path_, std::ios::binary | std::ios::app);
  LUONG_CHECK(out_.is_open(), "cannot open the TensorBoard event file ", path_, " for writing");
  std::string version = event_header(now, 0);
  put_bytes_field(version, 3, "brain.Event:2");
  record(version);
  std::string start = event_header(now, start_step), session;
  put_varint(session, 1 << 3 | 0);
  put_varint(session, 1);  // SessionLog.START
  put_bytes_field(start, 7, session);
  record(start);
  flush();
}

void EventsFile::scalar(const std::string& tag, double value, int64_t step, double wall_time) {
  std::string v;
  put_bytes_field(v, 1, tag);
  put_varint(v, 2 << 3 | 5);
  put_little_endian(v, static_cast<float>(value));
  std::string summary;
  put_bytes_field(summary, 1, v);
  std::string e = event_header(wall_time, step);
  put_bytes_field(e, 5, summary);
  record(e);
}

void EventsFile::record(const std::string& event) {
  std::string frame;
  put_little_endian(frame, static_cast<uint64_t>(event.size()));
  put_little_endian(frame, masked_crc32c(frame.data(), 8));
  frame += event;
  put_little_endian(frame, masked_crc32c(event.data(), event.size()));
  out_ << frame;
}

void EventsFile::flush() {
  out_.flush();
  LUONG_CHECK(out_.good(), "cannot write the TensorBoard event file ", path_);
}

}  // namespace luong
