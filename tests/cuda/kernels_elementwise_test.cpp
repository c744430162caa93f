// CUDA elementwise, LSTM-cell, optimizer, dropout, gather and copy kernels against their CPU twins on odd
// sizes. Where the CUDA kernel performs the CPU's exact operations in the same order the results must be
// bitwise equal; transcendental functions (CUDA's libdevice vs glibc) are compared with a tolerance.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/cuda/cuda_test_util.h"

#ifdef LUONG_WITH_CUDA
#include "framework/kernels/cpu/elementwise.h"
#include "framework/kernels/cpu/gather.h"
#include "framework/kernels/cpu/lstm_cell.h"
#include "framework/kernels/cpu/optim_kernels.h"
#include "framework/kernels/cpu/reduce.h"
#include "framework/kernels/cuda/device.h"
#include "framework/kernels/cuda/kernels.h"
#include "framework/ops/tensor_math.h"
#include "framework/optim/frozen_parameters.h"
#include "framework/optim/optimizer.h"
#include "framework/optim/weight_average.h"
#include "tests/cuda/kernel_pair.h"

namespace luong::testing {
namespace {

constexpr double kFloatTol = 2e-6;  // a few float32 ulps of O(1) values

TEST(CudaElementwise, UnaryForwardAndBackwardMatchTheCpu) {
  LUONG_REQUIRE_CUDA();
  const int64_t n = 100003;
  for (UnaryKind k : {UnaryKind::tanh, UnaryKind::sigmoid, UnaryKind::relu, UnaryKind::exp, UnaryKind::log,
                      UnaryKind::neg, UnaryKind::sqrt}) {
    SCOPED_TRACE(static_cast<int>(k));
    const bool positive = k == UnaryKind::log || k == UnaryKind::sqrt;
    KernelPair x = random_pair({n}, DType::f32, 1, positive ? 0.1 : -3.0, 3.0);
    KernelPair y = random_pair({n}, DType::f32, 2), gy = random_pair({n}, DType::f32, 3);
    KernelPair gx = random_pair({n}, DType::f32, 4);  // backward accumulates into existing values
    cpu::unary_forward<float>(k, n, x.c<float>(), y.c<float>());
    cuda::unary_forward<float>(k, n, x.g<float>(), y.g<float>());
    EXPECT_LE(y.error(), kFloatTol);
    cpu::unary_backward<float>(k, n, x.c<float>(), y.c<float>(), gy.c<float>(), gx.c<float>());
    cuda::unary_backward<float>(k, n, x.g<float>(), y.g<float>(), gy.g<float>(), gx.g<float>());
    EXPECT_LE(gx.error(), 1e-5);
  }
}

TEST(CudaElementwise, BinaryBroadcastsAreBitwiseTheCpuAndTheAffineFamilyMatches) {
  LUONG_REQUIRE_CUDA();
  const int64_t rows = 301, cols = 67, n = rows * cols;
  KernelPair a = random_pair({n}, DType::f64, 5), b = random_pair({cols}, DType::f64, 6, 0.5, 2.0);
  for (BinaryKind k : {BinaryKind::add, BinaryKind::sub, BinaryKind::mul, BinaryKind::div}) {
    KernelPair out = random_pair({n}, DType::f64, 7), out_rev = random_pair({n}, DType::f64, 8);
    cpu::binary_forward<double>(k, n, n, a.c<double>(), cols, b.c<double>(), out.c<double>());
    cuda::binary_forward<double>(k, n, n, a.g<double>(), cols, b.g<double>(), out.g<double>());
    EXPECT_TRUE(out.identical()) << static_cast<int>(k);
    cpu::binary_forward<double>(k, n, cols, b.c<double>(), n, a.c<double>(), out_rev.c<double>());
    cuda::binary_forward<double>(k, n, cols, b.g<double>(), n, a.g<double>(), out_rev.g<double>());
    EXPECT_TRUE(out_rev.identical()) << static_cast<int>(k);
  }
  KernelPair y = random_pair({n}, DType::f64, 9);
  cpu::affine<double>(n, a.c<double>(), 1.5, -0.25, y.c<double>());
  cuda::affine<double>(n, a.g<double>(), 1.5, -0.25, y.g<double>());
  EXPECT_LE(y.error(), 1e-15);  // either compiler may fuse alpha * x + beta into one FMA
  cpu::axpy<double>(n, -0.75, a.c<double>(), y.c<double>());
  cuda::axpy<double>(n, -0.75, a.g<double>(), y.g<double>());
  EXPECT_LE(y.error(), 1e-15);
  cpu::scale<double>(n, 3.0, y.c<double>());
  cuda::scale<double>(n, 3.0, y.g<double>());
  EXPECT_LE(y.error(), 1e-15);
}

TEST(CudaElementwise, MaskedFillAndItsBackwardFollowTheSuffixMask) {
  LUONG_REQUIRE_CUDA();
  const int64_t n = 13 * 7 * 33, n_mask = 33;
  std::vector<double> bits = uniform_values(n_mask, 10, 0.0, 1.0);
  for (auto& v : bits) v = v < 0.5 ? 0.0 : 1.0;
  KernelPair mask = make_pair(Tensor::from(bits, {n_mask}, DType::u8));
  KernelPair x = random_pair({n}, DType::f32, 11), y = random_pair({n}, DType::f32, 12);
  KernelPair gx = random_pair({n}, DType::f32, 13);
  cpu::masked_fill<float>(n, x.c<float>(), n_mask, mask.c<uint8_t>(), -3.f, y.c<float>());
  cuda::masked_fill<float>(n, x.g<float>(), n_mask, mask.g<uint8_t>(), -3.f, y.g<float>());
  EXPECT_TRUE(y.identical());
  cpu::masked_fill_backward<float>(n, x.c<float>(), n_mask, mask.c<uint8_t>(), gx.c<float>());
  cuda::masked_fill_backward<float>(n, x.g<float>(), n_mask, mask.g<uint8_t>(), gx.g<float>());
  EXPECT_TRUE(gx.identical());
}

TEST(CudaElementwise, SumRowsAccumulateMatchesTheCpuOnBothPaths) {
  LUONG_REQUIRE_CUDA();
  // Chunked: 1000 x 70, a deferred bias gradient's 6400 x 4096 (4 x hidden 1024), and 20000 x 70 (128-row
  // chunks, at most 256 of them); a thread per column: few rows, or 70000 columns.
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{100, 70}, {1000, 70}, {5, 5000}, {6400, 4096}, {20000, 70},
                            {300, 70000}}) {
    KernelPair x = random_pair({rows, cols}, DType::f32, 14), out = random_pair({cols}, DType::f32, 15);
    cpu::sum_rows_accumulate<float>(rows, cols, x.c<float>(), out.c<float>());
    cuda::sum_rows_accumulate<float>(rows, cols, x.g<float>(), out.g<float>());
    if (rows <= 256 || cols >= 65536) {  // a thread per column: the CPU's summation order
      EXPECT_TRUE(out.identical()) << rows << "x" << cols;
    }
    // float32 sums of `rows` terms in two orders drift apart with the rows; a wrong index errs by O(1).
    EXPECT_LE(out.error(), 1e-5 * std::max<int64_t>(1, rows / 256)) << rows << "x" << cols;
  }
}

TEST(CudaElementwise, DropoutMaskIsBitwiseTheCpuMask) {
  LUONG_REQUIRE_CUDA();
  const int64_t n = 100001;
  KernelPair mf = random_pair({n}, DType::f32, 16), md = random_pair({n}, DType::f64, 17);
  cpu::dropout_mask<float>(n, 0.37f, 77, 13, mf.c<float>());
  cuda::dropout_mask<float>(n, 0.37f, 77, 13, mf.g<float>());
  EXPECT_TRUE(mf.identical());
  cpu::dropout_mask<double>(n, 0.37f, 77, 13, md.c<double>());
  cuda::dropout_mask<double>(n, 0.37f, 77, 13, md.g<double>());
  EXPECT_TRUE(md.identical());
  const double kept = sum_all(md.gpu) * (1.0 - 0.37) / static_cast<double>(n);
  EXPECT_NEAR(kept, 0.63, 0.01);
}

TEST(CudaLstmCell, ForwardAndBackwardMatchTheCpuWithOptionalGradients) {
  LUONG_REQUIRE_CUDA();
  const int64_t B = 37, H = 65;
  KernelPair z = random_pair({B, 4 * H}, DType::f64, 18, -3, 3), c_prev = random_pair({B, H}, DType::f64, 19);
  KernelPair gates = random_pair({B, 4 * H}, DType::f64, 20), c = random_pair({B, H}, DType::f64, 21);
  KernelPair h = random_pair({B, H}, DType::f64, 23);
  cpu::lstm_cell_forward<double>(B, H, z.c<double>(), c_prev.c<double>(), gates.c<double>(), c.c<double>(),
                                 h.c<double>());
  cuda::lstm_cell_forward<double>(B, H, z.g<double>(), c_prev.g<double>(), gates.g<double>(), c.g<double>(),
                                  h.g<double>());
  for (const KernelPair* p : {&gates, &c, &h}) EXPECT_LE(p->error(), 1e-14);
  {  // the bias added by the kernel (a cell whose input product is its own GEMM)
    KernelPair bias = random_pair({4 * H}, DType::f64, 22, -1, 1);
    KernelPair gb = random_pair({B, 4 * H}, DType::f64, 20), cb = random_pair({B, H}, DType::f64, 21);
    KernelPair hb = random_pair({B, H}, DType::f64, 23);
    cpu::lstm_cell_forward<double>(B, H, z.c<double>(), c_prev.c<double>(), gb.c<double>(), cb.c<double>(),
                                   hb.c<double>(), bias.c<double>());
    cuda::lstm_cell_forward<double>(B, H, z.g<double>(), c_prev.g<double>(), gb.g<double>(), cb.g<double>(),
                                    hb.g<double>(), bias.g<double>());
    for (const KernelPair* p : {&gb, &cb, &hb}) EXPECT_LE(p->error(), 1e-14) << "with a bias";
    EXPECT_GT(max_mixed_error(gb.cpu, gates.cpu), 1e-6) << "the bias must change the gates";
  }
  KernelPair dh = random_pair({B, H}, DType::f64, 24), dc = random_pair({B, H}, DType::f64, 25);
  for (int variant = 0; variant < 3; ++variant) {  // both gradients, dh only (no dc_prev), dc only
    KernelPair dz = random_pair({B, 4 * H}, DType::f64, 26), dc_prev = random_pair({B, H}, DType::f64, 27);
    const bool use_dh = variant != 2, use_dc = variant != 1, use_prev = variant != 1;
    cpu::lstm_cell_backward<double>(B, H, gates.c<double>(), c_prev.c<double>(), c.c<double>(),
                                    use_dh ? dh.c<double>() : nullptr, use_dc ? dc.c<double>() : nullptr,
                                    dz.c<double>(), use_prev ? dc_prev.c<double>() : nullptr);
    cuda::lstm_cell_backward<double>(B, H, gates.g<double>(), c_prev.g<double>(), c.g<double>(),
                                     use_dh ? dh.g<double>() : nullptr, use_dc ? dc.g<double>() : nullptr,
                                     dz.g<double>(), use_prev ? dc_prev.g<double>() : nullptr);
    EXPECT_LE(dz.error(), 1e-14) << variant;
    EXPECT_LE(dc_prev.error(), 1e-14) << variant;
  }
  // dc_prev overwritten (accumulate_dc_prev false) on the GPU over garbage, against the CPU accumulating into
  // zeros: the same values.
  KernelPair dz = random_pair({B, 4 * H}, DType::f64, 28), dc_prev = random_pair({B, H}, DType::f64, 29);
  dc_prev.cpu.zero_();
  cpu::lstm_cell_backward<double>(B, H, gates.c<double>(), c_prev.c<double>(), c.c<double>(), dh.c<double>(),
                                  dc.c<double>(), dz.c<double>(), dc_prev.c<double>());
  cuda::lstm_cell_backward<double>(B, H, gates.g<double>(), c_prev.g<double>(), c.g<double>(), dh.g<double>(),
                                   dc.g<double>(), dz.g<double>(), dc_prev.g<double>(), false);
  EXPECT_LE(dc_prev.error(), 1e-14);
}

// Runs without a GPU: the CPU kernel's overwrite mode gives bitwise what zero-filling and accumulating gives,
// whatever the buffer held (lstm_sequence relies on it to skip a fill per step).
TEST(CudaLstmCell, CpuOverwriteOfDcPrevEqualsZeroFillThenAccumulate) {
  const int64_t B = 9, H = 33;
  const Tensor gates = random_tensor({B, 4 * H}, DType::f32, Device::cpu(), 30, 0, 1);
  const Tensor c_prev = random_tensor({B, H}, DType::f32, Device::cpu(), 31);
  const Tensor c = random_tensor({B, H}, DType::f32, Device::cpu(), 32);
  const Tensor dh = random_tensor({B, H}, DType::f32, Device::cpu(), 33);
  const Tensor dc = random_tensor({B, H}, DType::f32, Device::cpu(), 34);
  Tensor dz1 = Tensor::empty({B, 4 * H}, DType::f32, Device::cpu()), dz2 = dz1.clone();
  Tensor zeroed = Tensor::zeros({B, H}, DType::f32, Device::cpu());
  Tensor garbage = random_tensor({B, H}, DType::f32, Device::cpu(), 35, -1e6, 1e6);
  cpu::lstm_cell_backward<float>(B, H, gates.data<float>(), c_prev.data<float>(), c.data<float>(), dh.data<float>(),
                                 dc.data<float>(), dz1.data<float>(), zeroed.data<float>());
  cpu::lstm_cell_backward<float>(B, H, gates.data<float>(), c_prev.data<float>(), c.data<float>(), dh.data<float>(),
                                 dc.data<float>(), dz2.data<float>(), garbage.data<float>(), false);
  EXPECT_TRUE(bitwise_equal(garbage, zeroed));
  EXPECT_TRUE(bitwise_equal(dz2, dz1));
}

TEST(CudaOptim, SgdAndAdamUpdatesMatchTheCpu) {
  LUONG_REQUIRE_CUDA();
  const int64_t n = 40001;
  for (bool momentum : {false, true}) {
    KernelPair p = random_pair({n}, DType::f64, 28), g = random_pair({n}, DType::f64, 29);
    KernelPair m = random_pair({n}, DType::f64, 30);
    cpu::sgd_update<double>(n, p.c<double>(), g.c<double>(), 0.37, momentum ? m.c<double>() : nullptr, 0.1, 0.9, 1e-4);
    cuda::sgd_update<double>(n, p.g<double>(), g.g<double>(), 0.37, momentum ? m.g<double>() : nullptr, 0.1, 0.9, 1e-4);
    EXPECT_TRUE(p.identical());  // both built without FMA contraction (CMakeLists.txt): the same roundings
    EXPECT_TRUE(m.identical());
  }
  for (bool decoupled : {false, true}) {
    KernelPair p = random_pair({n}, DType::f64, 31), g = random_pair({n}, DType::f64, 32);
    KernelPair m = random_pair({n}, DType::f64, 33), v = random_pair({n}, DType::f64, 34, 0.0, 1.0);
    cpu::adam_update<double>(n, p.c<double>(), g.c<double>(), 0.37, m.c<double>(), v.c<double>(), 1e-3, 0.9, 0.999,
                             1e-8, 0.01, decoupled, 0.19, 0.002);
    cuda::adam_update<double>(n, p.g<double>(), g.g<double>(), 0.37, m.g<double>(), v.g<double>(), 1e-3, 0.9, 0.999,
                              1e-8, 0.01, decoupled, 0.19, 0.002);
    for (const KernelPair* t : {&p, &m, &v}) EXPECT_TRUE(t->identical()) << decoupled << " error " << t->error();
  }
}

// The parameter average (optim.ema_decay) and its exchange with the model's buffer: the same bits on both devices,
// so a GPU run's average is the CPU's.
TEST(CudaOptim, ParameterAverageAndSwapMatchTheCpu) {
  LUONG_REQUIRE_CUDA();
  const int64_t n = 40001;
  for (DType dtype : {DType::f32, DType::f64}) {
    KernelPair average = random_pair({n}, dtype, 37), param = random_pair({n}, dtype, 38);
    if (dtype == DType::f32) {
      cpu::ema_update<float>(n, average.c<float>(), param.c<float>(), 0.0123f);
      cuda::ema_update<float>(n, average.g<float>(), param.g<float>(), 0.0123f);
      cpu::swap_values<float>(n, average.c<float>(), param.c<float>());
      cuda::swap_values<float>(n, average.g<float>(), param.g<float>());
    } else {
      cpu::ema_update<double>(n, average.c<double>(), param.c<double>(), 0.0123);
      cuda::ema_update<double>(n, average.g<double>(), param.g<double>(), 0.0123);
      cpu::swap_values<double>(n, average.c<double>(), param.c<double>());
      cuda::swap_values<double>(n, average.g<double>(), param.g<double>());
    }
    EXPECT_TRUE(average.identical()) << dtype_name(dtype) << " error " << average.error();
    EXPECT_TRUE(param.identical()) << dtype_name(dtype) << " error " << param.error();
  }
}

// The trainer's average object on a device: updates, the swap in and out around a validation, and a restore
// from host values (a checkpoint) give the CPU's bits.
TEST(CudaOptim, ParameterAverageOnTheDeviceIsTheCpus) {
  LUONG_REQUIRE_CUDA();
  const int64_t n = 5003;
  ExponentialMovingAverage cpu_average(0.95), gpu_average(0.95);
  Tensor cpu_params = random_tensor({n}, DType::f32, Device::cpu(), 40);
  Tensor gpu_params = cpu_params.to(Device::cuda());
  for (uint64_t step = 0; step < 4; ++step) {
    const Tensor next = random_tensor({n}, DType::f32, Device::cpu(), 41 + step);
    cpu_params.copy_(next), gpu_params.copy_(next);
    cpu_average.update(cpu_params), gpu_average.update(gpu_params);
  }
  EXPECT_EQ(gpu_average.average().device(), Device::cuda());
  EXPECT_EQ(gpu_average.average().to(Device::cpu()).to_vector(), cpu_average.average().to_vector());
  // train.freeze averages the trained spans only (pointer offsets into the device buffers).
  {
    ExponentialMovingAverage cpu_spans(0.95), gpu_spans(0.95);
    const std::vector<FlatSpan> trained{{0, 1000}, {2500, 2503}};
    for (uint64_t step = 0; step < 3; ++step) {
      const Tensor next = random_tensor({n}, DType::f32, Device::cpu(), 60 + step);
      const Tensor on_device = next.to(Device::cuda());
      cpu_spans.update(next, trained), gpu_spans.update(on_device, trained);
    }
    EXPECT_EQ(gpu_spans.average().to(Device::cpu()).to_vector(), cpu_spans.average().to_vector());
  }
  {
    AveragedWeights in(&gpu_average, gpu_params);
    EXPECT_EQ(gpu_params.to(Device::cpu()).to_vector(), cpu_average.average().to_vector());
  }
  EXPECT_EQ(gpu_params.to(Device::cpu()).to_vector(), cpu_params.to_vector());
  ExponentialMovingAverage restored(0.95);
  restored.restore(cpu_average.average(), 4, gpu_params);  // host values onto the parameters' device
  EXPECT_EQ(restored.average().device(), Device::cuda());
  EXPECT_EQ(restored.average().to(Device::cpu()).to_vector(), cpu_average.average().to_vector());
}

// train.freeze on a device: an update of the trained spans leaves the frozen values as they were, bit for bit
// (weight decay included), and gives the trained ones the CPU's update.
TEST(CudaOptim, FrozenParametersOnTheDeviceAreTheCpus) {
  LUONG_REQUIRE_CUDA();
  const auto flat = [](Device device) {
    std::vector<Variable> ps;
    for (int64_t k = 0; k < 3; ++k)
      ps.emplace_back(random_tensor({1000 + k}, DType::f32, Device::cpu(), 50 + static_cast<uint64_t>(k)), true, "p");
    FlatParameters fp(ps, device);
    fp.grad().copy_(random_tensor({fp.numel()}, DType::f32, Device::cpu(), 60));
    return fp;
  };
  FlatParameters cpu = flat(Device::cpu()), gpu = flat(Device::cuda());
  const FrozenParameters cpu_frozen(cpu, {0, 2}), gpu_frozen(gpu, {0, 2});
  ASSERT_EQ(gpu_frozen.trained_spans(), (std::vector<FlatSpan>{{1000, 1001}}));
  OptimizerOptions o;
  o.weight_decay = 0.1;
  const auto cpu_adam = make_optimizer("adam", o), gpu_adam = make_optimizer("adam", o);
  cpu_adam->step(cpu, 0.01, 1.0, cpu_frozen.trained_spans());
  gpu_adam->step(gpu, 0.01, 1.0, gpu_frozen.trained_spans());
  // Frozen: the values they started with, bit for bit; trained: the CPU's update to rounding.
  EXPECT_EQ(gpu.data().narrow(0, 1000).to(Device::cpu()).to_vector(),
            random_tensor({1000}, DType::f32, Device::cpu(), 50).to_vector());
  EXPECT_EQ(gpu.data().narrow(2001, 1002).to(Device::cpu()).to_vector(),
            random_tensor({1002}, DType::f32, Device::cpu(), 52).to_vector());
  const std::vector<double> g = gpu.data().to(Device::cpu()).to_vector(), c = cpu.data().to_vector();
  ASSERT_EQ(g.size(), c.size());
  for (size_t i = 1000; i < 2001; ++i) EXPECT_NEAR(g[i], c[i], 1e-6) << i;
  EXPECT_NE(g[1500], random_tensor({1001}, DType::f32, Device::cpu(), 51).to_vector()[500]);
}

TEST(CudaGather, EmbeddingForwardCopiesRowsAndReportsTheFirstBadId) {
  LUONG_REQUIRE_CUDA();
  const int64_t rows = 50, dim = 33;
  KernelPair table = random_pair({rows, dim}, DType::f32, 35);
  std::vector<int64_t> ids(301);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>((i * 7) % rows);
  KernelPair idp = make_pair(Tensor::from_ids(ids, {301}));
  KernelPair out = random_pair({301, dim}, DType::f32, 36);
  EXPECT_EQ(cpu::embedding_forward<float>(301, dim, rows, idp.c<int64_t>(), table.c<float>(), out.c<float>()), -1);
  EXPECT_EQ(cuda::embedding_forward<float>(301, dim, rows, idp.g<int64_t>(), table.g<float>(), out.g<float>()), -1);
  EXPECT_TRUE(out.identical());
  ids[9] = rows, ids[5] = -1, ids[200] = 1000;
  KernelPair bad = make_pair(Tensor::from_ids(ids, {301}));
  EXPECT_EQ(cuda::embedding_forward<float>(301, dim, rows, bad.g<int64_t>(), table.g<float>(), out.g<float>()), 5);
}

TEST(CudaGather, EmbeddingBackwardDeterministicModeIsBitwiseTheCpu) {
  LUONG_REQUIRE_CUDA();
  const int64_t n = 5000, rows = 100, dim = 67, padding = 7;
  std::vector<int64_t> ids(n);
  Generator gen(37);
  for (auto& id : ids) id = static_cast<int64_t>(gen.below(rows));  // ~50 repeats of each id
  KernelPair idp = make_pair(Tensor::from_ids(ids, {n}));
  KernelPair gout = random_pair({n, dim}, DType::f32, 38);
  ASSERT_TRUE(cuda::deterministic());
  KernelPair gtable = random_pair({rows, dim}, DType::f32, 39);
  cpu::embedding_backward<float>(n, dim, idp.c<int64_t>(), padding, gout.c<float>(), gtable.c<float>());
  cuda::embedding_backward<float>(n, dim, idp.g<int64_t>(), padding, gout.g<float>(), gtable.g<float>());
  EXPECT_TRUE(gtable.identical());

  cuda::set_deterministic(false);  // atomics: same sums up to float32 reordering
  KernelPair fast = random_pair({rows, dim}, DType::f32, 39);
  cuda::embedding_backward<float>(n, dim, idp.g<int64_t>(), padding, gout.g<float>(), fast.g<float>());
  cuda::set_deterministic(true);
  EXPECT_LE(max_mixed_error(fast.gpu, gtable.cpu), 1e-5);
  // The padding row received nothing in either mode.
  const auto before = random_tensor({rows, dim}, DType::f32, Device::cpu(), 39).to_vector();
  const auto after = fast.gpu.to_vector();
  for (int64_t j = 0; j < dim; ++j) EXPECT_EQ(after[padding * dim + j], before[padding * dim + j]);

  KernelPair gi = make_pair(Tensor::from_ids(std::vector<int64_t>(n * 2, 3), {n, 2}));  // int64 tables too
  KernelPair ti = make_pair(Tensor::zeros({rows, 2}, DType::i64));
  cpu::embedding_backward<int64_t>(n, 2, idp.c<int64_t>(), padding, gi.c<int64_t>(), ti.c<int64_t>());
  cuda::embedding_backward<int64_t>(n, 2, idp.g<int64_t>(), padding, gi.g<int64_t>(), ti.g<int64_t>());
  EXPECT_TRUE(ti.identical());
}

TEST(CudaGather, CopyBlockAndTransposeAreBitwiseTheCpuForEveryType) {
  LUONG_REQUIRE_CUDA();
  for (DType t : {DType::f32, DType::f64, DType::i64}) {
    SCOPED_TRACE(dtype_name(t));
    KernelPair src = random_pair({3, 7, 5, 11}, t, 40, -100, 100);
    for (bool acc : {false, true}) {
      KernelPair dst = random_pair({3, 11, 5, 7}, t, 41, -100, 100);
      KernelPair blk = random_pair({3, 20, 55}, t, 42, -100, 100);
      auto run = [&](auto tag) {
        using T = decltype(tag);
        cpu::transpose<T>(3, 7, 5, 11, 1, src.c<T>(), dst.c<T>(), acc);
        cuda::transpose<T>(3, 7, 5, 11, 1, src.g<T>(), dst.g<T>(), acc);
        // columns [2, 6) of src viewed as (3, 7, 55) into columns [10, 14) of (3, 20, 55)
        cpu::copy_block<T>(3, 55, 4, src.c<T>(), 7, 2, blk.c<T>(), 20, 10, acc);
        cuda::copy_block<T>(3, 55, 4, src.g<T>(), 7, 2, blk.g<T>(), 20, 10, acc);
      };
      if (t == DType::f32) run(float{});
      if (t == DType::f64) run(double{});
      if (t == DType::i64) run(int64_t{});
      EXPECT_TRUE(dst.identical()) << acc;
      EXPECT_TRUE(blk.identical()) << acc;
    }
  }
}

// The stacking of a deferred weight gradient's parts: 70 parts (three launches of 32), odd byte counts and
// sources off the 16-byte alignment (the byte loop) next to aligned ones (16 bytes a thread), empty parts.
TEST(CudaGather, ConcatPartsIsBytewiseTheCpu) {
  LUONG_REQUIRE_CUDA();
  const std::vector<int64_t> sizes_cycle{0, 4, 12, 16, 256, 1028, 65536, 20};
  const int count = 70;
  int64_t src_total = 0;
  std::vector<int64_t> bytes, offsets;
  for (int i = 0; i < count; ++i) {
    bytes.push_back(sizes_cycle[static_cast<size_t>(i) % sizes_cycle.size()]);
    offsets.push_back(src_total + (i % 3 == 1 ? 4 : 0));  // every third part starts 4 bytes off alignment
    src_total = offsets.back() + bytes.back() + 32;
  }
  KernelPair src = random_pair({src_total / 4}, DType::f32, 43, -1, 1);
  int64_t out_total = 0;
  for (int64_t b : bytes) out_total += b;
  KernelPair out = random_pair({out_total / 4 + 4}, DType::f32, 44, -1, 1);  // the tail must stay as it was
  std::vector<const void*> c_src, g_src;
  for (int i = 0; i < count; ++i) {
    c_src.push_back(static_cast<const char*>(src.cpu.raw()) + offsets[static_cast<size_t>(i)]);
    g_src.push_back(static_cast<const char*>(src.gpu.raw()) + offsets[static_cast<size_t>(i)]);
  }
  cpu::concat_parts(count, c_src.data(), bytes.data(), out.cpu.raw());
  cuda::concat_parts(count, g_src.data(), bytes.data(), out.gpu.raw());
  EXPECT_TRUE(out.identical());
}

}  // namespace
}  // namespace luong::testing

#else  // !LUONG_WITH_CUDA

TEST(CudaElementwise, NeedsACudaBuild) { LUONG_REQUIRE_CUDA(); }

#endif
