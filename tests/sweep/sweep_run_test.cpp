// `luong sweep` end to end on the toy task: tiny trials (hidden 16, 20 steps) run by the real binary.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "framework/core/error.h"
#include "framework/sweep/sweep_spec.h"
#include "framework/sweep/tpe_sampler.h"
#include "tests/support/run_luong.h"

namespace luong::sweep {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Sweep {
  int status = -1;
  std::string out;  // stdout only
  std::string err;
};

class SweepRunTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    data_ = new std::string(testing::fresh_dir("sweep_data"));
    const auto r = testing::run_luong("gen-data --out " + *data_ + " --train 300 --valid 30 --test 20");
    ASSERT_EQ(r.status, 0) << r.output;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*data_);
    delete data_;
  }
  void SetUp() override { dir_ = testing::fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name()); }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  // A spec on the tiny config with toy data and trials of a second or two; `body` adds grid etc.
  // With `vary_train_src` the spec leaves data.train_src to the grid.
  std::string write_spec(const std::string& body, const std::string& extra_overrides, bool vary_train_src = false) {
    const std::string d = *data_;
    const std::string spec = dir_ + "/spec.yaml";
    std::ofstream(spec) << "base: " << LUONG_SOURCE_DIR << "/configs/tiny.yaml\n"
                        << "overrides:\n"
                        << "  data: {" << (vary_train_src ? "" : "train_src: " + d + "/train.src, ") << "train_tgt: " << d
                        << "/train.tgt, valid_src: " << d
                        << "/valid.src, valid_tgt: " << d << "/valid.tgt, test_src: " << d << "/test.src, test_tgt: " << d
                        << "/test.tgt}\n"
                        << "  model: {hidden_size: 16, embedding_size: 16}\n"
                        << "  train: {max_epochs: 0, valid_every: 10, log_every: 5, batch_size: 16}\n"
                        << extra_overrides << body;
    return spec;
  }

  Sweep run_sweep(const std::string& args) {
    Sweep s;
    const std::string err = dir_ + "/sweep.stderr";
    const std::string cmd = std::string(LUONG_BINARY) + " sweep " + args + " 2> " + err;
    FILE* p = popen(cmd.c_str(), "r");
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) s.out.append(buf, n);
    const int st = pclose(p);
    s.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    s.err = read(err);
    return s;
  }

  std::string trial(const std::string& name) const { return dir_ + "/out/trials/" + name; }
  // The p-value `luong bleu --paired-bs` (with `metric_args`) gives the second-ranked trial's kept translations
  // against the first's: what its p_vs_best must be. `score` names the metric in luong bleu's JSON.
  json paired_p_value(const json& ranked, const std::string& metric_args, const std::string& score) const {
    const auto r = testing::run_luong("bleu " + *data_ + "/test.tgt " + metric_args + " -i " +
                                      trial(ranked[0]["name"]) + "/eval_translations.txt " + trial(ranked[1]["name"]) +
                                      "/eval_translations.txt --paired-bs --json");
    EXPECT_EQ(r.status, 0) << r.output;
    return json::parse(r.output)[1][score]["p_value"];
  }
  // The highest `key` ("valid_bleu", "valid_chrf") of the "valid" records of trial `name` (-1: none).
  double best_recorded(const std::string& name, const std::string& key) const {
    double best = -1;
    std::ifstream in(trial(name) + "/metrics.jsonl");
    for (std::string line; std::getline(in, line);)
      if (const json j = json::parse(line); j["type"] == "valid") best = std::max(best, j[key].get<double>());
    return best;
  }

  // Starts `luong sweep SPEC --out DIR/out` in the background, its output in `log`, and waits (up to 30 s)
  // until trial `name` has logged a training record; returns the sweep's pid.
  pid_t start_sweep_until_training(const std::string& spec, const std::string& log, const std::string& name) {
    const pid_t pid = fork();
    if (pid == 0) {
      const std::string cmd =
          "exec " + std::string(LUONG_BINARY) + " sweep " + spec + " --out " + dir_ + "/out > " + log + " 2>&1";
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline &&
           read(trial(name) + "/metrics.jsonl").find("\"type\":\"train\"") == std::string::npos)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return pid;
  }

  static std::string* data_;
  std::string dir_;
};
std::string* SweepRunTest::data_ = nullptr;

// Minimum valid_ppl over the "valid" records of a metrics.jsonl, read independently of the sweep code.
double min_valid_ppl(const std::string& path) {
  double best = 1e300;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const json j = json::parse(line);
    if (j["type"] == "valid") best = std::min(best, j["valid_ppl"].get<double>());
  }
  return best;
}

// The last `--json` summary line of a train.log (null when there is none).
json last_summary(const std::string& log) {
  json last;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    const size_t brace = line.find('{');
    if (brace == std::string::npos) continue;
    json j = json::parse(line.substr(brace), nullptr, false);
    if (j.is_object() && j.contains("stop_reason")) last = std::move(j);
  }
  return last;
}

// The cells of the results.csv row of `trial`, by column name (cells of these rows hold no commas).
std::map<std::string, std::string> csv_row(const std::string& csv, const std::string& trial) {
  auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::istringstream in(line);
    for (std::string c; std::getline(in, c, ',');) cells.push_back(c);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    return cells;
  };
  std::istringstream in(csv);
  std::string header_line;
  std::getline(in, header_line);
  const auto header = split(header_line);
  std::map<std::string, std::string> row;
  for (std::string line; std::getline(in, line);) {
    const auto cells = split(line);
    if (cells.size() < 2 || cells[1] != trial) continue;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
  }
  return row;
}

int64_t attempts(const std::string& trial_dir) { return json::parse(read(trial_dir + "/sweep_state.json"))["attempts"]; }

TEST_F(SweepRunTest, GridRunsToCompletionRankedByValidPpl) {
  const std::string spec = write_spec("grid:\n  optim.lr: [0.02, 0.002]\n  model.attention: [dot, general]\nparallel: 2\n",
                                      "  train.max_steps: 20\n");
  const Sweep s = run_sweep(spec + " --out " + dir_ + "/out --json");
  ASSERT_EQ(s.status, 0) << s.err;
  const json results = json::parse(s.out);
  ASSERT_EQ(results.size(), 4u);
  std::set<std::string> names;
  double previous = 0.0;
  for (size_t i = 0; i < results.size(); ++i) {
    const json& r = results[i];
    const std::string name = r["name"];
    names.insert(name);
    EXPECT_EQ(r["status"], "ok") << name;
    EXPECT_EQ(r["rank"], static_cast<int>(i) + 1);
    EXPECT_EQ(r["steps"], 20);
    EXPECT_GT(r["tokens_per_s"].get<double>(), 0.0);
    EXPECT_GT(r["wall_s"].get<double>(), 0.0);
    // The table's value is the trial's own best validation, and rows are sorted by it.
    const double ppl = r["valid_ppl"];
    EXPECT_DOUBLE_EQ(ppl, min_valid_ppl(trial(name) + "/metrics.jsonl")) << name;
    EXPECT_GE(ppl, previous) << name;
    previous = ppl;
    // The run directory holds the resolved config with this trial's values and the captured log.
    const std::string config = read(trial(name) + "/config.yaml");
    EXPECT_NE(config.find("hidden_size: 16"), std::string::npos);
    EXPECT_NE(config.find("attention: " + r["overrides"]["model.attention"].get<std::string>()), std::string::npos);
    EXPECT_NE(read(trial(name) + "/train.log").find("\"stop_reason\""), std::string::npos);
    EXPECT_TRUE(fs::exists(trial(name) + "/result.json"));
  }
  EXPECT_EQ(names, (std::set<std::string>{"lr-0.02_attention-dot", "lr-0.02_attention-general", "lr-0.002_attention-dot",
                                          "lr-0.002_attention-general"}));
  // results.csv has the same rows in the same order; results.md and the plot exist.
  std::istringstream csv(read(dir_ + "/out/results.csv"));
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "rank,trial,optim.lr,model.attention,valid_ppl,tokens_per_s,wall_s,steps,status,error");
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(std::getline(csv, line));
    EXPECT_EQ(line.rfind(std::to_string(i + 1) + "," + results[i]["name"].get<std::string>() + ",", 0), 0u) << line;
  }
  EXPECT_NE(read(dir_ + "/out/results.md").find("| 1 | " + results[0]["name"].get<std::string>() + " |"), std::string::npos);
  const std::string svg = read(dir_ + "/out/valid_ppl.svg");
  const std::regex polyline("<polyline");
  EXPECT_EQ(std::distance(std::sregex_iterator(svg.begin(), svg.end(), polyline), std::sregex_iterator()), 4);
  EXPECT_FALSE(fs::exists(dir_ + "/out/valid_bleu.svg")) << "no trial recorded validation BLEU";

  // A second run has nothing to do: every trial is skipped, results are the same.
  const Sweep again = run_sweep(spec + " --out " + dir_ + "/out --json");
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(json::parse(again.out), results);
  for (const auto& n : names) EXPECT_EQ(attempts(trial(n)), 1) << n;

  // The same directory with other fixed settings would mix two experiments' checkpoints: refused, and the
  // directory's copy of the spec stays the one its results came from.
  const std::string original_spec = read(spec);
  ASSERT_EQ(read(dir_ + "/out/sweep.yaml"), original_spec);
  const std::string changed = write_spec("grid:\n  optim.lr: [0.02, 0.002]\n  model.attention: [dot, general]\n",
                                         "  train.max_steps: 30\n");
  const Sweep refused = run_sweep(changed + " --out " + dir_ + "/out");
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("was started with other settings"), std::string::npos) << refused.err;
  EXPECT_EQ(read(dir_ + "/out/sweep.yaml"), original_spec);
}

// The perplexity at `step` of a trial's "valid" record (-1: none), read independently of the sweep code.
double valid_ppl_at(const std::string& metrics, int64_t step) {
  std::ifstream in(metrics);
  for (std::string line; std::getline(in, line);)
    if (const json j = json::parse(line); j["type"] == "valid" && j["step"] == step) return j["valid_ppl"];
  return -1;
}

// `prune:`: the three trials that run first finish and set the bar; the fourth, at a learning rate that barely
// moves its parameters, is behind their median at its first validation, stopped there (with a checkpoint), and
// recorded as pruned, so the sweep succeeds and a rerun leaves it as it is.
TEST_F(SweepRunTest, PruningStopsATrialBehindTheFinishedOnes) {
  const std::string spec = write_spec(
      "grid:\n  optim.lr: [0.01, 0.02, 0.005, 0.00001]\n"
      "prune: {min_trials: 3, min_validations: 1}\n",
      // Long enough that the pruned trial is still training when its SIGTERM arrives, a few steps after step 10.
      "  train.max_steps: 600\n");
  const Sweep s = run_sweep(spec + " --out " + dir_ + "/out --json");
  ASSERT_EQ(s.status, 0) << s.err;
  const json results = json::parse(s.out);
  ASSERT_EQ(results.size(), 4u);
  std::vector<double> by_step_10;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(results[i]["status"], "ok") << results[i]["name"];
    EXPECT_EQ(results[i]["steps"], 600);
    by_step_10.push_back(valid_ppl_at(trial(results[i]["name"]) + "/metrics.jsonl", 10));
  }
  std::sort(by_step_10.begin(), by_step_10.end());
  const json& pruned = results[3];
  EXPECT_EQ(pruned["name"], "lr-0.00001");
  EXPECT_EQ(pruned["status"], "pruned");
  const std::string t = trial("lr-0.00001");
  const double own = valid_ppl_at(t + "/metrics.jsonl", 10);
  EXPECT_GT(own, by_step_10[1]);
  const std::string reason = pruned["stop_reason"];
  EXPECT_EQ(reason.rfind("pruned at step 10: best valid_ppl ", 0), 0u) << reason;
  EXPECT_NE(reason.find("the median of 3 finished trial(s)"), std::string::npos) << reason;
  // Stopped by SIGTERM as an interrupted run is: it saved its step, which is short of the limit.
  const int64_t steps = pruned["steps"];
  EXPECT_GE(steps, 10);
  EXPECT_LT(steps, 600) << "the trial finished before its SIGTERM arrived";
  EXPECT_TRUE(fs::exists(t + "/ckpt-" + std::to_string(steps) + ".h5"));
  EXPECT_EQ(json::parse(read(t + "/result.json"))["status"], "pruned");
  EXPECT_NE(s.err.find("[4/4] lr-0.00001: pruned at step 10"), std::string::npos) << s.err;
  const std::string md = read(dir_ + "/out/results.md");
  EXPECT_NE(md.find("3 of 4 trials ok, 1 pruned (median stopping rule on valid_ppl), 0 failed"), std::string::npos)
      << md;
  EXPECT_EQ(csv_row(read(dir_ + "/out/results.csv"), "lr-0.00001")["status"], "pruned");

  // Finished: a rerun (even one retrying failures) skips it, and reports the same table.
  const Sweep again = run_sweep(spec + " --out " + dir_ + "/out --json --retry-failed");
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(json::parse(again.out), results);
  EXPECT_NE(again.err.find("lr-0.00001: already pruned, skipped"), std::string::npos) << again.err;
  EXPECT_EQ(attempts(t), 1);

  // Given another chance (its result.json deleted), it resumes from its checkpoint and is judged on the
  // validations of its new run: still behind, it is stopped at the first of them, not again at step 10.
  fs::remove(t + "/result.json");
  const Sweep resumed = run_sweep(spec + " --out " + dir_ + "/out --json");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_EQ(attempts(t), 2);
  const json again_pruned = json::parse(read(t + "/result.json"));
  EXPECT_EQ(again_pruned["status"], "pruned");
  const std::string first_new = "pruned at step " + std::to_string((steps / 10 + 1) * 10) + ": ";
  EXPECT_EQ(again_pruned["stop_reason"].get<std::string>().rfind(first_new, 0), 0u)
      << again_pruned["stop_reason"] << " (resumed from step " << steps << ")";

  // Pruning by validation BLEU needs the trials to score their validations: refused before training.
  const std::string by_bleu =
      write_spec("grid:\n  optim.lr: [0.01]\nprune: {metric: valid_bleu}\n", "  train.max_steps: 5\n");
  const Sweep b = run_sweep(by_bleu + " --out " + dir_ + "/out2 --json");
  EXPECT_EQ(b.status, 1) << b.err;
  EXPECT_NE(b.out.find("prune.metric valid_bleu needs validation scoring in the trial's run"), std::string::npos)
      << b.out;
  EXPECT_FALSE(fs::exists(dir_ + "/out2/trials/lr-0.01/train.log")) << "refused before training";
}

// The (step, valid_ppl) records of a metrics.jsonl, in order.
std::vector<std::pair<int64_t, double>> valid_records(const std::string& metrics) {
  std::vector<std::pair<int64_t, double>> out;
  std::istringstream in(read(metrics));
  for (std::string line; std::getline(in, line);)
    if (const json j = json::parse(line); j["type"] == "valid") out.emplace_back(j["step"], j["valid_ppl"]);
  return out;
}

// Successive halving on five learning rates, rungs of 10, 20, 40 and 80 steps (reduction 2), one trial at a time.
// Checked from the trials' own files: at every rung the best half of the trials that reached it went on; one
// trial trained to the end, exactly as a run straight to 80 steps does; the others are pruned at a rung's step,
// with the rank the message gives. A rerun trains nothing; a pruned trial given another chance waits at its step
// again and is pruned again without training.
TEST_F(SweepRunTest, SuccessiveHalvingPromotesTheBestOfEachRung) {
  const std::string spec = write_spec(
      "grid:\n  optim.lr: [0.01, 0.02, 0.005, 0.00001, 0.001]\nprune: {rule: asha, min_steps: 10, reduction: 2}\n",
      "  train.max_steps: 80\n");
  const Sweep s = run_sweep(spec + " --out " + dir_ + "/out --json");
  ASSERT_EQ(s.status, 0) << s.err;
  const json results = json::parse(s.out);
  ASSERT_EQ(results.size(), 5u);
  std::map<std::string, int64_t> steps;
  std::map<std::string, std::vector<std::pair<int64_t, double>>> curves;
  for (const json& r : results) {
    const std::string name = r["name"];
    steps[name] = r["steps"];
    curves[name] = valid_records(trial(name) + "/metrics.jsonl");
    // Whatever it reached, its run directory holds a checkpoint at that step.
    EXPECT_TRUE(fs::exists(trial(name) + "/ckpt-" + std::to_string(steps[name]) + ".h5")) << name;
  }
  EXPECT_EQ(results[0]["status"], "ok");
  EXPECT_EQ(results[0]["steps"], 80);
  for (size_t i = 1; i < results.size(); ++i) {
    EXPECT_EQ(results[i]["status"], "pruned") << results[i]["name"];
    EXPECT_TRUE(results[i]["steps"] == 10 || results[i]["steps"] == 20 || results[i]["steps"] == 40)
        << results[i]["name"] << " " << results[i]["steps"];
  }
  for (const int64_t rung : {10, 20, 40}) {
    // The trials that reached the rung, best first by their best perplexity up to its step.
    std::vector<std::pair<double, std::string>> at_rung;
    for (const auto& [name, curve] : curves) {
      if (steps[name] < rung) continue;
      double best = 1e300;
      for (const auto& [step, ppl] : curve)
        if (step <= rung) best = std::min(best, ppl);
      at_rung.emplace_back(best, name);
    }
    std::sort(at_rung.begin(), at_rung.end());
    const size_t top = std::max<size_t>(1, at_rung.size() / 2);
    for (size_t k = 0; k < at_rung.size(); ++k) {
      const std::string& name = at_rung[k].second;
      if (k < top) {
        EXPECT_GT(steps[name], rung) << name << " ranked " << k + 1 << " of " << at_rung.size() << " at " << rung;
      } else if (steps[name] == rung) {
        const json r = json::parse(read(trial(name) + "/result.json"));
        EXPECT_NE(r["stop_reason"].get<std::string>().find(str("stopped at step ", rung, " (rung ")), std::string::npos)
            << r["stop_reason"];
        EXPECT_NE(r["stop_reason"].get<std::string>().find(str(" ranked ", k + 1, " of the ", at_rung.size(), " ")),
                  std::string::npos)
            << r["stop_reason"];
      }
    }
  }
  // The trial that went through every rung, resumed three times, trained as one run to 80 steps does.
  const std::string best = results[0]["name"];
  const std::string lr = best.substr(3);
  const auto straight = testing::run_luong(
      "train --config " + std::string(LUONG_SOURCE_DIR) + "/configs/tiny.yaml --run-dir " + dir_ + "/straight" +
      " --set data.train_src=" + *data_ + "/train.src --set data.train_tgt=" + *data_ +
      "/train.tgt --set data.valid_src=" + *data_ + "/valid.src --set data.valid_tgt=" + *data_ +
      "/valid.tgt --set model.hidden_size=16 --set model.embedding_size=16 --set train.max_epochs=0 "
      "--set train.valid_every=10 --set train.batch_size=16 --set train.max_steps=80 --set optim.lr=" +
      lr + " --quiet");
  ASSERT_EQ(straight.status, 0) << straight.output;
  EXPECT_EQ(curves[best], valid_records(dir_ + "/straight/metrics.jsonl"));
  const std::string md = read(dir_ + "/out/results.md");
  EXPECT_NE(md.find("1 of 5 trials ok, 4 pruned (successive halving on valid_ppl, reduction 2), 0 failed"),
            std::string::npos)
      << md;
  EXPECT_NE(s.err.find("training to step 20 (rung 2 of 4), promoted from step 10"), std::string::npos) << s.err;

  // Finished: a rerun trains nothing and reports the same table.
  const Sweep again = run_sweep(spec + " --out " + dir_ + "/out --json");
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(json::parse(again.out), results);
  EXPECT_EQ(again.err.find(": training"), std::string::npos) << again.err;

  // A trial pruned at the first rung, its result.json deleted: it waits at its step again (no training), is not
  // among the best there, and is pruned again.
  const std::string last = results[4]["name"];
  ASSERT_EQ(results[4]["steps"], 10);
  const int64_t tried = attempts(trial(last));
  fs::remove(trial(last) + "/result.json");
  const Sweep waiting = run_sweep(spec + " --out " + dir_ + "/out --json");
  ASSERT_EQ(waiting.status, 0) << waiting.err;
  EXPECT_NE(waiting.err.find(last + ": waiting at step 10 (rung 1 of 4)"), std::string::npos) << waiting.err;
  EXPECT_EQ(waiting.err.find(": training"), std::string::npos) << waiting.err;
  EXPECT_EQ(attempts(trial(last)), tried);
  EXPECT_EQ(json::parse(waiting.out), results);

  // Ranked by test BLEU now: the trial that finished is evaluated, nothing trains, the pruned ones stay pruned.
  std::ofstream(spec, std::ios::app) << "metric: bleu\n";
  const Sweep by_bleu = run_sweep(spec + " --out " + dir_ + "/out --json");
  ASSERT_EQ(by_bleu.status, 0) << by_bleu.err;
  EXPECT_EQ(by_bleu.err.find(": training"), std::string::npos) << by_bleu.err;
  const json ranked_by_bleu = json::parse(by_bleu.out);
  ASSERT_EQ(ranked_by_bleu.size(), 5u);
  EXPECT_EQ(ranked_by_bleu[0]["name"], best);
  EXPECT_TRUE(ranked_by_bleu[0]["bleu"].is_number()) << ranked_by_bleu[0];
  for (size_t i = 1; i < 5; ++i) EXPECT_EQ(ranked_by_bleu[i]["status"], "pruned");

  // Successive halving counts steps: a trial without train.max_steps is refused before it trains.
  const std::string by_epochs = dir_ + "/by_epochs.yaml";
  std::ofstream(by_epochs) << "base: " << LUONG_SOURCE_DIR << "/configs/tiny.yaml\n"
                           << "overrides: {data.train_src: " << *data_ << "/train.src, data.train_tgt: " << *data_
                           << "/train.tgt, data.valid_src: " << *data_ << "/valid.src, data.valid_tgt: " << *data_
                           << "/valid.tgt}\ngrid: {optim.lr: [0.01]}\nprune: {rule: asha, min_steps: 10}\n";
  const Sweep e = run_sweep(by_epochs + " --out " + dir_ + "/out2 --json");
  EXPECT_EQ(e.status, 1) << e.err;
  const std::string why = "prune.rule asha trains each trial to a number of steps, and train.max_steps is 0";
  EXPECT_NE(e.out.find(why), std::string::npos) << e.out;
  EXPECT_FALSE(fs::exists(dir_ + "/out2/trials/lr-0.01/train.log")) << "refused before training";
  // --dry-run says so too, and lists the rungs of a trial that has a limit.
  const Sweep dry = run_sweep(by_epochs + " --out " + dir_ + "/out3 --dry-run --json");
  ASSERT_EQ(dry.status, 0) << dry.err;
  EXPECT_FALSE(json::parse(dry.out)[0]["valid"].get<bool>());
  EXPECT_NE(json::parse(dry.out)[0]["error"].get<std::string>().find(why), std::string::npos) << dry.out;
  const Sweep planned = run_sweep(spec + " --out " + dir_ + "/out3 --dry-run --json");
  ASSERT_EQ(planned.status, 0) << planned.err;
  EXPECT_EQ(json::parse(planned.out)[0]["rung_steps"], json::parse("[10, 20, 40, 80]"));
  const auto command = json::parse(planned.out)[0]["command"].get<std::vector<std::string>>();
  EXPECT_EQ(command[command.size() - 4], "train.max_steps=10");  // the first rung's, after the spec's own
}

// `gpus:` with more trials at once than GPUs: each running trial (training, then its evaluation) sees one GPU of
// the pool by CUDA_VISIBLE_DEVICES, no two running processes share one, and trials wait for a free one. The
// launch prefix is a shell that logs the variable as each process starts and ends.
TEST_F(SweepRunTest, TpeDrawsEachLaterTrialFromTheResultsBeforeIt) {
  const std::string params =
      "params: {optim.lr: {loguniform: [0.0001, 0.05]}, model.dropout: {uniform: [0.0, 0.5]}}}\n";
  const std::string spec =
      write_spec("random: {samples: 5, seed: 3, sampler: tpe, startup: 3, " + params, "  train.max_steps: 20\n");
  // The plan: the random sampler's first three trials, then two drawn as the results come in.
  const json planned = json::parse(run_sweep(spec + " --out " + dir_ + "/out --dry-run --json").out);
  const std::string random_spec = dir_ + "/random.yaml";
  std::ofstream(random_spec) << std::regex_replace(read(spec), std::regex("sampler: tpe, startup: 3, "), "");
  const json random = json::parse(run_sweep(random_spec + " --out " + dir_ + "/out-random --dry-run --json").out);
  ASSERT_EQ(planned.size(), 5u);
  ASSERT_EQ(random.size(), 5u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(planned[i]["name"], random[i]["name"]);
  EXPECT_EQ(planned[3], (json{{"name", "tpe-draw-4"}, {"drawn_later", true}}));
  EXPECT_EQ(planned[4]["name"], "tpe-draw-5");

  const Sweep s = run_sweep(spec + " --out " + dir_ + "/out --json");
  ASSERT_EQ(s.status, 0) << s.err;
  ASSERT_EQ(json::parse(s.out).size(), 5u);
  EXPECT_NE(s.err.find("[4/5] "), std::string::npos);
  EXPECT_NE(s.err.find(": drawn by TPE from 3 results (the best 1 against the rest)"), std::string::npos) << s.err;
  EXPECT_NE(s.err.find(": drawn by TPE from 4 results (the best 1 against the rest)"), std::string::npos) << s.err;
  const json draws = json::parse(read(dir_ + "/out/tpe_draws.json"));
  ASSERT_EQ(draws["draws"].size(), 2u);
  // Each draw is the sampler's answer to the trials finished before it, ranked by their best validation perplexity.
  const SweepSpec parsed = load_sweep_spec(spec);
  std::vector<std::pair<double, std::vector<Assignment>>> finished;
  auto add_finished = [&](const std::string& name) {
    std::vector<Assignment> varied;
    for (const auto& p : parsed.random_params) {
      const json sets = json::parse(read(trial(name) + "/trial.json"))["sets"];
      for (const std::string set : sets)
        if (set.rfind(p.key + "=", 0) == 0) varied.push_back({p.key, {set.substr(p.key.size() + 1), ""}});
    }
    finished.emplace_back(min_valid_ppl(trial(name) + "/metrics.jsonl"), varied);
  };
  for (size_t i = 0; i < 3; ++i) add_finished(planned[i]["name"]);
  for (size_t d = 0; d < 2; ++d) {
    const json& draw = draws["draws"][d];
    EXPECT_EQ(draw["trial"], 4 + d);
    EXPECT_EQ(draw["from"], 3 + d);
    std::stable_sort(finished.begin(), finished.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::vector<Assignment>> ranked;
    for (const auto& f : finished) ranked.push_back(f.second);
    const auto expected = tpe_draw(parsed.random_params, ranked, 3, 3 + d);
    const std::string name = draw["name"];
    ASSERT_TRUE(fs::exists(trial(name) + "/result.json")) << name;
    for (size_t k = 0; k < expected.size(); ++k) {
      EXPECT_EQ(draw["values"][k]["yaml"], expected[k].value.yaml) << name;
      EXPECT_NE(read(trial(name) + "/trial.json").find(expected[k].key + "=" + expected[k].value.yaml),
                std::string::npos);
    }
    add_finished(name);
  }

  // Run again: the drawn trials are read back (finished, skipped), none is drawn anew.
  const Sweep again = run_sweep(spec + " --out " + dir_ + "/out --json");
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(again.err.find("drawn by TPE"), std::string::npos) << again.err;
  EXPECT_EQ(json::parse(read(dir_ + "/out/tpe_draws.json")), draws);
  std::set<std::string> names;
  for (const json& r : json::parse(again.out)) names.insert(r["name"].get<std::string>());
  EXPECT_TRUE(names.count(draws["draws"][0]["name"]) && names.count(draws["draws"][1]["name"]));
  // Given more samples, the sweep draws the new trials from all the results; the others stay as they were.
  const std::string text = read(spec);
  std::ofstream(spec) << std::regex_replace(text, std::regex("samples: 5"), "samples: 6");
  const Sweep more = run_sweep(spec + " --out " + dir_ + "/out --json");
  ASSERT_EQ(more.status, 0) << more.err;
  EXPECT_NE(more.err.find("[6/6] "), std::string::npos) << more.err;
  EXPECT_NE(more.err.find(": drawn by TPE from 5 results (the best 2 against the rest)"), std::string::npos)
      << more.err;
  const json three = json::parse(read(dir_ + "/out/tpe_draws.json"))["draws"];
  ASSERT_EQ(three.size(), 3u);
  EXPECT_EQ(three[0], draws["draws"][0]);
  EXPECT_EQ(three[1], draws["draws"][1]);
  // Another startup (the default one follows samples) is refused, saying how to continue.
  std::ofstream(spec) << std::regex_replace(text, std::regex("startup: 3"), "startup: 2");
  EXPECT_NE(run_sweep(spec + " --out " + dir_ + "/out")
                .err.find("the spec now says 3 and 2 (set random.startup: 3 to "
                          "continue them)"),
            std::string::npos);
  // Under another seed those draws belong to another sweep.
  std::ofstream(spec) << text;
  const std::string reseeded_spec = std::regex_replace(read(spec), std::regex("seed: 3"), "seed: 4");
  std::ofstream(spec) << reseeded_spec;
  const Sweep reseeded = run_sweep(spec + " --out " + dir_ + "/out");
  EXPECT_NE(reseeded.status, 0);
  EXPECT_NE(reseeded.err.find("tpe_draws.json: drawn with random.seed 3 and random.startup 3, the spec now says 4 and "
                              "3: use another --out directory"),
            std::string::npos)
      << reseeded.err;
  // With the record deleted, the same draws are made again, and take new directories, not the trials' that ran.
  std::ofstream(spec) << text;
  fs::remove(dir_ + "/out/tpe_draws.json");
  const Sweep redrawn = run_sweep(spec + " --out " + dir_ + "/out --json");
  ASSERT_EQ(redrawn.status, 0) << redrawn.err;
  const json again_draws = json::parse(read(dir_ + "/out/tpe_draws.json"))["draws"];
  ASSERT_EQ(again_draws.size(), 2u);
  for (size_t d = 0; d < 2; ++d) {
    const std::string before = draws["draws"][d]["name"], now = again_draws[d]["name"];
    EXPECT_EQ(again_draws[d]["values"], draws["draws"][d]["values"]);
    EXPECT_EQ(now.rfind(before + "-", 0), 0u) << now;
    EXPECT_TRUE(fs::exists(trial(now) + "/result.json")) << now;
  }
  // A record that is not what the sweep writes is said, naming the file.
  for (const std::string bad :
       {"{\"seed\": 3, \"startup\": 3, \"draws\": [7]}", "[1, 2]", "{\"seed\": \"3\"",
        "{\"seed\": 3, \"startup\": 3, \"draws\": [{\"trial\": 4, \"name\": \"a\", \"values\": [1]}]}"}) {
    std::ofstream(dir_ + "/out/tpe_draws.json") << bad;
    const Sweep refused = run_sweep(spec + " --out " + dir_ + "/out");
    EXPECT_EQ(refused.status, 1) << bad;
    EXPECT_NE(refused.err.find("luong: error: " + dir_ + "/out/tpe_draws.json: not a record of TPE draws"),
              std::string::npos)
        << bad << "\n"
        << refused.err;
  }
}

TEST_F(SweepRunTest, TrialsRunningAtOnceGetAGpuOfThePoolEach) {
  const std::string log = dir_ + "/gpus.log";
  const std::string spec = write_spec(
      "grid:\n  optim.lr: [0.01, 0.005, 0.02, 0.008]\nparallel: 3\ngpus: [5, 2]\nmetric: bleu\nlaunch: [sh, -c, "
      "'echo \"start $CUDA_VISIBLE_DEVICES\" >> " +
          log + "; \"$@\"; s=$?; echo \"end $CUDA_VISIBLE_DEVICES\" >> " + log + "; exit $s', sh]\n",
      "  train.max_steps: 100\n  eval.beam_size: 2\n");
  const Sweep s = run_sweep(spec + " --out " + dir_ + "/out --json");
  ASSERT_EQ(s.status, 0) << s.err;
  for (const json& r : json::parse(s.out)) EXPECT_EQ(r["status"], "ok") << r["name"];
  // Four trainings; the evaluations (luong eval, not under the launch prefix) are in the sweep's log.
  std::map<std::string, int> running;
  int starts = 0, most = 0;
  std::istringstream events(read(log));
  for (std::string event, gpu; events >> event >> gpu;) {
    ASSERT_TRUE(gpu == "5" || gpu == "2") << gpu;
    if (event == "start") {
      ++starts;
      EXPECT_EQ(running[gpu]++, 0) << "GPU " << gpu << " given to two trials at once";
    } else {
      --running[gpu];
    }
    int now = 0;
    for (const auto& [g, n] : running) now += n;
    most = std::max(most, now);
  }
  EXPECT_EQ(starts, 4);
  EXPECT_LE(most, 2) << "two GPUs hold two trials at once, whatever parallel says";
  EXPECT_NE(s.err.find("on GPUs 5,2 (1 a trial)"), std::string::npos) << s.err;
  EXPECT_NE(s.err.find(": training on GPU 5 ["), std::string::npos) << s.err;
  EXPECT_NE(s.err.find(": evaluating BLEU and chrF on "), std::string::npos) << s.err;
  EXPECT_NE(s.err.find("warning: gpus has no effect: the trials run on the CPU"), std::string::npos) << s.err;

  // More processes a trial than GPUs listed: refused before anything runs, naming both.
  const std::string wide = write_spec("grid:\n  optim.lr: [0.01]\nlaunch: mpirun -np 4\n", "");
  const Sweep refused = run_sweep(wide + " --out " + dir_ + "/wide --gpus 0,1");
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("a trial runs 4 processes, one a GPU, but only 2 GPU(s) are listed (0,1)"),
            std::string::npos)
      << refused.err;
  EXPECT_FALSE(fs::exists(dir_ + "/wide/trials"));
  const Sweep bad = run_sweep(wide + " --out " + dir_ + "/wide --gpus 0,0");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("--gpus: GPU 0 is listed twice"), std::string::npos) << bad.err;
}

// A finished sweep run again under a spec that differs only in how it is ranked or launched: ranked by BLEU,
// its finished trials are evaluated (not skipped with an empty BLEU column); launched as another number of
// processes, its trials are refused (a resumed trial would train with another global batch).
TEST_F(SweepRunTest, RerunsWithAnotherMetricOrProcessCount) {
  const std::string body = "grid:\n  model.attention: [dot]\n";
  const std::string spec = write_spec(body, "  train.max_steps: 10\n  eval.beam_size: 2\n");
  const Sweep plain = run_sweep(spec + " --out " + dir_ + "/out --json");
  ASSERT_EQ(plain.status, 0) << plain.err;
  const json first = json::parse(plain.out);
  const std::string t = trial("attention-dot");
  const Sweep bleu = run_sweep(write_spec(body + "metric: bleu\n", "  train.max_steps: 10\n  eval.beam_size: 2\n") +
                               " --out " + dir_ + "/out --json");
  ASSERT_EQ(bleu.status, 0) << bleu.err;
  EXPECT_NE(bleu.err.find("attention-dot: finished, but without bleu (the spec's metric is now bleu): evaluating it"),
            std::string::npos)
      << bleu.err;
  const json r = json::parse(bleu.out);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0]["steps"], 10) << "evaluated, not trained further";
  EXPECT_EQ(r[0]["tokens_per_s"], first[0]["tokens_per_s"]) << "the training's figures stay";
  EXPECT_EQ(r[0]["attempts"], 1) << "no second training attempt";
  EXPECT_EQ(bleu.err.find("training (attempt 2"), std::string::npos) << bleu.err;
  const auto e = testing::run_luong("eval --checkpoint " + t + "/best.h5 --src " + *data_ + "/test.src --ref " +
                                    *data_ + "/test.tgt --beam 2 --json 2>/dev/null");
  ASSERT_EQ(e.status, 0) << e.output;
  EXPECT_DOUBLE_EQ(r[0]["bleu"].get<double>(), json::parse(e.output)["bleu"].get<double>());

  const std::string kept = read(dir_ + "/out/sweep.yaml");
  const Sweep two = run_sweep(
      write_spec(body + "launch: /nonexistent/mpirun --n 2\n", "  train.max_steps: 10\n  eval.beam_size: 2\n") +
      " --out " + dir_ + "/out");
  EXPECT_EQ(two.status, 1);
  EXPECT_NE(two.err.find("trial 'attention-dot' in " + dir_ +
                         "/out was started with launch: none and the spec now says /nonexistent/mpirun --n 2"),
            std::string::npos)
      << two.err;
  EXPECT_EQ(read(dir_ + "/out/sweep.yaml"), kept);
}

// A trial that fails without a luong error line (its launcher does not exist) still says why in the table,
// and a missing evaluation file under metric bleu fails the trial before it trains.
TEST_F(SweepRunTest, FailuresWithoutALuongErrorLineAreExplained) {
  const std::string spec =
      write_spec("grid:\n  model.attention: [dot]\nlaunch: /nonexistent/mpirun -np 1\n", "  train.max_steps: 10\n");
  const Sweep s = run_sweep(spec + " --out " + dir_ + "/out --json");
  EXPECT_EQ(s.status, 1);
  const json r = json::parse(s.out);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0]["error"].get<std::string>().find("luong sweep: cannot execute '/nonexistent/mpirun'"),
            std::string::npos)
      << r[0]["error"];
  EXPECT_NE(read(dir_ + "/out/results.md").find("cannot execute '/nonexistent/mpirun'"), std::string::npos);

  const std::string bleu = write_spec("grid:\n  model.attention: [dot]\nmetric: bleu\n", "  train.max_steps: 10\n");
  std::string text = read(bleu);
  const size_t at = text.find(*data_ + "/test.src");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, data_->size() + 9, dir_ + "/missing.src");
  std::ofstream(bleu) << text;
  const Sweep b = run_sweep(bleu + " --out " + dir_ + "/out2 --json");
  EXPECT_EQ(b.status, 1);
  EXPECT_NE(json::parse(b.out)[0]["error"].get<std::string>().find("metric bleu evaluates on " + dir_ +
                                                                   "/missing.src, which does not exist"),
            std::string::npos)
      << b.out;
  EXPECT_FALSE(fs::exists(dir_ + "/out2/trials/attention-dot/train.log")) << "refused before training";
}

TEST_F(SweepRunTest, BleuMetricEvaluatesEveryTrial) {
  const std::string spec = write_spec("grid:\n  model.attention: [dot, general]\nmetric: bleu\n",
                                      "  train.max_steps: 40\n  eval.beam_size: 2\n");
  const Sweep s = run_sweep(spec + " --out " + dir_ + "/out --json");
  ASSERT_EQ(s.status, 0) << s.err;
  const json results = json::parse(s.out);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_GE(results[0]["bleu"].get<double>(), results[1]["bleu"].get<double>());  // mode defaults to max for bleu
  for (const auto& r : results) {
    // The sweep's BLEU (and chrF) is what `luong eval` says about the trial's best checkpoint on the test set.
    const auto e = testing::run_luong("eval --checkpoint " + trial(r["name"]) + "/best.h5 --src " + *data_ +
                                      "/test.src --ref " + *data_ + "/test.tgt --beam 2 --json 2>/dev/null");
    ASSERT_EQ(e.status, 0) << e.output;
    EXPECT_DOUBLE_EQ(r["bleu"].get<double>(), json::parse(e.output)["bleu"].get<double>()) << r.dump();
    EXPECT_DOUBLE_EQ(r["chrf"].get<double>(), json::parse(e.output)["chrf"].get<double>()) << r.dump();
  }
  EXPECT_EQ(read(dir_ + "/out/results.csv").substr(0, 65),
            std::string("rank,trial,model.attention,valid_ppl,bleu,chrf,p_vs_best,tokens_per_s,wall_s").substr(0, 65));
  // The runner-up's p-value is `luong bleu --paired-bs`'s for the two trials' kept translations.
  EXPECT_TRUE(results[0]["p_vs_best"].is_null());
  EXPECT_EQ(results[1]["p_vs_best"], paired_p_value(results, "", "BLEU")) << results[1].dump();
}

// Ranked by chrF++ (eval.chrf_word_order 2), the runner-up is tested on chrF++ too.
TEST_F(SweepRunTest, ChrfPlusPlusTrialsAreTestedOnChrfPlusPlus) {
  const std::string spec = write_spec("grid:\n  model.attention: [dot, general]\nmetric: chrf\n",
                                      "  train.max_steps: 40\n  eval.beam_size: 2\n  eval.chrf_word_order: 2\n");
  const Sweep s = run_sweep(spec + " --out " + dir_ + "/out --json");
  ASSERT_EQ(s.status, 0) << s.err;
  const json results = json::parse(s.out);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1]["eval_chrf_word_order"], 2);
  EXPECT_EQ(results[1]["p_vs_best"], paired_p_value(results, "-m chrf --chrf-word-order 2", "chrF2++"))
      << results[1].dump();
}

// metric: valid_bleu ranks by each trial's best validation BLEU (its metrics.jsonl), with no evaluation pass; a
// spec whose trials do not compute it is told what to add before anything trains.
TEST_F(SweepRunTest, ValidBleuMetricRanksByTheBestValidationBleu) {
  const std::string spec = write_spec("grid:\n  model.attention: [dot, general]\nmetric: valid_bleu\n",
                                      "  train.max_steps: 100\n  train.valid_bleu: true\n  eval.beam_size: 2\n");
  const Sweep s = run_sweep(spec + " --out " + dir_ + "/out --json");
  ASSERT_EQ(s.status, 0) << s.err;
  const json results = json::parse(s.out);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_GE(results[0]["valid_bleu"].get<double>(), results[1]["valid_bleu"].get<double>());  // max by default
  for (const auto& r : results) {
    EXPECT_EQ(r["valid_bleu"].get<double>(), best_recorded(r["name"], "valid_bleu")) << r.dump();
    EXPECT_TRUE(r["bleu"].is_null()) << "no evaluation pass: " << r.dump();
  }
  EXPECT_GT(results[0]["valid_bleu"].get<double>(), 0.0);
  EXPECT_EQ(read(dir_ + "/out/results.csv").substr(0, 48), "rank,trial,model.attention,valid_ppl,valid_bleu,");

  const std::string plain =
      write_spec("grid:\n  model.attention: [dot]\nmetric: valid_bleu\n", "  train.max_steps: 5\n");
  const Sweep b = run_sweep(plain + " --out " + dir_ + "/out2 --json");
  EXPECT_EQ(b.status, 1) << b.err;
  EXPECT_NE(b.out.find("metric valid_bleu needs validation scoring in the trial's run: add train.valid_bleu: true"),
            std::string::npos)
      << b.out;
  EXPECT_FALSE(fs::exists(dir_ + "/out2/trials/attention-dot/train.log")) << "refused before training";
}

// chrF ranks like BLEU: metric valid_chrf by each trial's best validation chrF (here also the trials' own
// train.valid_metric), then the same sweep run again with metric chrf evaluates its finished trials and ranks them
// by `luong eval`'s chrF; a trial that scores nothing is told what to add.
TEST_F(SweepRunTest, ChrfMetricsRankByValidationAndEvaluationChrf) {
  const std::string body = "grid:\n  model.attention: [dot, general]\n";
  const std::string overrides = "  train.max_steps: 60\n  train.valid_metric: chrf\n  eval.beam_size: 2\n";
  const Sweep v = run_sweep(write_spec(body + "metric: valid_chrf\n", overrides) + " --out " + dir_ + "/out --json");
  ASSERT_EQ(v.status, 0) << v.err;
  const json by_valid = json::parse(v.out);
  ASSERT_EQ(by_valid.size(), 2u);
  EXPECT_GE(by_valid[0]["valid_chrf"].get<double>(), by_valid[1]["valid_chrf"].get<double>());  // max by default
  for (const auto& r : by_valid) {
    EXPECT_EQ(r["valid_chrf"].get<double>(), best_recorded(r["name"], "valid_chrf")) << r.dump();
    EXPECT_TRUE(r["chrf"].is_null()) << "no evaluation pass: " << r.dump();
  }
  EXPECT_GT(by_valid[0]["valid_chrf"].get<double>(), 0.0);
  // A plot for each recorded validation result, a line per trial.
  const std::regex polyline("<polyline");
  for (const char* plot : {"valid_ppl.svg", "valid_bleu.svg", "valid_chrf.svg"}) {
    const std::string svg = read(dir_ + "/out/" + plot);
    EXPECT_EQ(std::distance(std::sregex_iterator(svg.begin(), svg.end(), polyline), std::sregex_iterator()), 2) << plot;
  }
  EXPECT_NE(v.err.find("valid_ppl.svg, valid_bleu.svg, valid_chrf.svg"), std::string::npos) << v.err;
  EXPECT_EQ(read(dir_ + "/out/results.csv").substr(0, 59),
            "rank,trial,model.attention,valid_ppl,valid_bleu,valid_chrf,");

  const Sweep e = run_sweep(write_spec(body + "metric: chrf\n", overrides) + " --out " + dir_ + "/out --json");
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_NE(e.err.find("attention-dot: finished, but without chrf (the spec's metric is now chrf): evaluating it"),
            std::string::npos)
      << e.err;
  const json by_eval = json::parse(e.out);
  ASSERT_EQ(by_eval.size(), 2u);
  EXPECT_GE(by_eval[0]["chrf"].get<double>(), by_eval[1]["chrf"].get<double>());
  for (const auto& r : by_eval) {
    const auto ev = testing::run_luong("eval --checkpoint " + trial(r["name"]) + "/best.h5 --src " + *data_ +
                                       "/test.src --ref " + *data_ + "/test.tgt --beam 2 --json 2>/dev/null");
    ASSERT_EQ(ev.status, 0) << ev.output;
    EXPECT_DOUBLE_EQ(r["chrf"].get<double>(), json::parse(ev.output)["chrf"].get<double>()) << r.dump();
    EXPECT_EQ(r["attempts"], 1) << "evaluated, not trained again: " << r.dump();
  }
  EXPECT_NE(read(dir_ + "/out/results.md").find("Ranked by chrf (max)"), std::string::npos);

  const Sweep b =
      run_sweep(write_spec("grid:\n  model.attention: [dot]\nmetric: valid_chrf\n", "  train.max_steps: 5\n") +
                " --out " + dir_ + "/out2 --json");
  EXPECT_EQ(b.status, 1) << b.err;
  EXPECT_NE(b.out.find("metric valid_chrf needs validation scoring in the trial's run: add train.valid_bleu: true (or "
                       "train.valid_metric: chrf)"),
            std::string::npos)
      << b.out;
  EXPECT_FALSE(fs::exists(dir_ + "/out2/trials/attention-dot/train.log")) << "refused before training";
}

TEST_F(SweepRunTest, KilledSweepLeavesNoTrainerRunning) {
  // A trial far too long to finish; the sweep is SIGKILLed (no chance to forward anything) mid-training.
  const std::string spec = write_spec("grid:\n  model.attention: [dot]\n", "  train.max_steps: 1000000\n");
  const pid_t pid = start_sweep_until_training(spec, dir_ + "/sweep.log", "attention-dot");
  const std::string t = trial("attention-dot");
  std::smatch m;
  const std::string log = read(dir_ + "/sweep.log");
  ASSERT_TRUE(std::regex_search(log, m, std::regex("\\[pid ([0-9]+)\\]"))) << log;
  const pid_t trainer = std::stoi(m[1]);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  // The orphaned trainer got SIGTERM from the kernel (parent-death signal), saved a checkpoint and exited.
  auto alive = [&] {
    const std::string stat = read("/proc/" + std::to_string(trainer) + "/stat");
    return !stat.empty() && stat.find(") Z") == std::string::npos;
  };
  const auto stop_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (alive() && std::chrono::steady_clock::now() < stop_deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(alive());
  if (alive()) kill(trainer, SIGKILL);
  EXPECT_NE(read(t + "/train.log").find("interrupted (checkpoint saved)"), std::string::npos) << read(t + "/train.log");
  EXPECT_FALSE(fs::exists(t + "/result.json"));
}

// results.csv and results.md follow a running sweep: written when a trial starts, with its row "running" and the
// trials to come "pending", then replaced by the final report.
TEST_F(SweepRunTest, TheResultsFilesFollowARunningSweep) {
  const std::string spec = write_spec("grid:\n  model.attention: [dot, general]\n", "  train.max_steps: 1000000\n");
  const pid_t pid = start_sweep_until_training(spec, dir_ + "/sweep.log", "attention-dot");
  const std::string csv = dir_ + "/out/results.csv";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (csv_row(read(csv), "attention-dot")["status"] != "running" && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::string while_running = read(csv), md_while_running = read(dir_ + "/out/results.md");
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_EQ(csv_row(while_running, "attention-dot")["status"], "running") << while_running;
  EXPECT_EQ(csv_row(while_running, "attention-general")["status"], "pending") << while_running;
  EXPECT_NE(md_while_running.find("the sweep is running: 1 trial(s) running, 1 pending or waiting"), std::string::npos)
      << md_while_running;
  // The final report replaces it.
  EXPECT_EQ(WEXITSTATUS(status), 130) << read(dir_ + "/sweep.log");
  EXPECT_EQ(csv_row(read(csv), "attention-dot")["status"], "interrupted");
  EXPECT_NE(read(dir_ + "/out/results.md").find("the sweep was interrupted"), std::string::npos);
  EXPECT_FALSE(fs::exists(csv + ".tmp"));
}

// Two sweeps on one --out ran the same trials at once, each marking the other's running trials failed.
// The second is now refused before it touches anything, naming the first.
TEST_F(SweepRunTest, ASecondSweepOnTheSameOutIsRefused) {
  const std::string spec = write_spec("grid:\n  model.attention: [dot]\n", "  train.max_steps: 1000000\n");
  const pid_t pid = start_sweep_until_training(spec, dir_ + "/first.log", "attention-dot");
  const std::string t = trial("attention-dot");
  const Sweep second = run_sweep(spec + " --out " + dir_ + "/out");
  kill(pid, SIGINT);
  waitpid(pid, nullptr, 0);
  EXPECT_NE(second.status, 0);
  EXPECT_NE(second.err.find("--out " + dir_ + "/out is in use by another luong sweep (pid " + std::to_string(pid)),
            std::string::npos)
      << second.err;
  EXPECT_FALSE(fs::exists(t + "/result.json")) << "the second sweep must not have recorded the running trial";
}

// The same --set list over a base config whose contents changed is another trial: a trial that trained
// with the old contents is neither resumed nor reported under the new ones.
TEST_F(SweepRunTest, AChangedBaseConfigIsRefusedForTrialsThatTrained) {
  const std::string base = dir_ + "/base.yaml";
  fs::copy_file(std::string(LUONG_SOURCE_DIR) + "/configs/tiny.yaml", base);
  std::string spec_text = read(write_spec("grid:\n  model.attention: [dot]\n", "  train.max_steps: 10\n"));
  spec_text.replace(0, spec_text.find('\n'), "base: " + base);
  const std::string spec = dir_ + "/spec.yaml";
  std::ofstream(spec) << spec_text;
  ASSERT_EQ(run_sweep(spec + " --out " + dir_ + "/out").status, 0);
  std::string text = read(base);
  const size_t at = text.find("dropout: 0.0");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 12, "dropout: 0.1");
  std::ofstream(base) << text;
  const Sweep again = run_sweep(spec + " --out " + dir_ + "/out");
  EXPECT_NE(again.status, 0);
  EXPECT_NE(again.err.find("trial 'attention-dot' in " + dir_ + "/out was trained with another config (the base file " +
                           base + " changed: model.dropout: 0.0 -> 0.1)"),
            std::string::npos)
      << again.err;
}

TEST_F(SweepRunTest, BadTrialsFailAloneAndAreReported) {
  const std::string spec = write_spec("grid:\n  data.train_src: [" + *data_ + "/train.src, " + dir_ +
                                      "/missing.src]\n  model.attention: [dot, nonsense]\n",
                                      "  train.max_steps: 10\n", /*vary_train_src=*/true);
  // --dry-run lists the trials and flags the invalid ones without running anything.
  const Sweep dry = run_sweep(spec + " --out " + dir_ + "/out --dry-run");
  ASSERT_EQ(dry.status, 0) << dry.err;
  EXPECT_EQ(std::count(dry.out.begin(), dry.out.end(), '\n'), 8);
  EXPECT_NE(dry.out.find("INVALID: "), std::string::npos);
  EXPECT_NE(dry.out.find("--resume auto --json"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ + "/out/trials"));

  const Sweep s = run_sweep(spec + " --out " + dir_ + "/out --json");
  EXPECT_EQ(s.status, 1) << s.err;
  const json results = json::parse(s.out);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0]["status"], "ok");  // the one good trial ranks first, the failures after it
  EXPECT_EQ(results[0]["overrides"]["model.attention"], "dot");
  EXPECT_GT(results[0]["valid_ppl"].get<double>(), 1.0);
  int invalid = 0, crashed = 0;
  std::string crashed_name;
  for (size_t i = 1; i < 4; ++i) {
    const json& r = results[i];
    EXPECT_EQ(r["status"], "failed");
    const std::string error = r["error"];
    if (r["overrides"]["model.attention"] == "nonsense") {
      // Rejected up front by the config schema: never started.
      ++invalid;
      EXPECT_NE(error.find("invalid config"), std::string::npos) << error;
      EXPECT_NE(error.find("nonsense"), std::string::npos) << error;
      EXPECT_FALSE(fs::exists(trial(r["name"]) + "/train.log"));
    } else {
      // Valid config, but training fails: exit status and the end of the log.
      ++crashed;
      crashed_name = r["name"];
      EXPECT_NE(error.find("luong train: exit status 1"), std::string::npos) << error;
      EXPECT_NE(error.find("missing.src"), std::string::npos) << error;
    }
  }
  EXPECT_EQ(invalid, 2);
  EXPECT_EQ(crashed, 1);
  EXPECT_NE(s.err.find("FAILED"), std::string::npos);
  EXPECT_NE(read(dir_ + "/out/results.md").find("3 failed"), std::string::npos);

  // Failed trials count as finished: a rerun skips them, --retry-failed runs them again.
  const Sweep rerun = run_sweep(spec + " --out " + dir_ + "/out");
  EXPECT_EQ(rerun.status, 1);
  EXPECT_NE(rerun.err.find(crashed_name + ": already failed, skipped (rerun with --retry-failed to run it again)"),
            std::string::npos)
      << rerun.err;
  EXPECT_EQ(attempts(trial(crashed_name)), 1);
  const Sweep retry = run_sweep(spec + " --out " + dir_ + "/out --retry-failed");
  EXPECT_EQ(retry.status, 1);
  EXPECT_EQ(attempts(trial(crashed_name)), 2);
}

TEST_F(SweepRunTest, InterruptedSweepResumesWithoutRedoingFinishedTrials) {
  // Two quick trials, then two longer ones: the sweep is interrupted while the third trains.
  const std::string spec = write_spec("grid:\n  train.max_steps: [10, 300]\n  model.attention: [dot, general]\n", "");
  const std::string quick1 = "max_steps-10_attention-dot", quick2 = "max_steps-10_attention-general";
  const std::string long1 = "max_steps-300_attention-dot", long2 = "max_steps-300_attention-general";
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string cmd = "exec " + std::string(LUONG_BINARY) + " sweep " + spec + " --out " + dir_ + "/out > " + dir_ +
                            "/first.log 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait until the third trial has trained a few steps (its metrics log has a train record).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline &&
         read(trial(long1) + "/metrics.jsonl").find("\"type\":\"train\"") == std::string::npos)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(fs::exists(trial(quick2) + "/result.json")) << read(dir_ + "/first.log");
  kill(pid, SIGINT);
  int st = 0;
  waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st)) << read(dir_ + "/first.log");
  EXPECT_EQ(WEXITSTATUS(st), 130) << read(dir_ + "/first.log");
  const std::string first_log = read(dir_ + "/first.log");
  EXPECT_NE(first_log.find("interrupted"), std::string::npos);
  // The interrupted trial is unfinished but saved a checkpoint; the last one never started.
  EXPECT_FALSE(fs::exists(trial(long1) + "/result.json"));
  EXPECT_NE(read(trial(long1) + "/train.log").find("interrupted (checkpoint saved)"), std::string::npos);
  EXPECT_FALSE(fs::exists(trial(long2) + "/train.log"));
  // The partial table is written, with the two finished trials ranked first.
  const std::string partial = read(dir_ + "/out/results.csv");
  EXPECT_NE(partial.find(",interrupted,"), std::string::npos) << partial;
  EXPECT_NE(partial.find(",pending,"), std::string::npos) << partial;
  // The interrupted trial's row shows how far it got: the steps and rate of the summary line `luong train`
  // printed before exiting with 130/143.
  const json summary = last_summary(read(trial(long1) + "/train.log"));
  ASSERT_TRUE(summary.is_object()) << read(trial(long1) + "/train.log");
  auto row = csv_row(partial, long1);
  EXPECT_GT(summary["steps"].get<int64_t>(), 0);
  EXPECT_EQ(row["steps"], std::to_string(summary["steps"].get<int64_t>())) << partial;
  EXPECT_FALSE(row["tokens_per_s"].empty()) << partial;
  EXPECT_EQ(row["status"], "interrupted") << partial;
  struct stat before1 {}, before2 {};
  stat((trial(quick1) + "/result.json").c_str(), &before1);
  stat((trial(quick2) + "/result.json").c_str(), &before2);

  const Sweep s = run_sweep(spec + " --out " + dir_ + "/out --json");
  ASSERT_EQ(s.status, 0) << s.err;
  const json results = json::parse(s.out);
  ASSERT_EQ(results.size(), 4u);
  for (const auto& r : results) EXPECT_EQ(r["status"], "ok") << r.dump();
  // Finished trials were not redone: same result files, one attempt each.
  struct stat after1 {}, after2 {};
  stat((trial(quick1) + "/result.json").c_str(), &after1);
  stat((trial(quick2) + "/result.json").c_str(), &after2);
  EXPECT_EQ(before1.st_mtim.tv_nsec, after1.st_mtim.tv_nsec);
  EXPECT_EQ(before1.st_mtim.tv_sec, after1.st_mtim.tv_sec);
  EXPECT_EQ(before2.st_mtim.tv_nsec, after2.st_mtim.tv_nsec);
  EXPECT_EQ(attempts(trial(quick1)), 1);
  EXPECT_EQ(attempts(trial(quick2)), 1);
  EXPECT_EQ(attempts(trial(long1)), 2);
  EXPECT_EQ(attempts(trial(long2)), 1);
  EXPECT_NE(s.err.find(quick1 + ": already ok, skipped"), std::string::npos) << s.err;
  // The interrupted trial continued from its checkpoint instead of starting over.
  for (const auto& r : results) {
    if (r["name"] == long1) {
      EXPECT_NE(r["resumed_from"].get<std::string>().find("ckpt-"), std::string::npos) << r.dump();
      EXPECT_EQ(r["steps"], 300);
    }
  }
}

TEST_F(SweepRunTest, SpecErrorsAreReportedByTheCommand) {
  const std::string spec = dir_ + "/bad.yaml";
  std::ofstream(spec) << "base: " << LUONG_SOURCE_DIR << "/configs/tiny.yaml\nrandom: {seed: 3, params: {optim.lr: {uniform: [0, 1]}}}\n";
  const Sweep s = run_sweep(spec + " --out " + dir_ + "/out");
  EXPECT_EQ(s.status, 1);
  EXPECT_NE(s.err.find("luong: error: sweep spec " + spec + ":2: random: 'samples' is required"), std::string::npos) << s.err;
  EXPECT_FALSE(fs::exists(dir_ + "/out"));
}

}  // namespace
}  // namespace luong::sweep
