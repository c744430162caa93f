// dist_bench: data-parallel communication, measured and modelled. Run it on 2 CPU processes:
//   OMP_NUM_THREADS=1 launch/mpirun-luong -np 2 build/bench/dist_bench
// (alone it runs with a local group of size 1 and skips what needs a second rank). Prints three tables:
//   1. all-reduce latency and bandwidth over message sizes (MPI backend, float32);
//   2. how much of the gradient all-reduce the bucketed Reducer hides behind backward, for an op-built
//      model of ~10M parameters;
//   3. a cost model of the ring all-reduce for the Luong et al. (2015) paper model on H200 nodes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "framework/autograd/flat_parameters.h"
#include "framework/dist/process_group.h"
#include "framework/dist/reducer.h"
#include "framework/ops/ops.h"
#include "framework/ops/tensor_math.h"

namespace luong {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The slowest rank's time is the step's time.
double max_over_ranks(ProcessGroup& pg, double t) {
  std::vector<double> all(static_cast<size_t>(pg.size()), 0.0);
  all[static_cast<size_t>(pg.rank())] = t;
  pg.all_reduce_scalars(all);
  return *std::max_element(all.begin(), all.end());
}

// --- 1. bandwidth ------------------------------------------------------------------------------------
void bandwidth_table(ProcessGroup& pg) {
  const int n = pg.size();
  if (pg.rank() == 0) {
    std::printf("\n1. all-reduce (sum, float32, in place) on %d %s ranks\n", n, pg.backend().c_str());
    std::printf("   algbw = bytes / time; busbw = algbw * 2(N-1)/N, the per-link rate a ring needs\n");
    std::printf("   %12s %12s %12s %12s\n", "bytes", "time (us)", "algbw GB/s", "busbw GB/s");
  }
  for (int64_t bytes : {int64_t{4} << 10, int64_t{64} << 10, int64_t{1} << 20, int64_t{16} << 20, int64_t{64} << 20}) {
    Tensor t = Tensor::full({bytes / 4}, 1.0, DType::f32);
    for (int w = 0; w < 2; ++w) pg.all_reduce_sum(t).wait();
    // Enough repetitions for ~0.2 s, decided on rank 0's estimate so every rank runs the same count.
    pg.barrier();
    auto t0 = Clock::now();
    pg.all_reduce_sum(t).wait();
    std::vector<double> est{seconds_since(t0)};
    pg.all_reduce_scalars(est);
    const int reps = std::clamp(static_cast<int>(0.2 / std::max(est[0] / n, 1e-6)), 3, 2000);
    pg.barrier();
    t0 = Clock::now();
    for (int i = 0; i < reps; ++i) pg.all_reduce_sum(t).wait();
    const double per = max_over_ranks(pg, seconds_since(t0)) / reps;
    if (pg.rank() == 0) {
      const double algbw = static_cast<double>(bytes) / per / 1e9;
      std::printf("   %12lld %12.1f %12.3f %12.3f\n", static_cast<long long>(bytes), per * 1e6, algbw,
                  algbw * 2.0 * (n - 1) / n);
    }
  }
}

// --- 2. overlap --------------------------------------------------------------------------------------
// embedding -> tanh(x W1 + b1) -> tanh(. W2) -> logits -> cross-entropy: ~9.8M parameters.
constexpr int64_t kVocabIn = 8000, kEmbed = 512, kHidden = 1024, kVocabOut = 4000, kRows = 16, kLen = 20;

struct OverlapModel {
  std::vector<Variable> params;
  Tensor src, tgt;
  OverlapModel() {
    Generator gen(3);
    auto leaf = [&](const Shape& s, const char* name) {
      std::vector<double> v(static_cast<size_t>(shape_numel(s)));
      for (auto& x : v) x = 0.05 * (2.0 * gen.uniform() - 1.0);
      return Variable(Tensor::from(v, s, DType::f32), true, name);
    };
    params = {leaf({kVocabIn, kEmbed}, "emb"), leaf({kEmbed, kHidden}, "w1"), leaf({kHidden}, "b1"),
              leaf({kHidden, kHidden}, "w2"), leaf({kHidden, kVocabOut}, "out")};
    std::vector<int64_t> s, t;
    for (int64_t i = 0; i < kRows * kLen; ++i) s.push_back(1 + (i * 37) % (kVocabIn - 1)), t.push_back((i * 11) % kVocabOut);
    src = Tensor::from_ids(s, {kRows, kLen});
    tgt = Tensor::from_ids(t, {kRows * kLen});
  }
  Variable loss() const {
    Variable x = embedding(params[0], src, 0);                        // (rows, len, embed)
    Variable h = tanh(add(matmul(x, params[1]), params[2]));         // (rows, len, hidden)
    h = tanh(matmul(h, params[3]));                                   // (rows, len, hidden)
    Variable logits = reshape(matmul(h, params[4]), {kRows * kLen, kVocabOut});
    return cross_entropy(logits, tgt).loss;
  }
};

// The slowest rank's time of fn(), after a barrier.
template <class F>
double timed(ProcessGroup& pg, F&& fn) {
  pg.barrier();
  return max_over_ranks(pg, fn());
}

// Fraction of the gradient whose all-reduce was launched / complete before the last gradient-ready hook.
void early_fractions(const Reducer& reducer, int64_t total, double& launched, double& done) {
  const auto& tl = reducer.timeline();
  Clock::time_point last_hook{};
  for (const auto& e : tl)
    if (e.kind == ReducerEvent::Kind::hook) last_hook = std::max(last_hook, e.time);
  launched = done = 0;
  for (const auto& e : tl) {
    if (e.kind == ReducerEvent::Kind::hook || e.time >= last_hook) continue;
    const double frac = static_cast<double>(reducer.buckets()[e.index].numel) / static_cast<double>(total);
    (e.kind == ReducerEvent::Kind::launch ? launched : done) += frac;
  }
}

void overlap_table(ProcessGroup& pg, double bucket_mb) {
  OverlapModel m;
  FlatParameters flat(m.params, Device::cpu());
  ReducerOptions opt;
  opt.bucket_mb = bucket_mb;
  Reducer reducer(flat, pg, opt);
  // backward + finish with sync on; backward alone with sync off (the hooks then do nothing).
  auto backward = [&](bool sync) {
    reducer.set_sync_enabled(sync);
    flat.zero_grad();
    Variable l = m.loss();
    const auto t0 = Clock::now();
    l.backward();
    if (sync) reducer.finish();
    return seconds_since(t0);
  };
  // Communication alone: the same buckets, all launched after backward (no overlap possible).
  auto comm_only = [&] {
    const auto t0 = Clock::now();
    std::vector<Work> work;
    for (const auto& b : reducer.buckets()) {
      Tensor view = flat.grad().narrow(b.offset, b.numel);
      work.push_back(pg.all_reduce_sum(view));
    }
    for (auto& w : work) w.wait();
    return seconds_since(t0);
  };
  backward(true);  // warm-up
  // Interleaved, best of kReps each: slow drifts in machine load hit all three alike.
  constexpr int kReps = 5;
  double t_bwd = 1e30, t_comm = 1e30, t_both = 1e30, launched_early = 0, done_early = 0;
  for (int i = 0; i < kReps; ++i) {
    t_bwd = std::min(t_bwd, timed(pg, [&] { return backward(false); }));
    t_comm = std::min(t_comm, timed(pg, comm_only));
    const double both = timed(pg, [&] { return backward(true); });
    if (both < t_both) t_both = both, early_fractions(reducer, flat.numel(), launched_early, done_early);
  }
  if (pg.rank() != 0) return;
  const double exposed = std::max(0.0, t_both - t_bwd);
  const double hidden = t_comm > 0 ? std::clamp(1.0 - exposed / t_comm, 0.0, 1.0) : 1.0;
  std::printf("\n2. overlap: %lld parameters (%.1f MB float32 gradient), %zu buckets of <= %.1f MB, %d %s ranks, "
              "batch %lld x %lld tokens per rank\n",
              static_cast<long long>(flat.numel()), flat.numel() * 4 / 1e6, reducer.buckets().size(), bucket_mb,
              pg.size(), pg.backend().c_str(), static_cast<long long>(kRows), static_cast<long long>(kLen));
  std::printf("   backward alone                %9.2f ms\n", t_bwd * 1e3);
  std::printf("   all-reduce alone (same buckets)%8.2f ms\n", t_comm * 1e3);
  std::printf("   backward + bucketed all-reduce%9.2f ms (exposed communication %.2f ms)\n", t_both * 1e3, exposed * 1e3);
  std::printf("   hidden behind backward        %9.0f %%   (1 - exposed / all-reduce alone)\n", hidden * 100);
  std::printf("   gradient launched before the last hook %.0f %%, reduced before it %.0f %% (fastest pass)\n",
              launched_early * 100, done_early * 100);
  std::printf("   (On CPU ranks the all-reduce is itself CPU work (copies and sums) competing with backward for\n"
              "    the same cores, and MPI advances only when the reducer polls at a hook; the output GEMM, most\n"
              "    of backward here, runs before the first hook, and the embedding is ready last. Overlap pays\n"
              "    off where communication has its own engine: NCCL on GPUs, NICs, idle cores.)\n");
}

// --- 3. cost model -----------------------------------------------------------------------------------
struct PaperModel {  // Luong et al. 2015: 4 layers, 1000 cells, 1000-dim embeddings, 50k vocabularies
  int64_t layers = 4, hidden = 1000, embed = 1000, vocab = 50000;
  int64_t lstm(int64_t in) const { return in * 4 * hidden + hidden * 4 * hidden + 4 * hidden; }
  int64_t src_emb() const { return vocab * embed; }
  int64_t tgt_emb() const { return vocab * embed; }
  int64_t encoder() const { return lstm(embed) + (layers - 1) * lstm(hidden); }
  // Input feeding: the first decoder layer reads [embedding; previous attentional state].
  int64_t decoder() const { return lstm(embed + hidden) + (layers - 1) * lstm(hidden); }
  int64_t attention() const { return hidden * hidden + 2 * hidden * hidden; }  // W_a (general), W_c [c; h]
  int64_t softmax() const { return hidden * vocab + vocab; }
  int64_t total() const { return src_emb() + tgt_emb() + encoder() + decoder() + attention() + softmax(); }
};

void cost_model_table() {
  const PaperModel pm;
  const double bytes = 4.0 * static_cast<double>(pm.total());
  constexpr double kNvlink = 450e9, kIb = 50e9, kGpusPerNode = 8;
  // Assumed backward time: ~4 FLOPs per weight per token (two GEMMs), batch 128 with 30 source and 30
  // target tokens per sentence, at an effective 100 TFLOP/s (LSTM GEMMs are small and sequential).
  const double tokens = 128 * 30;
  const double flops = 4.0 * tokens * static_cast<double>(pm.encoder()) +
                       4.0 * tokens * static_cast<double>(pm.decoder() + pm.attention() + pm.softmax());
  const double t_bwd = flops / 100e12;

  std::printf("\n3. cost model: ring all-reduce of the paper model's gradient\n");
  std::printf("   parameters: source emb %.1fM + target emb %.1fM + encoder %.3fM + decoder %.3fM + attention %.1fM"
              " + softmax %.2fM = %.2fM\n",
              pm.src_emb() / 1e6, pm.tgt_emb() / 1e6, pm.encoder() / 1e6, pm.decoder() / 1e6, pm.attention() / 1e6,
              pm.softmax() / 1e6, pm.total() / 1e6);
  std::printf("   assumptions: float32 gradients (%.0f MB); NVLink4 %.0f GB/s per direction per GPU (H100/H200);\n"
              "   one 400 Gb/s NDR InfiniBand NIC per GPU (%.0f GB/s); 8 GPUs per node; bandwidth terms only\n"
              "   (no latency, no congestion). Ring over N: 2(N-1)/N * bytes / bw. Hierarchical: reduce-scatter in\n"
              "   the node over NVLink, all-reduce of each GPU's 1/8 shard across nodes on its own NIC (8 rails in\n"
              "   parallel), all-gather in the node. Backward assumed %.1f ms per step (%.2f TFLOP: batch 128,\n"
              "   30+30 tokens per sentence, 4 FLOPs per weight per token, 100 TFLOP/s effective), the same on\n"
              "   every GPU since each keeps its batch (weak scaling).\n",
              bytes / 1e6, kNvlink / 1e9, kIb / 1e9, t_bwd * 1e3, flops / 1e12);
  // train.freeze=encoder (its embedding included): the reducer leaves those gradients out (dist/reducer.h).
  const double frozen_share = static_cast<double>(pm.src_emb() + pm.encoder()) / static_cast<double>(pm.total());
  std::printf("   %6s %6s %16s %18s %14s %16s %18s\n", "nodes", "GPUs", "flat ring IB ms", "hierarchical ms",
              "comm/backward", "exposed if ideal", "enc frozen hier ms");
  for (int nodes : {1, 2, 4, 8}) {
    const double gpus = nodes * kGpusPerNode;
    const double intra = 2.0 * (kGpusPerNode - 1) / kGpusPerNode * bytes / kNvlink;
    const double inter = nodes > 1 ? 2.0 * (nodes - 1) / nodes * (bytes / kGpusPerNode) / kIb : 0.0;
    const double hier = intra + inter;
    const double flat = nodes > 1 ? 2.0 * (gpus - 1) / gpus * bytes / kIb : intra;
    std::printf("   %6d %6.0f %16.2f %18.2f %14.2f %13.2f ms %18.2f\n", nodes, gpus, flat * 1e3, hier * 1e3,
                hier / t_bwd, std::max(0.0, hier - t_bwd) * 1e3, hier * (1.0 - frozen_share) * 1e3);
  }
  std::printf(
      "   (1 node: both columns are the NVLink ring. 'exposed if ideal': communication left after\n"
      "    perfect overlap; the embedding buckets are ready last, so real overlap is lower. 'enc frozen':\n"
      "    fine-tuning with train.freeze=encoder (embedding included), whose %.0f%% of the gradient the reducer\n"
      "    does not send)\n",
      frozen_share * 100);
}

}  // namespace
}  // namespace luong

int main(int argc, char** argv) {
  using namespace luong;
  // PyTorch DDP's default 25 MB, and smaller buckets that start communicating earlier.
  std::vector<double> bucket_mbs{25.0, 4.0};
  if (argc > 1) bucket_mbs = {std::stod(argv[1])};
  auto pg = make_process_group("auto", Device::cpu());
  if (pg->rank() == 0)
    std::printf("dist_bench: %d rank(s), backend %s (usage: dist_bench [bucket_mb], default 25 and 4)\n", pg->size(),
                pg->backend().c_str());
  if (pg->size() > 1) bandwidth_table(*pg);
  else std::printf("\n1. all-reduce bandwidth: skipped (one rank; run under launch/mpirun-luong -np 2)\n");
  for (double mb : bucket_mbs) overlap_table(*pg, mb);
  if (pg->rank() == 0) cost_model_table();
  return 0;
}
