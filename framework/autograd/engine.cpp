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

// What backward keeps per node, in a table indexed by first sight (Node::backward_index_). A hash map keyed
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

// Each pass draws a number no earlier pass had, so a node's backward_pass_ tells whether its backward_index_
// belongs to this pass. Atomic: ranks of an in-process group run backward on their own graphs concurrently.
std::atomic<uint64_t> g_last_pass{0};

}  // namespace

// One backward pass's graph: its number and a table entry for every node reachable from the root, by first
// sight. The one writer of Node's pass fields (a friend of Node) and of VariableImpl::pass_uses.
class BackwardPass {
 public:
  // Discovery: numbers the pass, gives every reachable node its entry and pending-consumer count, and counts
  // the edges into every variable that needs a gradient.
  explicit BackwardPass(Node* root) : pass_(g_last_pass.fetch_add(1, std::memory_order_relaxed) + 1) {
    std::vector<Node*> stack{root};
    see(root);
    uint64_t next_seq = 0;
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      of(n).seq = next_seq++;  // the order of expansion, which the ready queue follows
      for (const auto& in : n->inputs()) {
        if (!in->requires_grad) continue;
        in->pass_uses.count_edge(pass_);
        if (!in->grad_fn) continue;
        Node* p = in->grad_fn.get();
        if (p->backward_pass_ != pass_) {
          see(p);
          stack.push_back(p);
        }
        ++of(p).pending;
      }
    }
  }

  uint64_t number() const { return pass_; }
  size_t node_count() const { return state_.size(); }
  // n's entry; n must have been discovered by this pass. The table does not grow after discovery, so references
  // stay valid through the walk.
  NodeState& of(const Node* n) { return state_[n->backward_index_]; }

 private:
  void see(Node* n) {  // a table entry at first sight, for the pending counts
    n->backward_pass_ = pass_;
    n->backward_index_ = static_cast<uint32_t>(state_.size());
    state_.emplace_back();
  }

  uint64_t pass_;
  std::vector<NodeState> state_;
};

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
  BackwardPass g(root.get());
  // Weight-gradient products of multi-use weights wait here until the weight's last consumer has run.
  WeightGradDeferral deferral(g.number());
  // Nothing writes a parameter during backward: every step's dx = dz W^T reuses one packed W^T.
  PackedWeightScope packed_weights;

  // Ready nodes: those whose consumers have all run, earliest discovered first (deterministic; discovery runs
  // from the root, so this is the order of the header's "most recently created"). The queue holds each node's
  // discovery number beside it, so ordering needs no lookup.
  using Ready = std::pair<uint64_t, Node*>;
  auto later = [](const Ready& a, const Ready& b) { return a.first > b.first; };
  std::vector<Ready> ready_storage;
  ready_storage.reserve(g.node_count());  // never more ready than nodes: one allocation
  std::priority_queue<Ready, std::vector<Ready>, decltype(later)> ready(later, std::move(ready_storage));
  ready.emplace(0, root.get());  // the root is discovered first
  while (!ready.empty()) {
    Node* n = ready.top().second;
    ready.pop();
    NodeState& state = g.of(n);
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
        if (in->pass_uses.deliver()) {
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
