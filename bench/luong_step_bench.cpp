// luong training-step benchmark: the NMT model on synthetic batches, timed as the trainer runs a step
// (forward + summed cross-entropy + backward + gradient / tokens + global-norm clip + SGD). The PyTorch
// counterpart is bench/torch_reference/step_bench.py; bench/compare.py runs both and prints the table.
//   luong_step_bench [--preset cpu|paper] [--device cpu|cuda] [--json] [--batch 64 ...] [--freeze encoder]
// Presets: cpu = the model (embeddings 256, 2 x 256 LSTM, general attention with input feeding,
// vocabulary 8000, batch 64, source and target length 20); paper = Luong et al.'s WMT model (4 x 1000,
// vocabulary 50000, batch 128, length 50), meant for --device cuda. No dropout, SGD lr 1.0, clip 5.
// --freeze takes train.freeze's parts and runs the trainer's fine-tuning step: their gradients off, the
// update over the trained parameters only.
// Reports the median of --windows timed windows after --warmup steps, and the peak RSS (VmHWM).
#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "bench/fma_peak.h"
#include "framework/autograd/flat_parameters.h"
#include "framework/core/heap_allocator.h"
#include "framework/core/precision.h"
#include "framework/core/process_setup.h"
#include "framework/kernels/cpu/bf16_gemm.h"
#include "framework/kernels/cpu/packed_gemm.h"
#include "framework/kernels/cpu/wide_vectors.h"
#include "framework/memory/allocator.h"
#include "framework/ops/weight_gemm.h"
#include "framework/optim/average_and_clip.h"
#include "framework/optim/frozen_parameters.h"
#include "framework/optim/optimizer.h"
#include "framework/train/captured_step.h"
#include "models/nmt/model.h"
#include "models/nmt/model_parts.h"
#include "tests/support/bench_util.h"

using namespace luong;
using luong::bench::proc_status_mb;

namespace {

struct BenchShape {
  int64_t vocab, embedding, hidden, layers, batch, src_len, tgt_len;
};

struct BenchArgs {
  std::string preset;  // "" = cpu, or paper with a CUDA device
  std::string device = "cpu";
  BenchShape shape{-1, -1, -1, -1, -1, -1, -1};  // -1 = from the preset
  std::string attention = "general";
  double lr = 1.0, clip = 5.0;
  int warmup = 5, steps = 10, windows = 3;
  uint64_t seed = 1;
  bool json = false;
  std::string precision = "fp32";  // GEMM precision: fp32 | tf32 | bf16 (train.precision)
  std::string bf16_weight_copies = "on";  // off: every bf16 product on CUDA converts its weight again
  std::string cuda_graph = "off";         // on: the step through CapturedStep (a CUDA graph on a GPU)
  std::string freeze;                     // train.freeze's parts, "" = none
};

BenchShape preset_shape(const std::string& name) {
  if (name == "cpu") return {8000, 256, 256, 2, 64, 20, 20};
  if (name == "paper") return {50000, 1000, 1000, 4, 128, 50, 50};
  LUONG_FAIL("luong_step_bench: unknown preset '", name, "' (cpu, paper)");
}

// kB from a "Name:   1234 kB" line of /proc/self/status; 0 when absent.
struct SyntheticBatch {
  Tensor src, tgt_in, tgt_out;  // (B, S), (B, T), (B, T) int64
  std::vector<int64_t> lengths;  // (B), all S
};

// Random ids in [4, vocab): no specials, no padding, every sentence full length.
SyntheticBatch make_batch(const BenchShape& s, std::mt19937_64& rng, Device device) {
  std::uniform_int_distribution<int64_t> id(4, s.vocab - 1);
  std::vector<int64_t> src(static_cast<size_t>(s.batch * s.src_len)), tgt(static_cast<size_t>(s.batch * s.tgt_len));
  for (auto& v : src) v = id(rng);
  for (auto& v : tgt) v = id(rng);
  std::vector<int64_t> shifted(tgt.size());  // tgt_out: tgt_in shifted left by one within each row
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t t = 0; t < s.tgt_len; ++t)
      shifted[static_cast<size_t>(b * s.tgt_len + t)] = tgt[static_cast<size_t>(b * s.tgt_len + (t + 1) % s.tgt_len)];
  return {Tensor::from_ids(src, {s.batch, s.src_len}, device), Tensor::from_ids(tgt, {s.batch, s.tgt_len}, device),
          Tensor::from_ids(shifted, {s.batch, s.tgt_len}, device),
          std::vector<int64_t>(static_cast<size_t>(s.batch), s.src_len)};
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

nlohmann::json run(const BenchArgs& a) {
  const double startup_rss_mb = proc_status_mb("VmRSS");  // the program and its libraries, before any tensor
  const Device device = Device::parse(a.device);
  const GemmPrecisionGuard gemm_precision_scope(parse_gemm_precision(a.precision));
  set_bf16_weight_copies_enabled(a.bf16_weight_copies == "on");
  const std::string preset = a.preset.empty() ? (device.is_cuda() ? "paper" : "cpu") : a.preset;
  BenchShape s = preset_shape(preset);
  const BenchShape& o = a.shape;
  for (auto [dst, src] : {std::pair{&s.vocab, o.vocab}, {&s.embedding, o.embedding}, {&s.hidden, o.hidden},
                          {&s.layers, o.layers}, {&s.batch, o.batch}, {&s.src_len, o.src_len},
                          {&s.tgt_len, o.tgt_len}})
    if (src > 0) *dst = src;

  nmt::ModelConfig mc;
  mc.src_vocab = s.vocab, mc.tgt_vocab = s.vocab, mc.layers = s.layers, mc.hidden_size = s.hidden;
  mc.embedding_size = s.embedding, mc.dropout = 0.0, mc.attention = a.attention, mc.input_feeding = true;
  Generator init_gen(a.seed);
  nmt::NmtModel model(mc, init_gen, DType::f32);
  model.train();
  std::vector<Variable> params;
  for (auto& [name, v] : model.named_parameters()) params.push_back(v);
  FlatParameters flat(params, device);
  std::unique_ptr<FrozenParameters> frozen;  // as the trainer's train.freeze
  if (!a.freeze.empty())
    frozen = std::make_unique<FrozenParameters>(flat, nmt::parameter_indices_in_parts("--freeze", a.freeze, model));
  std::span<const FlatSpan> trained;  // empty: every parameter
  if (frozen) trained = frozen->trained_spans();
  allocator_for(Device::cpu()).empty_cache();  // as luong train after set-up (Allocator::empty_cache)
  auto sgd = make_optimizer("sgd");

  std::mt19937_64 rng(a.seed);
  std::vector<SyntheticBatch> batches;
  for (int i = 0; i < 4; ++i) batches.push_back(make_batch(s, rng, device));

  // One trainer step (framework/train/trainer.cpp) without the data pipeline and the all-reduce.
  auto eager_step = [&](int i) {
    const SyntheticBatch& b = batches[static_cast<size_t>(i) % batches.size()];
    flat.zero_grad();
    CrossEntropy ce = model.forward_loss(b.src, b.lengths, b.tgt_in, b.tgt_out);
    ce.loss.backward();
    // The trainer's: the norm read back (a sync on CUDA), the factor applied in the update's pass.
    const AveragedGradient g = measure_average_and_clip(flat, ce.tokens, a.clip, trained);
    sgd->step(flat, a.lr, g.factor, trained);
  };
  // The same step recorded once and replayed (train/captured_step.h): the batch is copied into tensors the
  // graph reads, the clip stays on the device (same bits: tests/*/captured_step_test.cpp), and nothing is
  // read back until the window ends. Every synthetic batch has the same shape and full lengths, so one
  // graph serves them all; the token count is the batch's, known on the host.
  const bool graph = a.cuda_graph == "on";
  SyntheticBatch staged{Tensor::empty(batches[0].src.shape(), DType::i64, device),
                        Tensor::empty(batches[0].tgt_in.shape(), DType::i64, device),
                        Tensor::empty(batches[0].tgt_out.shape(), DType::i64, device), batches[0].lengths};
  Tensor clip_stats = Tensor::zeros({3}, DType::f64, device);
  const int64_t tokens = s.batch * s.tgt_len;
  CapturedStep captured(device, [&] {
    flat.zero_grad();
    CrossEntropy ce = model.forward_loss(staged.src, staged.lengths, staged.tgt_in, staged.tgt_out);
    ce.loss.backward();
    average_and_clip_on_device_(flat.grad(), tokens, a.clip, clip_stats);
    sgd->step(flat, a.lr, 1.0, trained);
  });
  auto step = [&](int i) {
    if (!graph) return eager_step(i);
    const SyntheticBatch& b = batches[static_cast<size_t>(i) % batches.size()];
    staged.src.copy_(b.src), staged.tgt_in.copy_(b.tgt_in), staged.tgt_out.copy_(b.tgt_out);
    captured.run();
  };
  // Waits for queued device work: reading a value back is ordered after it on the device's stream.
  auto sync = [&] { flat.data().narrow(0, 1).to(Device::cpu()); };

  // With a graph, the first warm-up step runs eagerly: cuBLAS handles, GEMM plans and the allocator's cache
  // then exist before the capture, as they would in a trainer that captures after its first steps.
  // The peak device memory of a graphed step is the capture's: replays allocate nothing, they reuse the
  // blocks the capture drew (held by the graph's pool), so the window starts before the capture.
  for (int i = 0; i < a.warmup; ++i) {
    if (graph && i == 1) {
      sync();
      allocator_for(device).reset_peak();
    }
    if (graph && i == 0) {
      eager_step(i);
    } else {
      step(i);
    }
  }
  sync();
  if (!graph || a.warmup < 2) allocator_for(device).reset_peak();
  std::vector<double> window_ms;
  for (int w = 0; w < a.windows; ++w) {
    const double t0 = now_s();
    for (int i = 0; i < a.steps; ++i) step(i);
    sync();
    window_ms.push_back((now_s() - t0) / a.steps * 1e3);
  }
  std::vector<double> sorted = window_ms;
  std::sort(sorted.begin(), sorted.end());
  const double step_ms = sorted[sorted.size() / 2];

  // On a GPU, whether the step is bound by the host or by the device: one more step, from an idle device,
  // split at the end of backward into the host's time to enqueue forward + backward and the time the
  // device then still needs to drain its queue. A drain near zero means the device waited on the host
  // (kernel launches and op overhead set the pace); a long drain means the device was the bottleneck.
  // With a graph the split is of the whole step: the graph's launch, then the device's time to run it.
  double enqueue_ms = -1, drain_ms = -1;
  if (device.is_cuda()) {
    sync();
    const SyntheticBatch& b = batches[0];
    const double t0 = now_s();
    if (graph) {
      step(0);
    } else {
      flat.zero_grad();
      CrossEntropy ce = model.forward_loss(b.src, b.lengths, b.tgt_in, b.tgt_out);
      ce.loss.backward();
    }
    const double t1 = now_s();
    sync();
    const double t2 = now_s();
    enqueue_ms = (t1 - t0) * 1e3, drain_ms = (t2 - t1) * 1e3;
  }

  nlohmann::json r;
  r["framework"] = std::string("luong ") + LUONG_VERSION;
  r["device"] = device.name();
  r["preset"] = preset;
  r["precision"] = a.precision;
  if (device.is_cuda() && a.precision == "bf16") r["bf16_weight_copies"] = a.bf16_weight_copies;
  r["cuda_graph"] = a.cuda_graph;
  if (frozen) r["frozen"] = {{"parts", a.freeze}, {"parameters", frozen->numel()}};
  if (graph) {  // the last step's clip outcome: a graph that computed nothing would not report a finite norm
    const AveragedGradient g = read_averaged_gradient(clip_stats);
    r["grad_norm"] = g.norm;
    LUONG_CHECK(g.finite && g.norm > 0, "luong_step_bench: the captured step's gradient norm is ", g.norm);
  }
  r["shape"] = {{"vocab", s.vocab}, {"embedding", s.embedding}, {"hidden", s.hidden}, {"layers", s.layers},
                {"batch", s.batch}, {"src_len", s.src_len}, {"tgt_len", s.tgt_len}};
  const char* omp = std::getenv("OMP_NUM_THREADS");
  const char* blas = std::getenv("OPENBLAS_NUM_THREADS");
  r["settings"] =
      str("OpenMP threads ", omp_get_max_threads(), " (OMP_NUM_THREADS ", omp ? omp : "-", ", OPENBLAS_NUM_THREADS ",
          blas ? blas : "-", "), OpenBLAS core ", blas_core_name(), ", malloc ", heap_allocator_name(),
          !device.is_cpu()             ? ""
          : cpu::packed_gemm_enabled() ? ", luong's AVX-512 GEMMs on (packed weights, blocked; OpenBLAS the rest)"
                                       : ", luong's AVX-512 GEMMs off (OpenBLAS only)",
          !device.is_cpu()      ? ""
          : cpu::wide_vectors() ? ", LSTM cell and loss on 512-bit vectors"
                                : ", LSTM cell and loss on 256-bit vectors",
          !device.is_cpu() || a.precision != "bf16" ? std::string()
          : !cpu::bf16_gemms_native()               ? std::string(", bf16 GEMMs emulated")
                                      : str(", bf16 GEMMs on ", cpu::bf16_kernel_name(cpu::bf16_kernel())),
          !graph             ? ""
          : device.is_cuda() ? ", the step as one CUDA graph"
                             : ", the step capture-checked");
  r["tokens_per_s"] = static_cast<double>(s.batch * s.tgt_len) / (step_ms * 1e-3);
  r["step_ms"] = step_ms;
  r["window_step_ms"] = window_ms;
  if (enqueue_ms >= 0) {
    r["enqueue_ms"] = enqueue_ms;
    r["drain_ms"] = drain_ms;
  }
  r["peak_rss_mb"] = proc_status_mb("VmHWM");
  if (device.is_cpu()) {  // the roofline the step's GEMM rate is read against (after the steps: no effect on them)
    const bench::FmaPeak p = bench::measure_fma_peak();
    r["cpu_fma_peak"] = {{"isa", p.isa},
                         {"threads", p.threads},
                         {"one_thread_gflops", p.one_thread},
                         {"all_threads_gflops", p.all_threads},
                         {"ghz", p.ghz},
                         {"bf16_dot_one_thread_gflops", p.bf16_dot_one_thread},
                         {"bf16_dot_all_threads_gflops", p.bf16_dot_all_threads}};
  }
  r["startup_rss_mb"] = startup_rss_mb;
  // The tensors' own high-water mark in the timed steps (size-class rounded), and what the caching allocator
  // keeps for reuse: together with startup_rss_mb they account for the peak RSS.
  const MemoryStats mem = allocator_for(device).stats();
  r["tensor_peak_mb"] = static_cast<double>(mem.peak) / (1 << 20);
  r["allocator_cached_mb"] = static_cast<double>(mem.cached) / (1 << 20);
  r["parameters"] = flat.numel();
  if (device.is_cuda()) r["peak_device_mb"] = static_cast<double>(allocator_for(device).stats().peak) / (1 << 20);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  configure_process(argc, argv);  // OpenBLAS core type and thread defaults, as the luong program does
  BenchArgs a;
  CLI::App app{"luong training-step benchmark on synthetic batches"};
  app.add_option("--preset", a.preset, "cpu (the issue's model) or paper (4 x 1000, for a GPU); default by device");
  app.add_option("--device", a.device, "cpu, cuda or cuda:N")->capture_default_str();
  app.add_option("--vocab", a.shape.vocab, "Source and target vocabulary");
  app.add_option("--embedding", a.shape.embedding, "Embedding size");
  app.add_option("--hidden", a.shape.hidden, "LSTM hidden size");
  app.add_option("--layers", a.shape.layers, "LSTM layers (encoder and decoder)");
  app.add_option("--batch", a.shape.batch, "Sentences per batch");
  app.add_option("--src-len", a.shape.src_len, "Source length");
  app.add_option("--tgt-len", a.shape.tgt_len, "Target length (tokens per sentence)");
  app.add_option("--attention", a.attention, "Attention variant")->capture_default_str();
  app.add_option("--lr", a.lr, "SGD learning rate")->capture_default_str();
  app.add_option("--clip", a.clip, "Global gradient-norm clip")->capture_default_str();
  app.add_option("--warmup", a.warmup, "Untimed steps first")->capture_default_str();
  app.add_option("--steps", a.steps, "Steps per timed window")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--windows", a.windows, "Timed windows (the median is reported)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--seed", a.seed, "Initialisation and batch seed")->capture_default_str();
  app.add_flag("--json", a.json, "Print one JSON line (for bench/compare.py)");
  app.add_option("--freeze", a.freeze, "Parts whose gradients are off, as train.freeze (\"encoder\", ...)");
  app.add_option("--precision", a.precision, "GEMM precision, as train.precision: fp32, tf32 or bf16")
      ->capture_default_str()
      ->check(CLI::IsMember({"fp32", "tf32", "bf16"}));
  app.add_option("--bf16-weight-copies", a.bf16_weight_copies,
                 "CUDA, bf16: convert each weight once per pass (on) or once per product (off)")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--cuda-graph", a.cuda_graph,
                 "on: record the step once and replay it (a CUDA graph on a GPU; on a CPU the same step, "
                 "checked capture-safe)")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  CLI11_PARSE(app, argc, argv);
  try {
    const nlohmann::json r = run(a);
    if (a.json) {
      std::printf("%s\n", r.dump().c_str());
    } else {
      std::printf("%s on %s, %s model %s: %s\n", r["framework"].get<std::string>().c_str(),
                  r["device"].get<std::string>().c_str(), r["preset"].get<std::string>().c_str(),
                  r["shape"].dump().c_str(), r["settings"].get<std::string>().c_str());
      if (r.contains("frozen"))
        std::printf("frozen (gradients off): %s, %lld parameter values\n",
                    r["frozen"]["parts"].get<std::string>().c_str(),
                    static_cast<long long>(r["frozen"]["parameters"].get<int64_t>()));
      std::printf("%.0f target tokens/s, %.1f ms/step (windows %s), peak RSS %.0f MB\n",
                  r["tokens_per_s"].get<double>(), r["step_ms"].get<double>(), r["window_step_ms"].dump().c_str(),
                  r["peak_rss_mb"].get<double>());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "luong_step_bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
