// Reads TensorBoard event files back for tests: checks every frame's CRCs and decodes the Event fields luong
// writes (wall_time, step, file_version, a summary's scalar values, a session log's status).
#pragma once
#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "framework/io/tfevents_writer.h"

namespace luong::testing {

struct DecodedEvent {
  double wall_time = 0;
  int64_t step = 0;
  std::string file_version;
  int session_status = 0;  // 1: START
  std::vector<std::pair<std::string, float>> scalars;
};

class ProtoReader {
 public:
  explicit ProtoReader(const std::string& bytes) : s_(bytes) {}
  bool done() const { return at_ >= s_.size(); }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      if (at_ >= s_.size()) throw std::runtime_error("varint past the end");
      const auto b = static_cast<unsigned char>(s_[at_++]);
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
  }
  std::string bytes(size_t n) {
    if (at_ + n > s_.size()) throw std::runtime_error("field past the end");
    std::string out = s_.substr(at_, n);
    at_ += n;
    return out;
  }
  template <typename T>
  T fixed() {
    T v;
    std::memcpy(&v, bytes(sizeof(T)).data(), sizeof(T));
    return v;
  }

 private:
  std::string s_;
  size_t at_ = 0;
};

inline DecodedEvent decode_event(const std::string& bytes) {
  DecodedEvent e;
  ProtoReader r(bytes);
  while (!r.done()) {
    const uint64_t key = r.varint();
    const int field = static_cast<int>(key >> 3), wire = static_cast<int>(key & 7);
    if (field == 1 && wire == 1)
      e.wall_time = r.fixed<double>();
    else if (field == 2 && wire == 0)
      e.step = static_cast<int64_t>(r.varint());
    else if (field == 3 && wire == 2)
      e.file_version = r.bytes(r.varint());
    else if (field == 5 && wire == 2) {
      ProtoReader summary(r.bytes(r.varint()));
      while (!summary.done()) {
        if (summary.varint() != (1 << 3 | 2)) throw std::runtime_error("unexpected Summary field");
        ProtoReader value(summary.bytes(summary.varint()));
        std::string tag;
        float simple = 0;
        while (!value.done()) {
          const uint64_t k = value.varint();
          if (k == (1 << 3 | 2))
            tag = value.bytes(value.varint());
          else if (k == (2 << 3 | 5))
            simple = value.fixed<float>();
          else
            throw std::runtime_error("unexpected Value field");
        }
        e.scalars.emplace_back(tag, simple);
      }
    } else if (field == 7 && wire == 2) {
      ProtoReader log(r.bytes(r.varint()));
      if (log.varint() != (1 << 3 | 0)) throw std::runtime_error("unexpected SessionLog field");
      e.session_status = static_cast<int>(log.varint());
    } else {
      throw std::runtime_error("unexpected Event field " + std::to_string(field));
    }
  }
  return e;
}

// Every event of the file, each frame's length and data CRCs checked.
inline std::vector<DecodedEvent> read_events(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<DecodedEvent> events;
  for (size_t at = 0; at < all.size();) {
    if (at + 12 > all.size()) throw std::runtime_error("a frame header past the end");
    uint64_t len;
    uint32_t len_crc, data_crc;
    std::memcpy(&len, all.data() + at, 8);
    std::memcpy(&len_crc, all.data() + at + 8, 4);
    if (len_crc != masked_crc32c(all.data() + at, 8)) throw std::runtime_error("bad length CRC");
    if (at + 12 + len + 4 > all.size()) throw std::runtime_error("a frame past the end");
    const std::string data = all.substr(at + 12, len);
    std::memcpy(&data_crc, all.data() + at + 12 + len, 4);
    if (data_crc != masked_crc32c(data.data(), data.size())) throw std::runtime_error("bad data CRC");
    events.push_back(decode_event(data));
    at += 12 + len + 4;
  }
  return events;
}

}  // namespace luong::testing
