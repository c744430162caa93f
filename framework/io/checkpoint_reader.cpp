// load_checkpoint: opens, walks every dataset, dispatches on its `kind`, then verifies the checksum.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_checksum.h"
#include "framework/io/checkpoint_seal.h"
#include "framework/io/config_value.h"
#include "framework/io/hdf5_util.h"

namespace luong {
namespace {

using hdf5::Handle;

herr_t collect_link(hid_t, const char* name, const H5L_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->push_back(name);
  return 0;
}

herr_t collect_attribute(hid_t, const char* name, const H5A_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->push_back(name);
  return 0;
}

class Reader {
 public:
  Reader(const std::string& path, Checkpoint& out) : path_(path), out_(out) {}

  void open() {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(path_, ec))
      LUONG_FAIL("checkpoint ", path_, " is a directory, expected a checkpoint file (e.g. ", path_, "/best.h5)");
    if (!fs::exists(path_, ec)) LUONG_FAIL("checkpoint ", path_, ": no such file");
    if (!fs::is_regular_file(path_, ec)) LUONG_FAIL("checkpoint ", path_, " is not a regular file");
    // HDF5 answers "not an HDF5 file" for a file it cannot open at all; say why instead.
    errno = 0;
    if (!std::ifstream(path_, std::ios::binary))
      LUONG_FAIL("cannot read checkpoint ", path_, ": ", std::strerror(errno ? errno : EACCES));
    // Before HDF5 reads a byte: a damaged file can crash or hang the library (checkpoint_seal.h).
    check_checkpoint_seal(path_);
    if (H5Fis_hdf5(path_.c_str()) <= 0)
      hdf5::fail(path_, "not an HDF5 file (corrupted, truncated or not a checkpoint)");
    file_ = Handle(hdf5::check(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path_,
                               "cannot open (truncated or corrupted file?)"),
                   H5Fclose);
    const auto version = hdf5::read_int_attribute(file_.get(), "format_version", path_);
    if (!version) LUONG_FAIL("checkpoint ", path_, ": not a luong checkpoint (no format_version attribute)");
    if (*version < 1 || *version > kCheckpointFormatVersion)
      LUONG_FAIL("checkpoint ", path_, ": format version ", *version, " is not readable by luong ", LUONG_VERSION,
                 " (reads up to ", kCheckpointFormatVersion, ")");
    out_.format_version = *version;
  }

  void read_entries() {
    std::vector<std::string> links;
    hdf5::check_status(H5Lvisit(file_.get(), H5_INDEX_NAME, H5_ITER_INC, collect_link, &links), path_,
                       "cannot list the file's objects");
    for (const auto& name : links) {
      Handle obj(hdf5::check(H5Oopen(file_.get(), name.c_str(), H5P_DEFAULT), path_, "cannot open '" + name + "'"),
                 H5Oclose);
      if (H5Iget_type(obj.get()) != H5I_DATASET) continue;  // groups only structure the paths
      const auto kind = hdf5::read_string_attribute(obj.get(), "kind", path_);
      if (!kind) LUONG_FAIL("checkpoint ", path_, ": dataset '", name, "' has no 'kind' attribute");
      if (*kind == "tensor") {
        read_tensor(obj.get(), name);
      } else if (*kind == "int") {
        read_scalar(obj.get(), name, H5T_INTEGER, H5T_NATIVE_INT64, &out_.state.ints[name]);
      } else if (*kind == "float") {
        read_scalar(obj.get(), name, H5T_FLOAT, H5T_NATIVE_DOUBLE, &out_.state.floats[name]);
      } else if (*kind == "string") {
        out_.state.strings[name] = hdf5::read_string_value(obj.get(), path_, name);
      } else {
        LUONG_FAIL("checkpoint ", path_, ": dataset '", printable_excerpt(name), "' has unknown kind '",
                   printable_excerpt(*kind), "'");
      }
    }
  }

  // Checks the checksum over the stored form, then turns bf16 tensors (stored as float32) back.
  void verify() {
    const auto stored = hdf5::read_string_attribute(file_.get(), "checksum", path_);
    const auto algorithm = hdf5::read_string_attribute(file_.get(), "checksum_algorithm", path_);
    if (!stored || !algorithm) LUONG_FAIL("checkpoint ", path_, ": no checksum attribute");
    if (*algorithm != "fnv1a64")
      LUONG_FAIL("checkpoint ", path_, ": unknown checksum algorithm '", printable_excerpt(*algorithm), "'");
    const std::string actual = checksum_hex(checkpoint_checksum(out_.state));
    if (actual != *stored)
      // Quoted through printable(): a damaged attribute may hold any bytes.
      LUONG_FAIL("checkpoint ", path_, ": checksum mismatch (file says ", printable_excerpt(*stored),
                 ", contents hash to ", actual, "): the file is corrupted");
    for (const auto& name : bf16_) out_.state.tensors[name] = out_.state.tensors[name].to(DType::bf16);
  }

  void read_metadata() {
    std::vector<std::string> names;
    hdf5::check_status(H5Aiterate2(file_.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_attribute, &names),
                       path_, "cannot list root attributes");
    for (const auto& n : names) {
      if (n == "checksum" || n == "checksum_algorithm" || n == "format_version") continue;
      Handle attr(hdf5::check(H5Aopen(file_.get(), n.c_str(), H5P_DEFAULT), path_, "cannot open attribute " + n),
                  H5Aclose);
      Handle type(hdf5::check(H5Aget_type(attr.get()), path_, "cannot read attribute " + n), H5Tclose);
      if (H5Tget_class(type.get()) != H5T_STRING) continue;  // metadata is strings; others are not ours
      if (auto v = hdf5::read_string_attribute(file_.get(), n, path_)) out_.metadata[n] = *v;
    }
  }

 private:
  void read_tensor(hid_t ds, const std::string& name) {
    const std::string what = "cannot read tensor '" + name + "'";
    Handle type(hdf5::check(H5Dget_type(ds), path_, what), H5Tclose);
    const auto dtype = hdf5::dtype_of_type(type.get());
    if (!dtype) LUONG_FAIL("checkpoint ", path_, ": tensor '", name, "' has a type luong does not read");
    Handle space(hdf5::check(H5Dget_space(ds), path_, what), H5Sclose);
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 0) hdf5::fail(path_, what);
    std::vector<hsize_t> dims(static_cast<size_t>(rank));
    if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0) hdf5::fail(path_, what);
    Tensor t = Tensor::empty(Shape(dims.begin(), dims.end()), *dtype);
    if (t.numel() > 0)
      hdf5::check_status(H5Dread(ds, hdf5::memory_type(*dtype), H5S_ALL, H5S_ALL, H5P_DEFAULT, t.raw()), path_, what);
    const std::string saved = hdf5::read_string_attribute(ds, "dtype", path_).value_or(dtype_name(*dtype));
    if (saved == dtype_name(DType::bf16) && *dtype == DType::f32) {
      bf16_.push_back(name);
    } else if (saved != dtype_name(*dtype)) {
      LUONG_FAIL("checkpoint ", path_, ": tensor '", name, "' says dtype ", saved, " but stores ", *dtype);
    }
    out_.state.tensors[name] = t;
  }

  template <class T>
  void read_scalar(hid_t ds, const std::string& name, H5T_class_t cls, hid_t mem, T* value) {
    const std::string what = "cannot read '" + name + "'";
    Handle type(hdf5::check(H5Dget_type(ds), path_, what), H5Tclose);
    Handle space(hdf5::check(H5Dget_space(ds), path_, what), H5Sclose);
    if (H5Tget_class(type.get()) != cls || H5Sget_simple_extent_npoints(space.get()) != 1)
      LUONG_FAIL("checkpoint ", path_, ": '", name, "' is not a scalar of the kind its attribute says");
    hdf5::check_status(H5Dread(ds, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, value), path_, what);
  }

  std::string path_;
  Checkpoint& out_;
  Handle file_;
  std::vector<std::string> bf16_;
};

}  // namespace

Checkpoint load_checkpoint(const std::string& path) {
  hdf5::silence_errors();
  Checkpoint out;
  out.path = path;
  Reader r(path, out);
  r.open();
  r.read_entries();
  r.verify();
  r.read_metadata();
  return out;
}

}  // namespace luong
