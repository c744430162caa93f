// `luong average`: the parameter average of several checkpoints, written as a new checkpoint.
//   luong average -o run/avg.h5 run/ckpt-9000.h5 run/ckpt-9500.h5 run/ckpt-10000.h5
//   luong average -o run/avg.h5 --last 3 run          (the 3 newest ckpt-<step>.h5 of a run directory, as
//                                                      fairseq's average_checkpoints --num-update-checkpoints)
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>

#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_average.h"
#include "framework/io/checkpoint_dir.h"
#include "framework/io/config.h"
#include "framework/io/config_value.h"
#include "launch/commands.h"
#include "models/nmt/nmt_config.h"

namespace luong::cli {
namespace {

struct AverageArgs {
  std::vector<std::string> inputs;
  std::string output;
  bool force = false;
  int64_t last = 0;  // > 0: inputs is one run directory, whose newest `last` step checkpoints are averaged
};

// --last N: the N newest step checkpoints of the one run directory given, oldest first (best.h5 is not a step
// checkpoint: it is one of them or an older one, and would count twice or out of turn).
std::vector<std::string> newest_checkpoints(const AverageArgs& a) {
  if (a.inputs.size() != 1 || !std::filesystem::is_directory(a.inputs[0]))
    throw CLI::ValidationError("--last",
                               str("takes one run directory instead of checkpoint files, got ",
                                   a.inputs.size() == 1 ? "the file " + a.inputs[0] : str(a.inputs.size(), " paths")));
  const std::vector<CheckpointFile> files = list_checkpoints(a.inputs[0]);
  if (static_cast<int64_t>(files.size()) < a.last) {
    std::string found;
    for (const CheckpointFile& f : files) found += (found.empty() ? "" : ", ") + f.path;
    LUONG_FAIL("average: --last ", a.last, ": ", a.inputs[0], " holds ", files.size(), " step checkpoint(s)",
               found.empty() ? std::string() : " (" + found + ")",
               "; a run keeps train.keep_checkpoints of them (raise it to keep more)");
  }
  std::vector<std::string> paths;
  for (size_t i = files.size() - static_cast<size_t>(a.last); i < files.size(); ++i) paths.push_back(files[i].path);
  return paths;
}

// Averaging parameters indexed by different vocabularies (same sizes, other words), trained on other subword
// units, or of differently wired models gives a checkpoint that loads but translates garbage, so all must
// match exactly.
void require_same_vocabulary(const Checkpoint& first, const Checkpoint& other, const std::string& name) {
  const auto a = first.state.strings.find(name), b = other.state.strings.find(name);
  if (a == first.state.strings.end() && b == other.state.strings.end()) return;
  if (a == first.state.strings.end() || b == other.state.strings.end())
    LUONG_FAIL("average: '", name, "' is in ", (a == first.state.strings.end() ? other.path : first.path),
               " but missing from ", (a == first.state.strings.end() ? first.path : other.path));
  const std::vector<std::string> x = split_string_list(a->second), y = split_string_list(b->second);
  for (size_t i = 0; i < std::min(x.size(), y.size()); ++i)
    if (x[i] != y[i])
      LUONG_FAIL("average: '", name, "' of ", other.path, " differs from ", first.path, " at item ", i, ": '", y[i],
                 "' vs '", x[i], "' (checkpoints with different vocabularies or BPE merges cannot be averaged)");
  if (x.size() != y.size())
    LUONG_FAIL("average: '", name, "' has ", y.size(), " items in ", other.path, " but ", x.size(), " in ", first.path,
               " (checkpoints with different vocabularies or BPE merges cannot be averaged)");
}

void require_same_model_config(const Checkpoint& first, const Checkpoint& other) {
  const auto a = first.state.strings.find("config"), b = other.state.strings.find("config");
  if (a == first.state.strings.end() && b == other.state.strings.end()) return;
  if (a == first.state.strings.end() || b == other.state.strings.end())
    LUONG_FAIL("average: the stored config is in ", (a == first.state.strings.end() ? other.path : first.path),
               " but missing from ", (a == first.state.strings.end() ? first.path : other.path));
  const Config x = Config::load_string(nmt::nmt_schema(), a->second, first.path + ":/config");
  const Config y = Config::load_string(nmt::nmt_schema(), b->second, other.path + ":/config");
  // The other keys (training-time dropout, how the weights were initialised) may differ: those checkpoints
  // average like any two of one run.
  for (const KeySpec& key : x.schema().keys()) {
    if (!nmt::describes_the_network(key.path)) continue;
    const std::string vx = value_to_yaml(x.get(key.path)), vy = value_to_yaml(y.get(key.path));
    if (vx != vy)
      LUONG_FAIL("average: model config differs: ", key.path, " is ", vy, " in ", other.path, " but ", vx, " in ",
                 first.path, " (checkpoints of different models cannot be averaged)");
  }
}

void require_compatible(const Checkpoint& first, const Checkpoint& other) {
  // Merges first: other merges make other vocabularies. Joint and per-side ones each under their keys
  // (models/nmt/data/subwords.h).
  for (const char* merges : {"bpe/merges", "bpe/merges_src", "bpe/merges_tgt"})
    require_same_vocabulary(first, other, merges);
  require_same_vocabulary(first, other, "vocab/src");
  require_same_vocabulary(first, other, "vocab/tgt");
  require_same_model_config(first, other);
}

// Writing over an input would destroy it (and the average would silently replace a training checkpoint);
// writing over any other existing file (e.g. another run's best.h5) needs --force.
void check_output(const AverageArgs& a) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool exists = fs::exists(a.output, ec);
  for (const auto& in : a.inputs) {
    std::error_code ec_out, ec_in;
    const fs::path out_path = fs::weakly_canonical(a.output, ec_out), in_path = fs::weakly_canonical(in, ec_in);
    if (!ec_out && !ec_in && out_path == in_path)
      LUONG_FAIL("average: --output ", a.output, " is the input checkpoint ", in, "; write the average to a new file");
    if (exists && fs::equivalent(a.output, in, ec))
      LUONG_FAIL("average: --output ", a.output, " is the same file as input ", in,
                 " (a hard link); write the average to a new file");
  }
  if (exists && fs::is_directory(a.output, ec))
    LUONG_FAIL("average: --output ", a.output, " is a directory; name the checkpoint file to write");
  // The write renames a new file over the path: a device or a FIFO (/dev/null as root) would be replaced.
  if (exists && !fs::is_regular_file(a.output, ec))
    LUONG_FAIL("average: --output ", a.output, " exists and is not a regular file; name a checkpoint file to write");
  if (exists && !a.force) LUONG_FAIL("average: --output ", a.output, " exists; pass --force to replace it");
}

// The same checkpoint twice (by path, symlink or hard link) would silently get twice the weight.
void require_distinct_inputs(const AverageArgs& a) {
  for (size_t i = 0; i < a.inputs.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      std::error_code ec;
      if (std::filesystem::equivalent(a.inputs[j], a.inputs[i], ec))
        LUONG_FAIL("average: input ", a.inputs[i], " is the same file as input ", a.inputs[j],
                   " (averaging a checkpoint with itself would count it twice)");
    }
}

void run(AverageArgs a) {
  if (a.last != 0) {
    if (a.last < 2) throw CLI::ValidationError("--last", str("must be at least 2, got ", a.last));
    a.inputs = newest_checkpoints(a);
  }
  if (a.inputs.size() < 2) LUONG_FAIL("average needs at least two checkpoints, got ", a.inputs.size());
  check_output(a);
  require_distinct_inputs(a);
  Checkpoint avg = average_checkpoints(a.inputs, require_compatible);
  std::string sources;
  for (const auto& p : a.inputs) sources += (sources.empty() ? "" : ",") + p;
  // Tells a reader (and `train --resume`) that this is an averaged model without training state.
  avg.metadata["averaged_from"] = sources;
  save_checkpoint(a.output, avg.state, avg.metadata);
  std::cout << "wrote " << a.output << " (average of " << a.inputs.size() << " checkpoints"
            << (a.last > 0 ? ": " + sources : std::string()) << ")\n";
}

const bool kRegistered = add_command([](CLI::App& app) {
  auto args = std::make_shared<AverageArgs>();
  auto* cmd = app.add_subcommand("average",
                                 "Average the parameters of several checkpoints into a new one (same vocabularies "
                                 "and model config); the result has no training state: it is for eval and "
                                 "translate, not --resume");
  cmd->add_option("checkpoints", args->inputs, "Checkpoints to average (with --last: one run directory)")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("--last", args->last,
                  "Average the N newest ckpt-<step>.h5 of the run directory given (N >= 2; the run keeps "
                  "train.keep_checkpoints of them)");
  cmd->add_option("--output,-o", args->output, "Output checkpoint (a new file unless --force; never an input)")
      ->required();
  cmd->add_flag("--force", args->force, "Replace --output if it exists (it still may not be an input)");
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace luong::cli
