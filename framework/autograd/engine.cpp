// The backward pass: a topological walk over the nodes reachable from the root.
//
// Order: Kahn's algorithm over "consumer" edges, starting at the root's node; among ready nodes the most
// recently created runs first (a max-heap on creation sequence), which is deterministic and matches reverse
// execution order, so gradient-ready hooks fire in the same order on every rank.
#include <map>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "framework/autograd/node.h"
#include "framework/autograd/weight_grad_deferral.h"
#include "framework/ops/tensor_math.h"
#include "framework/ops/weight_gemm.h"

namespace luong {
namespace {

struct Graph {
  std::vector<Node*> nodes;                          // in discovery order
  std::unordered_map<Node*, int> pending_consumers;  // consumers not yet run
  std::unordered_map<VariableImpl*, int> leaf_uses;  // edges into each grad-requiring leaf
  std::unordered_map<VariableImpl*, int> uses;       // edges into every grad-requiring variable
};

Graph discover(Node* root) {
  Graph g;
  std::vector<Node*> stack{root};
  std::unordered_set<Node*> seen{root};
  g.pending_consumers[root] = 0;
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    g.nodes.push_back(n);
    for (const auto& in : n->inputs()) {
      if (!in->requires_grad) continue;
      ++g.uses[in.get()];
      if (!in->grad_fn) {
        ++g.leaf_uses[in.get()];
        continue;
      }
      Node* p = in->grad_fn.get();
      ++g.pending_consumers[p];
      if (seen.insert(p).second) stack.push_back(p);
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
  std::unordered_map<Node*, uint64_t> seq;  // discovery order: consumers are found before producers
  for (Node* n : g.nodes) seq.emplace(n, seq.size());
  // Weight-gradient products of multi-use weights wait here until the weight's last consumer has run.
  WeightGradDeferral deferral(std::move(g.uses));
  // Nothing writes a parameter during backward: every step's dx = dz W^T reuses one packed W^T.
  PackedWeightScope packed_weights;

  // Interior variables whose producer has not run yet. A consumer drops its edges once it has run, so
  // without this the variable (and the gradient it just received) could die before its producer reads it.
  std::unordered_map<Node*, std::vector<std::shared_ptr<VariableImpl>>> waiting;

  // Ready nodes: those whose consumers have all run; ties broken by discovery order (deterministic).
  auto later = [&](Node* a, Node* b) { return seq[a] > seq[b]; };
  std::priority_queue<Node*, std::vector<Node*>, decltype(later)> ready(later);
  ready.push(root.get());
  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    if (!deferral.empty())  // n's outputs have every contribution now: complete their deferred products
      if (auto it = waiting.find(n); it != waiting.end())
        for (auto& out : it->second) deferral.flush(*out);
    n->backward();
    auto inputs = n->inputs();  // snapshot: release() drops the edges
    n->release();
    if (auto it = waiting.find(n); it != waiting.end()) {
      for (auto& out : it->second) {  // consumed: free the interior gradient
        out->grad = Tensor();
        out->grad_shared = false;
      }
      waiting.erase(it);
    }
    for (const auto& in : inputs) {
      if (!in->requires_grad) continue;
      if (!in->grad_fn) {
        if (--g.leaf_uses[in.get()] == 0) {
          deferral.flush(*in);
          read_grad(*in);  // a leaf no node gave a gradient to: its pending zero is written before anyone reads it
          if (in->grad_ready_hook) in->grad_ready_hook(*in);
        }
        continue;
      }
      Node* p = in->grad_fn.get();
      waiting[p].push_back(in);
      if (--g.pending_consumers[p] == 0) ready.push(p);
    }
  }
  // Free interior gradients still held by variables the user keeps (the root among them).
  impl_->grad = Tensor();
  impl_->grad_shared = false;
}

}  // namespace luong
