#include "models/nmt/model_parts.h"

#include "framework/core/error.h"
#include "framework/core/suggest.h"
#include "framework/io/config_schema.h"
#include "models/nmt/nmt_task.h"

namespace luong::nmt {
namespace {

// Every part a name can select: each module path above a parameter ("decoder", "decoder.lstm",
// "decoder.lstm.0") and each parameter, in the model's order, once.
std::vector<std::string> parts_of(const NmtModel& model) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& [name, v] : model.named_parameters()) {
    for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1))
      if (seen.insert(name.substr(0, dot)).second) out.push_back(name.substr(0, dot));
    if (seen.insert(name).second) out.push_back(name);
  }
  return out;
}

bool under(const std::string& name, const std::string& part) {
  return name == part ||
         (name.size() > part.size() && name.compare(0, part.size(), part) == 0 && name[part.size()] == '.');
}

}  // namespace

std::vector<std::string> part_list(const std::string& spec) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t end = spec.find(',', start);
    if (end == std::string::npos) end = spec.size();
    std::string item = spec.substr(start, end - start);
    const size_t first = item.find_first_not_of(' '), last = item.find_last_not_of(' ');
    if (first != std::string::npos) out.push_back(item.substr(first, last - first + 1));
    start = end + 1;
  }
  return out;
}

std::set<std::string> parameters_in_parts(const std::string& key, const std::string& spec, const NmtModel& model) {
  const std::vector<std::string> parts = parts_of(model);
  std::set<std::string> out;
  for (const std::string& item : part_list(spec)) {
    bool found = false;
    for (const auto& [name, v] : model.named_parameters())
      if (under(name, item)) out.insert(name), found = true;
    if (found) continue;
    std::vector<std::string> top;  // "encoder.embedding", "decoder.output": the second level, one dot deep
    for (const std::string& p : parts)
      if (p.find('.') != std::string::npos && p.find('.') == p.rfind('.')) top.push_back(p);
    // A typo, or a part whose name merely begins alike ("decoder.output" of a model with tied embeddings).
    std::string hint = did_you_mean(item, parts);
    for (const std::string& p : parts)
      if (hint.empty() && p.rfind(item, 0) == 0) hint = "; did you mean '" + p + "'?";
    LUONG_FAIL(key, ": '", item, "' names no part of this model", hint,
               " (its parts are module paths and parameter names as `luong` names them: ", join_names(top, ", "),
               ", and the layers and parameters under them)");
  }
  return out;
}

std::vector<size_t> parameter_indices_in_parts(const std::string& key, const std::string& spec, const NmtModel& model) {
  const std::set<std::string> names = parameters_in_parts(key, spec, model);
  const auto params = model.named_parameters();
  std::vector<size_t> out;
  for (size_t i = 0; i < params.size(); ++i)
    if (names.contains(params[i].first)) out.push_back(i);
  return out;
}

void drop_skipped(const std::set<std::string>& skipped, Checkpoint& source, StateDict& destinations) {
  for (const std::string& name : skipped) {
    source.state.tensors.erase(checkpoint_name(name));
    destinations.tensors.erase(checkpoint_name(name));
  }
}

}  // namespace luong::nmt
