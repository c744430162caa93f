// Device discovery and the tensor layer on CUDA: the device count works (0, never a crash) on machines
// without a driver, device selection names bad indices, and copies between host and device (and views with
// offsets) round-trip every dtype exactly.
#include <gtest/gtest.h>

#include "framework/core/cuda_info.h"
#include "tests/cuda/cuda_test_util.h"

#ifdef LUONG_WITH_CUDA
#include "framework/kernels/cuda/device.h"
#endif

namespace luong::testing {
namespace {

TEST(CudaDevice, DeviceCountIsNonNegativeAndNeverThrows) {
  int n = -1;
  EXPECT_NO_THROW(n = cuda_device_count());
  EXPECT_GE(n, 0);
  EXPECT_EQ(cuda_available(), n > 0);
#ifdef LUONG_WITH_CUDA
  EXPECT_EQ(cuda::device_count(), n);
#else
  EXPECT_EQ(n, 0);  // a CPU-only build sees no device even on a GPU machine
#endif
}

TEST(CudaDevice, TensorsOnAMissingDeviceFailWithTheDeviceName) {
  const int n = cuda_device_count();
  try {
    Tensor::empty({4}, DType::f32, Device::cuda(n));
    FAIL() << "a tensor on cuda:" << n << " should not be created";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuda:" + std::to_string(n)), std::string::npos) << e.what();
  }
}

#ifdef LUONG_WITH_CUDA
TEST(CudaDevice, SetDeviceRejectsIndicesOutOfRange) {
  try {
    cuda::set_device(-1);
    FAIL() << "set_device(-1) should throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuda:-1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(cuda::set_device(cuda_device_count()), Error);
}
#endif

TEST(CudaDevice, CopiesRoundTripEveryDtypeExactly) {
  LUONG_REQUIRE_CUDA();
  const Shape shape{37, 41};
  for (DType t : {DType::f32, DType::f64, DType::bf16, DType::i64, DType::u8}) {
    SCOPED_TRACE(dtype_name(t));
    Tensor host = random_tensor(shape, t, Device::cpu(), 90, 0, 200);
    Tensor dev = host.to(Device::cuda(0));
    EXPECT_TRUE(dev.is_cuda());
    Tensor dev2 = dev.clone();  // device to device
    EXPECT_NE(dev2.raw(), dev.raw());
    EXPECT_TRUE(bitwise_equal(dev2, host));
  }
}

TEST(CudaDevice, ViewsFillsAndZeroesWorkOnTheDevice) {
  LUONG_REQUIRE_CUDA();
  Tensor host = random_tensor({10, 7}, DType::f32, Device::cpu(), 91);
  Tensor dev = host.to(Device::cuda(0));
  // A view with an offset copies only its own rows, in both directions.
  EXPECT_TRUE(bitwise_equal(dev.narrow(3, 4), host.narrow(3, 4)));
  Tensor rows = dev.narrow(2, 3);
  rows.fill_(2.5);
  dev.select(9).zero_();
  const auto v = dev.to_vector(), h = host.to_vector();
  for (int64_t i = 0; i < 70; ++i) {
    const double want = i >= 63 ? 0.0 : (i >= 14 && i < 35 ? 2.5 : h[static_cast<size_t>(i)]);
    ASSERT_EQ(v[static_cast<size_t>(i)], want) << i;
  }
  Tensor as_double = dev.to(DType::f64);  // dtype conversion of a device tensor stays on the device
  EXPECT_TRUE(as_double.is_cuda());
  EXPECT_EQ(as_double.to_vector(), v);
  Tensor host_view = Tensor::zeros({4, 7});
  host_view.copy_(dev.narrow(1, 4));
  EXPECT_TRUE(bitwise_equal(host_view, dev.narrow(1, 4)));
}

}  // namespace
}  // namespace luong::testing
