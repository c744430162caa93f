#include "framework/nn/module.h"

#include "framework/nn/init.h"

namespace luong {

std::vector<NamedParameter> Module::named_parameters() const {
  std::vector<NamedParameter> out;
  collect("", out);
  return out;
}

std::vector<Variable> Module::parameters() const {
  std::vector<Variable> out;
  for (auto& [_, p] : named_parameters()) out.push_back(p);
  return out;
}

int64_t Module::parameter_count() const {
  int64_t n = 0;
  for (auto& [_, p] : named_parameters()) n += p.data().numel();
  return n;
}

void Module::assign_parameter_names() {
  for (auto& [name, p] : named_parameters()) p.impl()->name = name;
}

void Module::collect(const std::string& prefix, std::vector<NamedParameter>& out) const {
  for (const auto& [name, p] : params_) out.emplace_back(prefix + name, p);
  for (const auto& [name, child] : children_) child->collect(prefix + name + ".", out);
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [_, child] : children_) child->train(on);
}

void Module::init_parameters(const std::string& init, double range, Generator& gen) {
  const Initializer& fn = InitRegistry::instance().get(init);
  for (auto& [name, p] : named_parameters()) fn(p.data(), range, gen);
  post_init_all();
}

void Module::post_init_all() {
  for (auto& [_, child] : children_) child->post_init_all();
  post_init();
}

Variable Module::register_parameter(const std::string& name, const Shape& shape, DType dtype) {
  LUONG_CHECK(dtype == DType::f32 || dtype == DType::f64, "parameter '", name, "': dtype ", dtype,
              " is not a float type");
  for (const auto& [n, _] : params_) LUONG_CHECK(n != name, "duplicate parameter name '", name, "'");
  Variable v(Tensor::zeros(shape, dtype), true, name);
  params_.emplace_back(name, v);
  return v;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> m) {
  LUONG_CHECK(m != nullptr, "child module '", name, "' is null");
  for (const auto& [n, _] : children_) LUONG_CHECK(n != name, "duplicate child module name '", name, "'");
  children_.emplace_back(name, std::move(m));
}

}  // namespace luong
