#include "models/nmt/data/batching.h"

#include <algorithm>

#include "framework/core/error.h"
#include "framework/core/philox.h"

namespace luong::nmt {
namespace {

// The data stream gets its own Philox key (seed ^ tag) so its draws never coincide with initialisation or
// dropout draws made under the same run seed; each epoch owns a disjoint counter range (2^40 counters).
constexpr uint64_t kDataStreamTag = 0x9E3779B97F4A7C15ull;

Generator epoch_generator(uint64_t seed, int64_t epoch) {
  return Generator(seed ^ kDataStreamTag, static_cast<uint64_t>(epoch) << 40);
}

template <class T>
void philox_shuffle(std::vector<T>& v, Generator& g) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[static_cast<size_t>(g.below(i))]);
}

// Greedy cut of a length-sorted pool into batches under the options' global budget.
void cut_pool(const Corpus& c, const std::vector<int64_t>& pool, const BatchingOptions& o, EpochPlan& plan) {
  const int64_t budget = o.batch_size * o.shards();
  std::vector<int64_t> cur;
  int64_t cur_max = 0;
  auto flush = [&] {
    if (cur.empty()) return;
    plan.batches.push_back(cur);
    cur.clear();
    cur_max = 0;
  };
  for (int64_t i : pool) {
    if (o.by == BatchBy::sentences) {
      cur.push_back(i);
      if (static_cast<int64_t>(cur.size()) == budget) flush();
    } else {
      const int64_t cost = example_cost(c.examples[static_cast<size_t>(i)]);
      const int64_t new_max = std::max(cur_max, cost);
      // A batch is closed only once it holds a pair for every rank: with a token budget too small for N
      // pairs, cutting earlier would make batches that cannot be sharded and are dropped, down to the whole
      // corpus. Such a batch goes over the budget instead, as a single pair longer than it does.
      const bool shardable = static_cast<int64_t>(cur.size()) >= o.shards();
      if (shardable && new_max * static_cast<int64_t>(cur.size() + 1) > budget) flush();
      cur.push_back(i);
      cur_max = std::max(cur_max, cost);
    }
  }
  flush();
}

// With N ranks every global batch needs at least N pairs. The cut leaves at most one shorter batch per
// pool (its tail; or a pool whose few pairs are each over the token budget): consecutive short batches are
// gathered until they hold N pairs, and what remains at the end joins the last batch. So no pair is ever
// left out and every epoch's plan can be shared whatever the shuffle drew; only a corpus of fewer than N
// pairs cannot (BatchIterator refuses it).
void merge_unshardable(EpochPlan& plan, const Corpus& c, int64_t world_size, SortKey key) {
  auto small = [&](const std::vector<int64_t>& b) { return static_cast<int64_t>(b.size()) < world_size; };
  auto sort_by_length = [&](std::vector<int64_t>& b) {  // shards of a merged batch stay of similar lengths
    std::stable_sort(b.begin(), b.end(), [&](int64_t i, int64_t j) {
      return sorts_before(c.examples[static_cast<size_t>(i)], c.examples[static_cast<size_t>(j)], key);
    });
  };
  std::vector<std::vector<int64_t>> out;
  std::vector<int64_t> pending;
  for (auto& b : plan.batches) {
    if (!small(b)) {
      out.push_back(std::move(b));
      continue;
    }
    pending.insert(pending.end(), b.begin(), b.end());
    if (!small(pending)) {
      sort_by_length(pending);
      out.push_back(std::move(pending));
      pending.clear();
    }
  }
  if (!pending.empty()) {
    if (out.empty()) {
      out.push_back(std::move(pending));
    } else {
      out.back().insert(out.back().end(), pending.begin(), pending.end());
      sort_by_length(out.back());
    }
  }
  plan.batches = std::move(out);
}

}  // namespace

BatchBy parse_batch_by(const std::string& name) {
  if (name == "sentences") return BatchBy::sentences;
  if (name == "tokens") return BatchBy::tokens;
  LUONG_FAIL("batch_by: '", name, "' is not one of: sentences, tokens");
}

SortKey parse_sort_key(const std::string& name) {
  if (name == "longer_side") return SortKey::longer_side;
  if (name == "source") return SortKey::source;
  LUONG_FAIL("sort_by: '", name, "' is not one of: longer_side, source");
}

const char* sort_key_name(SortKey key) { return key == SortKey::longer_side ? "longer_side" : "source"; }

bool sorts_before(const Example& x, const Example& y, SortKey key) {
  const size_t xs = x.src.size(), ys = y.src.size(), xt = x.tgt.size(), yt = y.tgt.size();
  if (key == SortKey::source) return xs != ys ? xs < ys : xt < yt;
  const int64_t xc = example_cost(x), yc = example_cost(y);
  if (xc != yc) return xc < yc;
  return xt != yt ? xt < yt : xs < ys;
}

int64_t example_cost(const Example& e) {
  return std::max<int64_t>(static_cast<int64_t>(e.src.size()), static_cast<int64_t>(e.tgt.size()) + 1);
}

double PlanPadding::src_fraction() const {
  return src_padded > 0 ? static_cast<double>(src_padded - src_real) / static_cast<double>(src_padded) : 0.0;
}

double PlanPadding::tgt_fraction() const {
  return tgt_padded > 0 ? static_cast<double>(tgt_padded - tgt_real) / static_cast<double>(tgt_padded) : 0.0;
}

PlanPadding padding_of(const Corpus& corpus, const EpochPlan& plan, int64_t shards) {
  LUONG_CHECK(shards > 0, "padding_of: ", shards, " shards");
  PlanPadding p;
  for (const auto& global : plan.batches) {
    // Each shard is padded on its own (make_batch), to its own longest pair.
    for (int64_t k = 0; k < shards; ++k) {
      const std::vector<int64_t> batch = shards == 1 ? global : shard_of(global, k, shards);
      int64_t src_max = 0, tgt_max = 0;
      for (int64_t i : batch) {
        const Example& e = corpus.examples[static_cast<size_t>(i)];
        const auto s = static_cast<int64_t>(e.src.size()), t = static_cast<int64_t>(e.tgt.size()) + 1;
        p.src_real += s, p.tgt_real += t;
        src_max = std::max(src_max, s), tgt_max = std::max(tgt_max, t);
      }
      p.src_padded += src_max * static_cast<int64_t>(batch.size());
      p.tgt_padded += tgt_max * static_cast<int64_t>(batch.size());
    }
  }
  return p;
}

EpochPlan plan_epoch(const Corpus& corpus, const BatchingOptions& o, int64_t epoch) {
  LUONG_CHECK(o.batch_size > 0 && o.pool_batches > 0 && o.world_size > 0 && o.rank >= 0 && o.rank < o.world_size &&
                  o.accumulate > 0,
              "batching: bad options (batch_size ", o.batch_size, ", pool_batches ", o.pool_batches, ", rank ", o.rank,
              " of ", o.world_size, ", accumulate ", o.accumulate, ")");
  // The pool's budget is a product of four settings, each bounded on its own: their product must fit.
  int64_t shards = 0, pool_budget = 0;
  if (__builtin_mul_overflow(static_cast<int64_t>(o.world_size), static_cast<int64_t>(o.accumulate), &shards) ||
      __builtin_mul_overflow(o.batch_size, shards, &pool_budget) ||
      __builtin_mul_overflow(pool_budget, o.pool_batches, &pool_budget))
    LUONG_FAIL("batching: a pool of data.pool_batches (", o.pool_batches, ") x train.batch_size (", o.batch_size,
               ") x processes (", o.world_size, ") x train.accumulate (", o.accumulate,
               ") is beyond a 64-bit count; lower one of them");
  LUONG_CHECK(epoch >= 0, "batching: negative epoch ", epoch);
  const auto n = static_cast<int64_t>(corpus.examples.size());
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  Generator g = epoch_generator(o.seed, epoch);
  if (o.shuffle) philox_shuffle(order, g);

  auto by_length = [&](int64_t a, int64_t b) {
    return sorts_before(corpus.examples[static_cast<size_t>(a)], corpus.examples[static_cast<size_t>(b)], o.sort_key);
  };
  EpochPlan plan;
  std::vector<int64_t> pool;
  int64_t pool_used = 0;
  auto close_pool = [&] {
    std::stable_sort(pool.begin(), pool.end(), by_length);
    cut_pool(corpus, pool, o, plan);
    pool.clear();
    pool_used = 0;
  };
  for (int64_t i : order) {
    pool.push_back(i);
    pool_used += o.by == BatchBy::sentences ? 1 : example_cost(corpus.examples[static_cast<size_t>(i)]);
    if (pool_used >= pool_budget) close_pool();
  }
  if (!pool.empty()) close_pool();
  if (o.shards() > 1) merge_unshardable(plan, corpus, o.shards(), o.sort_key);
  if (o.shuffle) philox_shuffle(plan.batches, g);
  return plan;
}

std::vector<int64_t> shard_of(const std::vector<int64_t>& global, int64_t rank, int64_t world_size) {
  LUONG_CHECK(world_size > 0 && rank >= 0 && rank < world_size, "shard_of: rank ", rank, " of ", world_size);
  const auto n = static_cast<int64_t>(global.size());
  const int64_t base = n / world_size, extra = n % world_size;
  const int64_t begin = rank * base + std::min<int64_t>(rank, extra);
  const int64_t len = base + (rank < extra ? 1 : 0);
  return {global.begin() + begin, global.begin() + begin + len};
}

}  // namespace luong::nmt
