// The backward pass: a topological walk over the nodes reachable from the root.
//
// Order: Kahn's algorithm over "consumer" edges, starting at the root's node; among ready nodes the most
// recently created runs first (a max-heap on creation sequence), which is deterministic and matches reverse
// execution order, so gradient-ready hooks fire in the same order on every rank.
#include <atomic>
#include <cstdint>
#include <queue>
#include <utility>
#include <vector>

#include "framework/autograd/node.h"
#include "framework/autograd/weight_grad_deferral.h"
#include "framework/ops/tensor_math.h"
#include "framework/ops/weight_gemm.h"

namespace luong {
namespace {

// What backward keeps per node, in a table indexed by first sight (Node::backward_index). A hash map keyed
// by node cost a heap node per graph node and step, and so had the four maps before it; a tiny model's step spent
// about 30% of its host time in malloc / free (docs/PERFORMANCE.md, "Engine host time").
struct NodeState {
  uint64_t seq = 0;  // discovery order: consumers are found before producers
  int pending = 0;   // consumers not yet run
  // Interior variables this node produced, held until it runs: a consumer drops its edges once it has run,
  // so without this the variable (and the gradient it just received) could die before its producer reads it.
  // One entry per consumer edge; the first is kept inline, as most outputs have one consumer.
  std::shared_ptr<VariableImpl> waiting_first;
  std::vector<std::shared_ptr<VariableImpl>> waiting_more;

  void hold(const std::shared_ptr<VariableImpl>& v) {
    if (!waiting_first) {
      waiting_first = v;
    } else {
      waiting_more.push_back(v);
    }
  }
  template <class F>
  void for_each_waiting(F&& f) {
    if (waiting_first) f(*waiting_first);
    for (auto& v : waiting_more) f(*v);
  }
  void drop_waiting() {
    waiting_first.reset();
    waiting_more.clear();
  }
};

// Each pass draws a number no earlier pass had, so a node's backward_pass tells whether its backward_index
// belongs to this pass. Atomic: ranks of an in-process group run backward on their own graphs concurrently.
std::atomic<uint64_t> g_last_pass{0};

struct Graph {
  uint64_t pass = 0;
  std::vector<NodeState> state;  // every node reachable from the root, by first sight

  NodeState& of(Node* n) { return state[n->backward_index]; }
};

Graph discover(Node* root) {
  Graph g;
  g.pass = g_last_pass.fetch_add(1, std::memory_order_relaxed) + 1;
  auto see = [&g](Node* n) {  // a table entry at first sight, for the pending counts
    n->backward_pass = g.pass;
    n->backward_index = static_cast<uint32_t>(g.state.size());
    g.state.emplace_back();
  };
  std::vector<Node*> stack{root};
  see(root);
  uint64_t next_seq = 0;
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    g.of(n).seq = next_seq++;  // the order of expansion, which the ready queue follows
    for (const auto& in : n->inputs()) {
      if (!in->requires_grad) continue;
      if (in->backward_pass != g.pass) {  // first sight in this pass: its counts from an earlier one are stale
        in->backward_pass = g.pass;
        in->backward_uses = 0;
        in->backward_uses_left = 0;
      }
      ++in->backward_uses;
      if (!in->grad_fn) {
        ++in->backward_uses_left;
        continue;
      }
      Node* p = in->grad_fn.get();
      if (p->backward_pass != g.pass) {
        see(p);
        stack.push_back(p);
      }
      ++g.of(p).pending;
    }
  }
  return g;
}

}  // namespace

void Variable::backward() const {
  LUONG_CHECK(data().numel() == 1, "backward() without a gradient needs a scalar, got ", data().describe());
  struct ClearOnExit {  // also when backward throws: a later backward(g) must not claim g == 1
    VariableImpl* v;
    ~ClearOnExit() { v->grad_is_one = false; }
  } clear{impl_.get()};
  impl_->grad_is_one = true;
  backward(Tensor::full(data().shape(), 1.0, data().dtype(), data().device()));
}

void Variable::backward(const Tensor& grad_output) const {
  LUONG_CHECK(requires_grad(), "backward() on a variable that does not require grad");
  check_same_shape("backward", data(), grad_output);
  if (is_leaf()) {  // d(x)/d(x): just accumulate
    if (impl_->grad.defined()) {
      add_(writable_grad(*impl_), grad_output);
    } else {
      impl_->grad = grad_output.clone();
    }
    if (impl_->grad_ready_hook) impl_->grad_ready_hook(*impl_);
    return;
  }
  impl_->grad = grad_output;  // borrowed: backward only reads the root's gradient
  impl_->grad_shared = true;

  std::shared_ptr<Node> root = impl_->grad_fn;
  Graph g = discover(root.get());
  // Weight-gradient products of multi-use weights wait here until the weight's last consumer has run.
  WeightGradDeferral deferral(g.pass);
  // Nothing writes a parameter during backward: every step's dx = dz W^T reuses one packed W^T.
  PackedWeightScope packed_weights;

  // Ready nodes: those whose consumers have all run, earliest discovered first (deterministic; discovery runs
  // from the root, so this is the order of the header's "most recently created"). The queue holds each node's
  // discovery number beside it, so ordering needs no lookup.
  using Ready = std::pair<uint64_t, Node*>;
  auto later = [](const Ready& a, const Ready& b) { return a.first > b.first; };
  std::vector<Ready> ready_storage;
  ready_storage.reserve(g.state.size());  // never more ready than nodes: one allocation
  std::priority_queue<Ready, std::vector<Ready>, decltype(later)> ready(later, std::move(ready_storage));
  ready.emplace(0, root.get());  // the root is discovered first
  while (!ready.empty()) {
    Node* n = ready.top().second;
    ready.pop();
    NodeState& state = g.of(n);  // the table does not grow during the walk: references stay valid
    if (!deferral.empty())  // n's outputs have every contribution now: complete their deferred products
      state.for_each_waiting([&deferral](VariableImpl& out) { deferral.flush(out); });
    n->backward();
    const std::vector<std::shared_ptr<VariableImpl>> inputs = n->release_taking_inputs();
    state.for_each_waiting([](VariableImpl& out) {  // consumed: free the interior gradient
      out.grad = Tensor();
      out.grad_shared = false;
    });
    state.drop_waiting();  // and the references: the variables may die now (and n with them)
    for (const auto& in : inputs) {
      if (!in->requires_grad) continue;
      if (!in->grad_fn) {
        if (--in->backward_uses_left == 0) {
          deferral.flush(*in);
          read_grad(*in);  // a leaf no node gave a gradient to: its pending zero is written before anyone reads it
          if (in->grad_ready_hook) in->grad_ready_hook(*in);
        }
        continue;
      }
      Node* p = in->grad_fn.get();
      NodeState& producer = g.of(p);
      producer.hold(in);
      if (--producer.pending == 0) ready.emplace(producer.seq, p);
    }
  }
  // Free interior gradients still held by variables the user keeps (the root among them).
  impl_->grad = Tensor();
  impl_->grad_shared = false;
}

}  // namespace luong
