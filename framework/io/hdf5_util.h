// Thin RAII and error helpers over the HDF5 C library, shared by the checkpoint writer and reader.
// Every failure becomes a luong::Error naming the file; HDF5's own stderr error printing is switched off
// and its innermost message is appended to ours instead.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <optional>
#include <string>

#include "framework/core/dtype.h"

namespace luong::hdf5 {

// Owns one HDF5 identifier and closes it with the matching H5*close function.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept;
  ~Handle() { reset(); }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  void reset();
  // Closes now and reports whether closing succeeded (a failed close of a file means unflushed data).
  bool close();

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

// Turns off HDF5's automatic error-stack printing for this thread (idempotent).
void silence_errors();
// The innermost message of the current HDF5 error stack ("truncated file: eof = ..."), or "".
std::string last_error();
// Throws luong::Error "checkpoint <file>: <what>[ (HDF5: <innermost message>)]".
[[noreturn]] void fail(const std::string& file, const std::string& what);
// Returns id, or fails with `what` when id is negative.
hid_t check(hid_t id, const std::string& file, const std::string& what);
void check_status(herr_t status, const std::string& file, const std::string& what);

// The file and memory types used for each luong dtype (bf16 is stored as float32 by the caller).
hid_t file_type(DType t);
hid_t memory_type(DType t);
// The luong dtype of a dataset's stored type, or nullopt for types luong does not store.
std::optional<DType> dtype_of_type(hid_t type);

// A variable-length UTF-8 string type (caller owns the handle).
Handle utf8_string_type(const std::string& file);

// Scalar attributes on any object (file root, group, dataset).
void write_string_attribute(hid_t obj, const std::string& name, const std::string& value, const std::string& file);
void write_int_attribute(hid_t obj, const std::string& name, int64_t value, const std::string& file);
std::optional<std::string> read_string_attribute(hid_t obj, const std::string& name, const std::string& file);
std::optional<int64_t> read_int_attribute(hid_t obj, const std::string& name, const std::string& file);

// Reads a scalar string dataset (variable- or fixed-length).
std::string read_string_value(hid_t dataset, const std::string& file, const std::string& name);

}  // namespace luong::hdf5
