#include "framework/io/hdf5_util.h"

#include <vector>

#include "framework/core/error.h"

namespace luong::hdf5 {

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = o.id_;
    closer_ = o.closer_;
    o.id_ = -1;
  }
  return *this;
}

void Handle::reset() { close(); }

bool Handle::close() {
  bool ok = true;
  if (id_ >= 0 && closer_) ok = closer_(id_) >= 0;
  id_ = -1;
  return ok;
}

void silence_errors() {
  // Once, before the library's first use, so that HDF5 installs no atexit handler. When a write fails part
  // way (a full disk), H5Fclose fails too and leaves the file in HDF5's tables; the handler then closed it
  // again at exit and crashed (HDF5 1.10: SIGSEGV in H5F__close_cb) after the clean error had been printed,
  // turning exit status 1 into 139. A process that exits needs none of that clean-up.
  static const bool no_atexit = H5dont_atexit() >= 0;
  (void)no_atexit;
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

namespace {

herr_t innermost(unsigned, const H5E_error2_t* err, void* data) {
  auto* out = static_cast<std::string*>(data);
  // Walking upward, the first entry is the lowest-level cause; keep it.
  if (out->empty() && err->desc && err->desc[0]) *out = err->desc;
  return 0;
}

// HDF5's POSIX driver describes a failed write as "file write failed: time = ..., filename = ..., file
// descriptor = 5, errno = 28, error message = 'No space left on device', buf = 0x..., ...". The system's
// message is what the user needs: "file write failed: No space left on device".
std::string concise(const std::string& desc) {
  const std::string key = "error message = '";
  const size_t at = desc.find(key);
  const size_t end = at == std::string::npos ? at : desc.find('\'', at + key.size());
  if (end == std::string::npos) return desc;
  const size_t colon = desc.find(':');
  return (colon < at ? desc.substr(0, colon + 1) + " " : std::string()) +
         desc.substr(at + key.size(), end - at - key.size());
}

}  // namespace

std::string last_error() {
  std::string out;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, &out);
  return concise(out);
}

void fail(const std::string& file, const std::string& what) {
  const std::string cause = last_error();
  H5Eclear2(H5E_DEFAULT);
  if (cause.empty()) LUONG_FAIL("checkpoint ", file, ": ", what);
  LUONG_FAIL("checkpoint ", file, ": ", what, " (HDF5: ", cause, ")");
}

hid_t check(hid_t id, const std::string& file, const std::string& what) {
  if (id < 0) fail(file, what);
  return id;
}

void check_status(herr_t status, const std::string& file, const std::string& what) {
  if (status < 0) fail(file, what);
}

hid_t file_type(DType t) {
  switch (t) {
    case DType::f32: return H5T_IEEE_F32LE;
    case DType::f64: return H5T_IEEE_F64LE;
    case DType::i64: return H5T_STD_I64LE;
    case DType::u8: return H5T_STD_U8LE;
    case DType::bf16: break;
  }
  LUONG_FAIL("hdf5: dtype ", dtype_name(t), " has no file type (store bfloat16 as float32)");
}

hid_t memory_type(DType t) {
  switch (t) {
    case DType::f32: return H5T_NATIVE_FLOAT;
    case DType::f64: return H5T_NATIVE_DOUBLE;
    case DType::i64: return H5T_NATIVE_INT64;
    case DType::u8: return H5T_NATIVE_UINT8;
    case DType::bf16: break;
  }
  LUONG_FAIL("hdf5: dtype ", dtype_name(t), " has no memory type (store bfloat16 as float32)");
}

std::optional<DType> dtype_of_type(hid_t type) {
  const H5T_class_t cls = H5Tget_class(type);
  const size_t size = H5Tget_size(type);
  if (cls == H5T_FLOAT && size == 4) return DType::f32;
  if (cls == H5T_FLOAT && size == 8) return DType::f64;
  if (cls == H5T_INTEGER) {
    const H5T_sign_t sign = H5Tget_sign(type);
    if (size == 8 && sign == H5T_SGN_2) return DType::i64;
    if (size == 1 && sign == H5T_SGN_NONE) return DType::u8;
  }
  return std::nullopt;
}

Handle utf8_string_type(const std::string& file) {
  Handle t(check(H5Tcopy(H5T_C_S1), file, "cannot create string type"), H5Tclose);
  check_status(H5Tset_size(t.get(), H5T_VARIABLE), file, "cannot create string type");
  check_status(H5Tset_cset(t.get(), H5T_CSET_UTF8), file, "cannot create string type");
  return t;
}

void write_string_attribute(hid_t obj, const std::string& name, const std::string& value, const std::string& file) {
  const std::string what = "cannot write attribute '" + name + "'";
  Handle type = utf8_string_type(file);
  Handle space(check(H5Screate(H5S_SCALAR), file, what), H5Sclose);
  Handle attr(check(H5Acreate2(obj, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), file, what),
              H5Aclose);
  const char* ptr = value.c_str();
  check_status(H5Awrite(attr.get(), type.get(), &ptr), file, what);
}

void write_int_attribute(hid_t obj, const std::string& name, int64_t value, const std::string& file) {
  const std::string what = "cannot write attribute '" + name + "'";
  Handle space(check(H5Screate(H5S_SCALAR), file, what), H5Sclose);
  Handle attr(check(H5Acreate2(obj, name.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), file, what),
              H5Aclose);
  check_status(H5Awrite(attr.get(), H5T_NATIVE_INT64, &value), file, what);
}

namespace {

// Reads one scalar string through `read(mem_type, buffer)`, whether stored variable- or fixed-length.
template <class Read>
std::string read_string(hid_t stored_type, const std::string& file, const std::string& what, Read read) {
  if (H5Tget_class(stored_type) != H5T_STRING) fail(file, what + ": not a string");
  const htri_t is_var = H5Tis_variable_str(stored_type);
  if (is_var < 0) fail(file, what);
  if (is_var > 0) {
    Handle mem = utf8_string_type(file);
    char* ptr = nullptr;
    check_status(read(mem.get(), static_cast<void*>(&ptr)), file, what);
    std::string out = ptr ? ptr : "";
    H5free_memory(ptr);
    return out;
  }
  const size_t size = H5Tget_size(stored_type);
  Handle mem(check(H5Tcopy(H5T_C_S1), file, what), H5Tclose);
  check_status(H5Tset_size(mem.get(), size + 1), file, what);
  std::vector<char> buf(size + 1, '\0');
  check_status(read(mem.get(), static_cast<void*>(buf.data())), file, what);
  return std::string(buf.data());
}

}  // namespace

std::optional<std::string> read_string_attribute(hid_t obj, const std::string& name, const std::string& file) {
  const std::string what = "cannot read attribute '" + name + "'";
  const htri_t exists = H5Aexists(obj, name.c_str());
  if (exists < 0) fail(file, what);
  if (exists == 0) return std::nullopt;
  Handle attr(check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), file, what), H5Aclose);
  Handle type(check(H5Aget_type(attr.get()), file, what), H5Tclose);
  return read_string(type.get(), file, what, [&](hid_t mem, void* buf) { return H5Aread(attr.get(), mem, buf); });
}

std::optional<int64_t> read_int_attribute(hid_t obj, const std::string& name, const std::string& file) {
  const std::string what = "cannot read attribute '" + name + "'";
  const htri_t exists = H5Aexists(obj, name.c_str());
  if (exists < 0) fail(file, what);
  if (exists == 0) return std::nullopt;
  Handle attr(check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), file, what), H5Aclose);
  Handle type(check(H5Aget_type(attr.get()), file, what), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_INTEGER) fail(file, what + ": not an integer");
  int64_t value = 0;
  check_status(H5Aread(attr.get(), H5T_NATIVE_INT64, &value), file, what);
  return value;
}

std::string read_string_value(hid_t dataset, const std::string& file, const std::string& name) {
  const std::string what = "cannot read string '" + name + "'";
  Handle type(check(H5Dget_type(dataset), file, what), H5Tclose);
  return read_string(type.get(), file, what, [&](hid_t mem, void* buf) {
    return H5Dread(dataset, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
  });
}

}  // namespace luong::hdf5
