// `luong info`: what a checkpoint is, read from the file alone (no model is built): who wrote it and when (the
// checksum verified), whether `luong train --resume` can continue from it or it holds a model only (an average),
// the network and its parameter count, vocabularies and subword units, where its training stood (step, epochs,
// data position, optimizer, schedule, best validation) and the parameter average it keeps.
//   luong info runs/m30k/best.h5                 a summary
//   luong info runs/m30k                         every checkpoint of a run directory, best.h5 last
//   luong info --json runs/m30k | jq .step       one JSON object per checkpoint, a line each, for scripts
//   luong info --config runs/m30k/best.h5        also the config the run was trained with (YAML)
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_dir.h"
#include "launch/commands.h"
#include "models/nmt/stored_run.h"

namespace luong::cli {
namespace {

using nlohmann::json;

struct InfoArgs {
  std::vector<std::string> paths;
  bool json_output = false;
  bool show_config = false;
};

// What to describe: a file, and whether it is its run's best.h5.
struct Target {
  std::string path;
  bool best = false;
};

// A run directory stands for its step checkpoints, oldest first; best.h5 is a hard link to one of them (marked
// "best" there instead of read twice), or its own file where links were refused (listed last).
std::vector<Target> expand(const std::vector<std::string>& paths) {
  std::vector<Target> out;
  for (const std::string& p : paths) {
    if (!std::filesystem::is_directory(p)) {
      // best.h5 itself, or the step checkpoint it links to.
      std::error_code ec;
      const std::filesystem::path best = std::filesystem::path(p).parent_path() / "best.h5";
      out.push_back({p, std::filesystem::path(p).filename() == "best.h5" || std::filesystem::equivalent(p, best, ec)});
      continue;
    }
    const size_t first = out.size();
    for (const CheckpointFile& f : list_checkpoints(p)) out.push_back({f.path});
    const std::string best = best_checkpoint_path(p);
    if (std::filesystem::exists(best)) {
      bool linked = false;
      for (size_t i = first; i < out.size() && !linked; ++i) {
        std::error_code ec;
        linked = std::filesystem::equivalent(out[i].path, best, ec);
        if (linked) out[i].best = true;
      }
      if (!linked) out.push_back({best, true});
    }
    if (out.size() == first) LUONG_FAIL("info: ", p, " is a directory without checkpoints (ckpt-<step>.h5, best.h5)");
  }
  return out;
}

template <class Map>
json value_or_null(const Map& map, const std::string& key) {
  const auto it = map.find(key);
  if (it == map.end()) return nullptr;
  if constexpr (std::is_floating_point_v<typename Map::mapped_type>) {
    if (!std::isfinite(it->second)) return nullptr;  // a best score before any validation is +inf
  }
  return it->second;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

// The validation record of `step` in the metrics.jsonl beside the checkpoint (its run directory), without its
// "type"; null when there is none (no validation at that step, or the file was moved out of its run).
json validation_at(const std::string& checkpoint, int64_t step) {
  const std::filesystem::path metrics = std::filesystem::path(checkpoint).parent_path() / "metrics.jsonl";
  std::ifstream in(metrics);
  json found = nullptr;
  for (std::string line; std::getline(in, line);) {
    const json record = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_object() && record.value("type", "") == "valid" && record.value("step", int64_t{-1}) == step) {
      found = record;
      found.erase("type");
    }
  }
  return found;
}

// Everything `info` reports, as the JSON object --json prints; the text form is made from it.
json describe(const Checkpoint& c, bool with_config) {
  const StateDict& s = c.state;
  json j;
  j["path"] = c.path;
  j["file_bytes"] = std::filesystem::file_size(c.path);
  j["luong_version"] = value_or_null(c.metadata, "luong_version");
  j["format_version"] = c.format_version;
  j["created"] = value_or_null(c.metadata, "created");
  j["checksum"] = "verified";  // load_checkpoint refuses a file whose checksum differs
  // Resumable: the trainer's state is there (luong train --resume's own test, resume_point.cpp).
  const bool training = s.ints.contains("trainer/step");
  j["kind"] = c.metadata.contains("averaged_from") ? "average" : training ? "training" : "model";
  j["resumable"] = training;
  if (c.metadata.contains("averaged_from")) j["averaged_from"] = split_commas(c.metadata.at("averaged_from"));
  int64_t parameters = 0, tensors = 0;
  for (const auto& [name, t] : s.tensors)
    if (name.rfind("model/", 0) == 0) parameters += t.numel(), ++tensors;
  j["parameters"] = parameters;
  j["parameter_tensors"] = tensors;
  j["dtype"] = value_or_null(c.metadata, "dtype");
  j["world_size"] = value_or_null(c.metadata, "world_size");
  if (j["world_size"].is_string()) {  // written as text, read as the number it is
    char* end = nullptr;
    const std::string& text = j["world_size"].get_ref<const std::string&>();
    const long long n = std::strtoll(text.c_str(), &end, 10);
    if (end != text.c_str() && *end == '\0') j["world_size"] = n;
  }
  if (s.strings.contains("config")) {
    const nmt::StoredRun run = nmt::read_stored_run(c);
    const nmt::ModelConfig& m = run.cfg.model;
    json model{{"layers", m.layers},
               {"hidden_size", m.hidden_size},
               {"embedding_size", m.embedding_size},
               {"attention", m.attention},
               {"input_feeding", m.input_feeding},
               {"bidirectional_encoder", m.bidirectional_encoder},
               {"reverse_source", m.reverse_source},
               {"tie_embeddings", m.tie_embeddings}};
    if (m.attention.rfind("local", 0) == 0) {
      model["attention_score"] = m.attention_score;
      model["attention_window"] = m.attention_window;
    }
    j["model"] = model;
    j["src_vocab"] = run.src_vocab.size();
    j["tgt_vocab"] = run.tgt_vocab.size();
    j["subwords"] = run.subwords.any() ? run.subwords.describe() : "whole words";
    if (with_config) j["config"] = run.config_text;
  }
  j["step"] = value_or_null(s.ints, "trainer/step");
  j["epochs_completed"] = value_or_null(s.ints, "trainer/epochs_completed");
  if (s.ints.contains("data/epoch"))
    j["data_position"] = {{"epoch", s.ints.at("data/epoch")}, {"index", value_or_null(s.ints, "data/index")}};
  j["optimizer"] = value_or_null(s.strings, "optim/name");
  j["optimizer_step"] = value_or_null(s.ints, "optim/step");
  j["schedule"] = value_or_null(s.strings, "schedule/name");
  j["schedule_lr"] = value_or_null(s.floats, "schedule/lr");  // the plateau schedule's current rate
  j["valid_metric"] = value_or_null(s.strings, "trainer/valid_metric");
  j["best_valid_score"] = value_or_null(s.floats, "trainer/best_valid_score");
  j["best_valid_ppl"] = value_or_null(s.floats, "trainer/best_valid_ppl");
  if (j["best_valid_ppl"].is_number() && j["best_valid_ppl"].get<double>() <= 0) j["best_valid_ppl"] = nullptr;  // none yet
  if (s.ints.contains("trainer/step")) j["validation"] = validation_at(c.path, s.ints.at("trainer/step"));
  const auto last_valid = s.ints.find("trainer/last_valid_step");
  j["last_valid_step"] =
      last_valid != s.ints.end() && last_valid->second > 0 ? json(last_valid->second) : json(nullptr);
  if (s.ints.contains("ema/updates"))
    j["ema"] = {{"decay", value_or_null(s.floats, "ema/decay")}, {"updates", s.ints.at("ema/updates")}};
  return j;
}

// 1234567 -> "1,234,567".
std::string grouped(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

// A score as the training log prints it: 6 significant digits.
std::string number(const json& x) {
  if (x.is_null()) return "-";
  std::ostringstream o;
  o << std::setprecision(6) << x.get<double>();
  return o.str();
}

// BLEU and chrF with sacreBLEU's two decimals, the rest as number() gives them.
std::string score(const std::string& key, const json& x) {
  if (key.find("bleu") == std::string::npos && key.find("chrf") == std::string::npos) return number(x);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", x.get<double>());
  return buffer;
}

std::string text(const json& j) {
  // Values a field may lack print as "-".
  const auto v = [](const json& x) {
    return x.is_null() ? std::string("-") : x.is_string() ? x.get<std::string>() : x.dump();
  };
  std::ostringstream o;
  const auto line = [&o](const std::string& key, const std::string& value) {
    o << key << std::string(key.size() < 12 ? 12 - key.size() : 1, ' ') << value << '\n';
  };
  const double mb = static_cast<double>(j["file_bytes"].get<uint64_t>()) / 1e6;
  line("checkpoint", str(j["path"].get<std::string>(), " (", std::round(mb * 10) / 10, " MB)",
                         j["best"].get<bool>() ? ", the run's best.h5" : ""));
  line("written", str(v(j["created"]), " by luong ", v(j["luong_version"]), ", format ", j["format_version"].dump(),
                      ", checksum verified"));
  const std::string kind = j["kind"];
  line("kind", kind == "training"  ? "training checkpoint: luong train --resume continues from it"
               : kind == "average" ? str("average of ", j["averaged_from"].size(),
                                         " checkpoints, for eval and translate (no training state)")
                                   : "model only, for eval and translate (no training state)");
  if (j.contains("model")) {
    const json& m = j["model"];
    std::string attention = m["attention"].get<std::string>() + " attention";
    if (m.contains("attention_window"))
      attention +=
          str(" (", m["attention_score"].get<std::string>(), " score, D = ", m["attention_window"].dump(), ")");
    line("model",
         str(m["layers"].dump(), " x ", m["hidden_size"].dump(), " LSTM, embeddings ", m["embedding_size"].dump(), ", ",
             attention, m["input_feeding"].get<bool>() ? ", input feeding" : "",
             m["bidirectional_encoder"].get<bool>() ? ", bidirectional first encoder layer" : "",
             m["reverse_source"].get<bool>() ? ", reversed source" : "",
             m["tie_embeddings"].get<bool>() ? ", tied target embeddings" : ""));
  }
  line("parameters", str(grouped(j["parameters"].get<int64_t>()), " in ", j["parameter_tensors"].dump(), " tensors (",
                         v(j["dtype"]), ")"));
  if (j.contains("src_vocab"))
    line("vocabulary", str("source ", grouped(j["src_vocab"].get<int64_t>()), ", target ",
                           grouped(j["tgt_vocab"].get<int64_t>()), "; ", j["subwords"].get<std::string>()));
  if (!j["step"].is_null()) {
    std::string where =
        str("step ", grouped(j["step"].get<int64_t>()), ", ", v(j["epochs_completed"]), " epoch(s) completed");
    if (j.contains("data_position"))
      where +=
          str(", next batch at epoch ", v(j["data_position"]["epoch"]), " position ", v(j["data_position"]["index"]));
    line("training", where + str(", ", v(j["world_size"]), " process(es)"));
    line("optimizer", str(v(j["optimizer"]), " (step ", v(j["optimizer_step"]), "), schedule ", v(j["schedule"]),
                          j["schedule_lr"].is_null() ? "" : str(" (lr ", number(j["schedule_lr"]), ")")));
    if (!j["last_valid_step"].is_null()) {
      std::string best = str("best ", v(j["valid_metric"]), " ", number(j["best_valid_score"]));
      if (j["valid_metric"] != "valid_ppl") best += str(" (best valid_ppl ", number(j["best_valid_ppl"]), ")");
      line("validation", str(best, "; last validated at step ", grouped(j["last_valid_step"].get<int64_t>())));
    } else {
      line("validation", "none yet");
    }
    if (j.contains("validation") && j["validation"].is_object()) {
      std::string scores;
      for (const auto& [key, value] : j["validation"].items())
        if (key.rfind("valid_", 0) == 0 && value.is_number())
          scores += str(scores.empty() ? "" : ", ", key, " ", score(key, value));
      line("this step", scores + " (metrics.jsonl)");
    }
  }
  if (j.contains("ema"))
    line("average", str("exponential moving average, decay ", v(j["ema"]["decay"]), ", ", v(j["ema"]["updates"]),
                        " updates: the model holds the average, ema/training_params the trained values"));
  if (j.contains("averaged_from"))
    for (const auto& p : j["averaged_from"]) line("averaged", p.get<std::string>());
  if (j.contains("config")) o << "config:\n" << j["config"].get<std::string>();
  return o.str();
}

void run(const InfoArgs& a) {
  const std::vector<Target> targets = expand(a.paths);
  for (size_t i = 0; i < targets.size(); ++i) {
    json j = describe(load_checkpoint(targets[i].path), a.show_config);
    j["best"] = targets[i].best;
    if (a.json_output) {
      std::cout << j.dump() << '\n';
    } else {
      std::cout << (i > 0 ? "\n" : "") << text(j);
    }
    std::cout.flush();  // a long list shows as it is read
  }
  flush_stdout();
}

const bool kRegistered = add_command([](CLI::App& app) {
  auto args = std::make_shared<InfoArgs>();
  auto* cmd = app.add_subcommand("info",
                                 "What a checkpoint is: writer, training state (resumable or not), model, parameters, "
                                 "vocabularies, step, optimizer, best validation, parameter average");
  cmd->add_option("checkpoints", args->paths, "Checkpoint files, or run directories (each: its checkpoints)")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_flag("--json", args->json_output, "One JSON object per checkpoint, a line each");
  cmd->add_flag("--config", args->show_config, "Also print the config the run was trained with (YAML)");
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace luong::cli
