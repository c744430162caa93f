// Checkpoint file format: round trips of every kind of value, integrity checks, atomic writes, loading
// into live tensors and string lists.
#include "framework/io/checkpoint.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "tests/support/error_of.h"
#include "tests/support/temp_dir.h"

namespace luong {
namespace {

using testing::TempDir;

void expect_same_tensor(const Tensor& a, const Tensor& b, const std::string& name) {
  ASSERT_TRUE(b.defined()) << name;
  EXPECT_EQ(a.dtype(), b.dtype()) << name;
  EXPECT_EQ(a.shape(), b.shape()) << name;
  ASSERT_EQ(a.nbytes(), b.nbytes()) << name;
  if (a.nbytes() > 0) {
    EXPECT_EQ(0, std::memcmp(a.raw(), b.raw(), a.nbytes())) << name;
  }
}

StateDict every_kind() {
  StateDict s;
  s.tensors["model/encoder/lstm/0/weight_ih"] = Tensor::from({1, -2, 3.25, 4, 5, -6e-7}, {2, 3});
  s.tensors["model/f64"] = Tensor::from({0.1, 0.2, 0.3, 1e300, -1e-300, 7}, {3, 1, 2}, DType::f64);
  s.tensors["model/ids"] = Tensor::from_ids({std::numeric_limits<int64_t>::min(), -1, 0, 42,
                                             std::numeric_limits<int64_t>::max()},
                                            {5});
  s.tensors["mask"] = Tensor::from({1, 0, 0, 1, 255, 1, 0, 7}, {2, 2, 2}, DType::u8);
  s.tensors["model/half"] = Tensor::from({1.5, -2.25, 3.0e-3, 65504}, {4}, DType::bf16);
  s.tensors["scalar0d"] = Tensor::from({3.5}, {});
  s.tensors["empty"] = Tensor::zeros({0, 4});
  s.tensors["odd/shape"] = Tensor::from({1, 2, 3, 4, 5, 6, 7}, {1, 7, 1}, DType::f64);
  s.ints["train/step"] = 1200;
  s.ints["neg"] = -7;
  s.ints["max"] = std::numeric_limits<int64_t>::max();
  s.ints["min"] = std::numeric_limits<int64_t>::min();
  const uint64_t philox_key = 0xFEDCBA9876543210ull;  // uint64 state is bit-cast into int64
  int64_t bitcast;
  std::memcpy(&bitcast, &philox_key, 8);
  s.ints["rng/key"] = bitcast;
  s.floats["schedule/lr"] = 0.5;
  s.floats["tiny"] = 4.9406564584124654e-324;  // denormal
  s.floats["inf"] = std::numeric_limits<double>::infinity();
  s.floats["nan"] = std::numeric_limits<double>::quiet_NaN();
  s.strings["config"] = "model:\n  hidden: 1000\n";
  s.strings["empty_string"] = "";
  s.strings["utf8"] = "Grüße, ça va? 日本語 — ✓";
  return s;
}

TEST(Checkpoint, RoundTripsEveryKindOfValue) {
  TempDir dir;
  const std::string path = dir.file("ckpt-1.h5");
  const StateDict in = every_kind();
  save_checkpoint(path, in, {{"world_size", "4"}, {"dtype", "float32"}});
  const Checkpoint out = load_checkpoint(path);

  EXPECT_EQ(out.path, path);
  EXPECT_EQ(out.format_version, kCheckpointFormatVersion);
  ASSERT_EQ(out.state.tensors.size(), in.tensors.size());
  for (const auto& [name, t] : in.tensors) expect_same_tensor(t, out.state.tensors.at(name), name);
  EXPECT_EQ(out.state.ints, in.ints);
  uint64_t key;
  std::memcpy(&key, &out.state.ints.at("rng/key"), 8);
  EXPECT_EQ(key, 0xFEDCBA9876543210ull);
  ASSERT_EQ(out.state.floats.size(), in.floats.size());
  for (const auto& [name, v] : in.floats) {
    uint64_t a, b;
    std::memcpy(&a, &v, 8);
    std::memcpy(&b, &out.state.floats.at(name), 8);
    EXPECT_EQ(a, b) << name;  // bit-exact, NaN included
  }
  EXPECT_EQ(out.state.strings, in.strings);
  EXPECT_EQ(out.metadata.at("world_size"), "4");
  EXPECT_EQ(out.metadata.at("dtype"), "float32");
  EXPECT_EQ(out.metadata.at("luong_version"), LUONG_VERSION);
  EXPECT_EQ(out.metadata.at("created").size(), 20u) << out.metadata.at("created");  // 2024-01-02T03:04:05Z
  EXPECT_EQ(out.metadata.count("checksum"), 0u);
}

TEST(Checkpoint, CorruptedTensorByteIsAChecksumError) {
  TempDir dir;
  const std::string path = dir.file("c.h5");
  std::vector<double> values(64);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 1234.5 + static_cast<double>(i) / 7.0;
  StateDict s;
  s.tensors["model/w"] = Tensor::from(values, {8, 8}, DType::f64);
  save_checkpoint(path, s);

  std::string bytes = testing::read_bytes(path);
  const std::string needle(reinterpret_cast<const char*>(&values[10]), 8);
  const size_t at = bytes.find(needle);
  ASSERT_NE(at, std::string::npos);
  bytes[at + 3] = static_cast<char>(bytes[at + 3] ^ 0x10);
  testing::write_bytes(path, bytes);
  try {
    load_checkpoint(path);
    FAIL() << "corruption not detected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("checksum mismatch"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

// The seal: a CRC-32 of every byte after the first 512, in HDF5's user block. A damaged byte anywhere, the
// HDF5 metadata included (where HDF5 1.10 itself can crash or hang), is refused before HDF5 reads the file;
// a file without a user block (older luong, another tool) still loads.
TEST(Checkpoint, SealCoversEveryByteAfterTheUserBlock) {
  TempDir dir;
  const std::string path = dir.file("s.h5");
  StateDict s = every_kind();
  s.tensors["model/big"] = Tensor::full({40, 30}, 0.5);
  save_checkpoint(path, s);
  const std::string bytes = testing::read_bytes(path);
  ASSERT_GT(bytes.size(), 1024u);
  const std::string rest = bytes.substr(512);
  char line[64];
  std::snprintf(
      line, sizeof line, "bytes %zu crc32 %08lx\n", rest.size(),
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(rest.data()), static_cast<uInt>(rest.size())));
  EXPECT_EQ(bytes.substr(0, 24 + std::strlen(line)), "luong checkpoint seal 1\n" + std::string(line));
  EXPECT_EQ(bytes.substr(512, 4), "\x89HDF") << "the HDF5 data starts after the user block";

  // One damaged byte in the superblock, the object headers, the data and the last byte; and in the seal.
  for (size_t at : {size_t{512}, size_t{520}, size_t{600}, size_t{1000}, size_t{2048}, bytes.size() / 2,
                    bytes.size() - 1, size_t{30}}) {
    std::string bad = bytes;
    bad[at] = static_cast<char>(bad[at] ^ 0x5a);
    const std::string file = dir.file("bad.h5");
    testing::write_bytes(file, bad);
    const std::string msg = testing::error_of([&] { load_checkpoint(file); });
    EXPECT_NE(msg.find("checkpoint " + file + ": checksum mismatch over the file's bytes"), std::string::npos)
        << "byte " << at << ": " << msg;
  }
  std::string longer = bytes + "x";
  testing::write_bytes(dir.file("longer.h5"), longer);
  EXPECT_NE(
      testing::error_of([&] { load_checkpoint(dir.path("longer.h5")); }).find("checksum mismatch over the file's"),
      std::string::npos);

  // Without the user block the same HDF5 data loads, checked by its entry checksum only.
  testing::write_bytes(dir.file("legacy.h5"), rest);
  const Checkpoint legacy = load_checkpoint(dir.path("legacy.h5"));
  EXPECT_EQ(legacy.state.ints, s.ints);
  EXPECT_EQ(legacy.state.tensors.at("model/big").to_vector(), s.tensors.at("model/big").to_vector());
}

TEST(Checkpoint, TruncatedFileIsAnErrorNamingTheFile) {
  TempDir dir;
  const std::string path = dir.file("t.h5");
  StateDict s = every_kind();
  s.tensors["model/big"] = Tensor::full({100, 50}, 0.25);
  save_checkpoint(path, s);
  const std::string bytes = testing::read_bytes(path);
  for (double frac : {0.5, 0.1, 0.9, 0.999}) {
    const std::string cut = dir.file("cut.h5");
    testing::write_bytes(cut, bytes.substr(0, static_cast<size_t>(static_cast<double>(bytes.size()) * frac)));
    try {
      load_checkpoint(cut);
      FAIL() << "truncation at " << frac << " not detected";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(cut), std::string::npos) << e.what();
    }
  }
}

TEST(Checkpoint, GarbageAndMissingFilesAreErrors) {
  TempDir dir;
  const std::string garbage = dir.file("garbage.h5");
  std::string noise(4096, '\0');
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>((i * 2654435761u) >> 13);
  testing::write_bytes(garbage, noise);
  try {
    load_checkpoint(garbage);
    FAIL() << "garbage accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(garbage), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not an HDF5 file"), std::string::npos) << e.what();
  }
  const std::string missing = dir.file("missing.h5");
  try {
    load_checkpoint(missing);
    FAIL() << "missing file accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing + ": no such file"), std::string::npos) << e.what();
  }
}

TEST(Checkpoint, FailedWriteLeavesThePreviousCheckpointAndNoTempFile) {
  TempDir dir;
  const std::string path = dir.file("ckpt-5.h5");
  StateDict v1;
  v1.tensors["model/w"] = Tensor::full({4, 4}, 1.0);
  v1.ints["train/step"] = 5;
  save_checkpoint(path, v1);

  StateDict v2 = v1;
  v2.tensors["model/w"] = Tensor::full({4, 4}, 2.0);
  v2.ints["train/step"] = 6;
  v2.strings["z/after"] = "never written";
  int seen = 0;
  auto crash_midway = [&](const std::string& name) {
    if (++seen == 2) throw std::runtime_error("simulated crash before " + name);
  };
  EXPECT_THROW(save_checkpoint(path, v2, {}, crash_midway), std::runtime_error);
  EXPECT_EQ(seen, 2);

  const Checkpoint back = load_checkpoint(path);
  EXPECT_EQ(back.state.ints.at("train/step"), 5);
  EXPECT_EQ(back.state.tensors.at("model/w").to_vector(), std::vector<double>(16, 1.0));
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().filename().string(), "ckpt-5.h5") << "left behind: " << entry.path();

  save_checkpoint(path, v2);  // a successful save replaces it
  EXPECT_EQ(load_checkpoint(path).state.ints.at("train/step"), 6);
}

TEST(Checkpoint, RejectsConflictingAndInvalidNames) {
  TempDir dir;
  StateDict s;
  s.tensors["a"] = Tensor::zeros({1});
  s.ints["a/b"] = 1;
  try {
    save_checkpoint(dir.file("x.h5"), s);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'a' is also the parent of 'a/b'"), std::string::npos) << e.what();
  }
  StateDict bad;
  bad.floats["x//y"] = 1.0;
  EXPECT_THROW(save_checkpoint(dir.file("x.h5"), bad), Error);
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.h5")));
  EXPECT_THROW(save_checkpoint(dir.file("x.h5"), StateDict{}, {{"checksum", "0"}}), Error);
}

TEST(Checkpoint, LoadIntoChecksShapesBeforeCopying) {
  TempDir dir;
  const std::string path = dir.file("m.h5");
  StateDict s;
  s.tensors["model/decoder/w"] = Tensor::from({1, 2, 3, 4, 5, 6}, {2, 3});
  s.tensors["model/b"] = Tensor::from({7, 8}, {2});
  save_checkpoint(path, s);
  const Checkpoint c = load_checkpoint(path);

  StateDict wrong;
  wrong.tensors["model/b"] = Tensor::zeros({2});
  wrong.tensors["model/decoder/w"] = Tensor::zeros({3, 2});
  try {
    load_tensors_into(c, wrong);
    FAIL();
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'model/decoder/w'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(2, 3) in the checkpoint but (3, 2) in the model"), std::string::npos) << msg;
  }
  EXPECT_EQ(wrong.tensors["model/b"].to_vector(), std::vector<double>({0, 0}));  // nothing copied

  StateDict missing;
  missing.tensors["model/absent"] = Tensor::zeros({1});
  EXPECT_THROW(load_tensors_into(c, missing), Error);

  StateDict right;
  Tensor w = Tensor::zeros({2, 3}, DType::f64);
  right.tensors["model/decoder/w"] = w;
  load_tensors_into(c, right);
  EXPECT_EQ(w.to_vector(), std::vector<double>({1, 2, 3, 4, 5, 6}));
}

// A checkpoint of a larger model (here an extra layer) must not load into a smaller one with the extra
// parameters silently dropped: under the owned prefix every checkpoint tensor needs a destination.
TEST(Checkpoint, LoadIntoRefusesParametersTheModelDoesNotHave) {
  TempDir dir;
  const std::string path = dir.file("m.h5");
  StateDict s;
  s.tensors["model/lstm/0/w"] = Tensor::from({1, 2}, {2});
  s.tensors["model/lstm/1/w"] = Tensor::from({3, 4}, {2});
  s.tensors["optim/m/0"] = Tensor::from({5}, {1});  // outside the prefix: not the model's business
  save_checkpoint(path, s);
  const Checkpoint c = load_checkpoint(path);
  StateDict smaller;
  smaller.tensors["model/lstm/0/w"] = Tensor::zeros({2});
  const std::string msg = testing::error_of([&] { load_tensors_into(c, smaller, "model/"); });
  EXPECT_NE(msg.find("'model/lstm/1/w' (2) is not in this model"), std::string::npos) << msg;
  EXPECT_EQ(smaller.tensors["model/lstm/0/w"].to_vector(), std::vector<double>({0, 0}));  // nothing copied
  load_tensors_into(c, smaller);  // without a prefix, a subset may be loaded on purpose
  EXPECT_EQ(smaller.tensors["model/lstm/0/w"].to_vector(), std::vector<double>({1, 2}));
  StateDict whole = smaller;
  whole.tensors["model/lstm/1/w"] = Tensor::zeros({2});
  load_tensors_into(c, whole, "model/");
  EXPECT_EQ(whole.tensors["model/lstm/1/w"].to_vector(), std::vector<double>({3, 4}));
}

TEST(Checkpoint, StringListsRoundTripAndCompare) {
  EXPECT_EQ(join_string_list({}), "");
  EXPECT_EQ(join_string_list({""}), "\n");
  EXPECT_EQ(split_string_list(""), std::vector<std::string>{});
  EXPECT_EQ(split_string_list("\n"), std::vector<std::string>{""});
  EXPECT_THROW(join_string_list({"a\nb"}), Error);

  TempDir dir;
  const std::vector<std::string> vocab = {"<unk>", "<s>", "</s>", "", "Straße", "l'été"};
  StateDict s;
  s.strings["vocab/src"] = join_string_list(vocab);
  save_checkpoint(dir.file("v.h5"), s);
  const Checkpoint c = load_checkpoint(dir.file("v.h5"));
  EXPECT_EQ(split_string_list(c.state.strings.at("vocab/src")), vocab);
  EXPECT_NO_THROW(check_string_list(c, "vocab/src", vocab));

  auto other = vocab;
  other[4] = "Strasse";
  try {
    check_string_list(c, "vocab/src", other);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("item 4: checkpoint has 'Straße', expected 'Strasse'"), std::string::npos)
        << e.what();
  }
  other = vocab;
  other.push_back("extra");
  try {
    check_string_list(c, "vocab/src", other);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has 6 items, expected 7"), std::string::npos) << e.what();
  }
  EXPECT_THROW(check_string_list(c, "vocab/tgt", vocab), Error);
}

}  // namespace
}  // namespace luong
