// End-to-end data parallelism through `luong train` under mpirun: 2 ranks with batch B equal 1 process
// with batch 2B; checkpoints move between world sizes; a killed rank ends the job with the last checkpoint
// intact; a signal to one rank stops both at the same step with a checkpoint, and so does a Ctrl-C of
// launch/mpirun-luong. (These tests start mpirun themselves; they are skipped when mpirun is not installed.)
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_dir.h"
#include "tests/support/model_diff.h"
#include "tests/support/run_luong.h"
#include "tests/support/stop_checks.h"

namespace luong::testing {
namespace {

const char* kMpirun = "mpirun --allow-run-as-root --oversubscribe -np 2 -x OMP_NUM_THREADS=1 -x LUONG_DIST_TIMEOUT_S=20 ";
// A run that saves only when it stops, and prints its summary as JSON.
const char* kSaveOnlyAtTheStop =
    "--set train.checkpoint_every=1000000 --set train.valid_every=1000000 --set train.log_every=1 --json";

class DistTrainTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { data_ = generated_corpus("dist_train_data", "--train 300 --valid 20 --test 10"); }
  void SetUp() override {
    if (std::system("command -v mpirun > /dev/null 2>&1") != 0) GTEST_SKIP() << "mpirun not installed";
  }
  // SGD (no adaptive scaling that would amplify float rounding differences), no dropout.
  std::string args(const std::string& run_dir, int batch, int steps, const std::string& extra = "") const {
    return tiny_train_command(run_dir, data_) +
           " --quiet --set model.hidden_size=24 --set model.embedding_size=16 --set model.dropout=0" +
           " --set optim.name=sgd --set optim.lr=0.5 --set train.max_epochs=0 --set train.max_steps=" +
           std::to_string(steps) + " --set train.batch_size=" + std::to_string(batch) +
           " --set train.checkpoint_every=5 --set train.valid_every=0 --set train.keep_checkpoints=0 " + extra;
  }
  static RunResult run_mpi(const std::string& a) {
    return run_luong_shell(std::string(kMpirun) + LUONG_BINARY + " " + a + " 2>&1");
  }
  // One process with batch 16 in `one`, two ranks with batch 8 each in `two`, `steps` steps, both options
  // `extra`; both must succeed.
  void train_one_and_two_ranks(const std::string& one, const std::string& two, int steps,
                               const std::string& extra = "") const {
    const RunResult r1 = run_luong(args(one, 16, steps, extra));
    ASSERT_EQ(r1.status, 0) << r1.output;
    const RunResult r2 = run_mpi(args(two, 8, steps, extra));
    ASSERT_EQ(r2.status, 0) << r2.output;
  }
  static std::string data_;
};
std::string DistTrainTest::data_;

TEST_F(DistTrainTest, TwoRanksWithBatchBEqualOneProcessWithBatch2B) {
  const std::string one = fresh_dir("dist_one"), two = fresh_dir("dist_two");
  train_one_and_two_ranks(one, two, 15);
  if (HasFatalFailure()) return;
  EXPECT_LE(max_rel_diff(checkpoint_path(one, 15), checkpoint_path(two, 15)), 1e-6);
  // And they moved: the result is not just the shared initialisation.
  EXPECT_GT(max_rel_diff(checkpoint_path(one, 5), checkpoint_path(one, 15)), 1e-3);
}

// A plain mpirun, with no OMP_NUM_THREADS: each rank runs its share of the machine's CPUs (framework/core/
// cpu_share.h), as the job's first line says; it had run the machine's count, two ranks oversubscribing it.
TEST_F(DistTrainTest, PlainMpirunGivesEachRankItsShareOfTheCpus) {
  const std::string dir = fresh_dir("dist_plain_mpirun");
  std::string train = args(dir, 8, 2);
  train.erase(train.find(" --quiet"), 8);  // the first line is informational
  const RunResult r = run_luong_shell(
      "env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS -u LUONG_NO_REEXEC mpirun --allow-run-as-root --oversubscribe "
      "-np 2 -x LUONG_DIST_TIMEOUT_S=20 " +
      std::string(LUONG_BINARY) + " " + train + " 2>&1");
  ASSERT_EQ(r.status, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(r.output, m, std::regex("2 process\\(es\\), backend mpi, (\\d+) CPU thread\\(s\\) each")))
      << r.output;
  const int machine = static_cast<int>(std::thread::hardware_concurrency());
  EXPECT_LE(std::stoi(m[1]), std::max(1, machine / 2)) << "two ranks oversubscribe the " << machine << " CPUs";
  EXPECT_GE(std::stoi(m[1]), 1);
}

// optim.ema_decay under mpirun: every rank averages the same all-reduced parameters, so the job's average (the
// checkpoint's model) and its training parameters are one process's.
TEST_F(DistTrainTest, TwoRanksKeepTheParameterAverageOfOneProcess) {
  const std::string one = fresh_dir("dist_ema_one"), two = fresh_dir("dist_ema_two");
  const std::string ema = "--set optim.ema_decay=0.8";
  train_one_and_two_ranks(one, two, 15, ema);
  if (HasFatalFailure()) return;
  EXPECT_LE(max_rel_diff(checkpoint_path(one, 15), checkpoint_path(two, 15)), 1e-6);
  const StateDict a = load_checkpoint(checkpoint_path(one, 15)).state.sub("ema"),
                  b = load_checkpoint(checkpoint_path(two, 15)).state.sub("ema");
  EXPECT_EQ(b.ints.at("updates"), 15);
  EXPECT_LE(max_rel_diff(a, b), 1e-6);  // ema/training_params
}

// The two ranks of one machine read one copy of the training pairs (ExampleList::share_on_node) and say so;
// with LUONG_SHARE_TRAINING_PAIRS=0 each holds its own, and the job trains to the same bits either way.
TEST_F(DistTrainTest, TheRanksOfAMachineReadOneCopyOfTheTrainingPairs) {
  const std::string shared = fresh_dir("dist_shared_pairs"), own = fresh_dir("dist_own_pairs");
  std::string a = args(shared, 8, 5);
  a.erase(a.find(" --quiet"), 8);  // for the data line
  const RunResult r1 = run_mpi(a);
  ASSERT_EQ(r1.status, 0) << r1.output;
  EXPECT_NE(r1.output.find("data: 2 of 2 processes read the training pairs from one shared copy per node ("),
            std::string::npos)
      << r1.output;
  EXPECT_EQ(r1.output.find("keeps its own copy"), std::string::npos) << r1.output;
  std::string b = args(own, 8, 5);
  b.erase(b.find(" --quiet"), 8);
  const RunResult r2 = run_luong_shell("LUONG_SHARE_TRAINING_PAIRS=0 " + std::string(kMpirun) +
                                       "-x LUONG_SHARE_TRAINING_PAIRS " + LUONG_BINARY + " " + b + " 2>&1");
  ASSERT_EQ(r2.status, 0) << r2.output;
  EXPECT_NE(r2.output.find("data: every process holds its own copy of the training pairs "
                           "(LUONG_SHARE_TRAINING_PAIRS=0)"),
            std::string::npos)
      << r2.output;
  EXPECT_EQ(max_rel_diff(checkpoint_path(shared, 5), checkpoint_path(own, 5)), 0.0);
}

// BPE merges are learned by every rank from its own copy of the data: they agree (the data check would refuse
// ranks that read different tokens), and 2 ranks on subword units train as one process does, with joint
// merges and with merges per side.
TEST_F(DistTrainTest, TwoRanksOnSubwordUnitsEqualOneProcess) {
  for (const auto& [form, keys] : {std::pair{std::string(""), std::vector<std::string>{"bpe/merges"}},
                                   std::pair{std::string(" --set data.bpe_joint=false"),
                                             std::vector<std::string>{"bpe/merges_src", "bpe/merges_tgt"}}}) {
    SCOPED_TRACE(form.empty() ? "joint" : "per side");
    const std::string one = fresh_dir("dist_bpe_one"), two = fresh_dir("dist_bpe_two");
    train_one_and_two_ranks(one, two, 10, "--set data.bpe_merges=20" + form);
    if (HasFatalFailure()) return;
    EXPECT_LE(max_rel_diff(checkpoint_path(one, 10), checkpoint_path(two, 10)), 1e-6);
    const Checkpoint a = load_checkpoint(checkpoint_path(one, 10)), b = load_checkpoint(checkpoint_path(two, 10));
    for (const std::string& key : keys) EXPECT_EQ(b.state.strings.at(key), a.state.strings.at(key)) << key;
  }
}

// train.init_from under mpirun: every rank reads the starting checkpoint (parameters, vocabularies, merges), and
// 2 ranks fine-tune as one process with the global batch does.
TEST_F(DistTrainTest, TwoRanksStartingFromACheckpointEqualOneProcess) {
  const std::string parent = fresh_dir("dist_init_parent");
  const RunResult p = run_luong(args(parent, 16, 10, "--set data.bpe_merges=20"));
  ASSERT_EQ(p.status, 0) << p.output;
  const std::string init = "--set train.init_from=" + checkpoint_path(parent, 10);
  const std::string one = fresh_dir("dist_init_one"), two = fresh_dir("dist_init_two");
  train_one_and_two_ranks(one, two, 10, init);
  if (HasFatalFailure()) return;
  EXPECT_LE(max_rel_diff(checkpoint_path(one, 10), checkpoint_path(two, 10)), 1e-6);
  // The job holds the parent's merges (its config learns none): its ranks read the parent's checkpoint.
  EXPECT_EQ(load_checkpoint(checkpoint_path(two, 10)).state.strings.at("bpe/merges"),
            load_checkpoint(checkpoint_path(parent, 10)).state.strings.at("bpe/merges"));
  // Resumed with the parent gone, every rank takes the tokens from the job's own checkpoint, and the job
  // still continues as the one process does.
  const RunResult c1 = run_luong(args(one, 16, 15, init + " --resume auto"));
  ASSERT_EQ(c1.status, 0) << c1.output;
  std::filesystem::remove_all(parent);
  const RunResult c2 = run_mpi(args(two, 8, 15, init + " --resume auto"));
  ASSERT_EQ(c2.status, 0) << c2.output;
  EXPECT_LE(max_rel_diff(checkpoint_path(one, 15), checkpoint_path(two, 15)), 1e-6);
}

// A transfer start under mpirun: every rank builds its own vocabularies (train.init_vocabulary = data), carries
// the parent's entries, and keeps the frozen encoder as it is; 2 ranks train as one process with the global
// batch does, and the encoder ends as the parent had it on both.
TEST_F(DistTrainTest, TwoRanksWithOwnVocabulariesAndAFrozenEncoderEqualOneProcess) {
  const std::string parent = fresh_dir("dist_freeze_parent");
  ASSERT_EQ(run_luong(args(parent, 16, 10, "--set data.bpe_merges=20")).status, 0);
  const std::string start = "--set train.init_from=" + checkpoint_path(parent, 10) +
                            " --set train.init_vocabulary=data --set data.bpe_merges=25 --set train.freeze=encoder";
  const std::string one = fresh_dir("dist_freeze_one"), two = fresh_dir("dist_freeze_two");
  train_one_and_two_ranks(one, two, 10, start);
  if (HasFatalFailure()) return;
  EXPECT_LE(max_rel_diff(checkpoint_path(one, 10), checkpoint_path(two, 10)), 1e-6);
  const StateDict before = load_checkpoint(checkpoint_path(parent, 10)).state.sub("model");
  const StateDict after = load_checkpoint(checkpoint_path(two, 10)).state.sub("model");
  int compared = 0;
  for (const auto& [name, t] : after.tensors)
    if (name.rfind("encoder/lstm/", 0) == 0) {
      EXPECT_EQ(t.to_vector(), before.tensors.at(name).to_vector()) << name;
      ++compared;
    }
  EXPECT_GT(compared, 0);
}

// Gradient accumulation: one process training each step's batch in 2 parts takes the steps of 2 processes,
// dropout included (part m of rank r draws rank r x 2 + m's stream); and 2 processes accumulating 2 parts
// each (the reducer syncing only the last part's backward) take the steps of one process in 4 parts; and a
// checkpoint of 2 ranks resumes as one process in 2 parts.
TEST_F(DistTrainTest, AccumulatedPartsEqualAsManyRanksDropoutIncluded) {
  const std::string dropout = "--set model.dropout=0.3";
  const std::string parts = fresh_dir("dist_acc_parts"), ranks = fresh_dir("dist_acc_ranks");
  const RunResult r1 = run_luong(args(parts, 8, 15, dropout + " --set train.accumulate=2"));
  ASSERT_EQ(r1.status, 0) << r1.output;
  const RunResult r2 = run_mpi(args(ranks, 8, 15, dropout));
  ASSERT_EQ(r2.status, 0) << r2.output;
  EXPECT_LE(max_rel_diff(checkpoint_path(parts, 15), checkpoint_path(ranks, 15)), 1e-6);
  const std::string four = fresh_dir("dist_acc_four"), both = fresh_dir("dist_acc_both");
  const RunResult r4 = run_luong(args(four, 4, 15, dropout + " --set train.accumulate=4"));
  ASSERT_EQ(r4.status, 0) << r4.output;
  const RunResult rb = run_mpi(args(both, 4, 15, dropout + " --set train.accumulate=2"));
  ASSERT_EQ(rb.status, 0) << rb.output;
  EXPECT_LE(max_rel_diff(checkpoint_path(four, 15), checkpoint_path(both, 15)), 1e-6);
  // The dropout streams are those of other ranks: 4 parts of 4 are not 2 parts of 8.
  EXPECT_GT(max_rel_diff(checkpoint_path(four, 15), checkpoint_path(parts, 15)), 1e-4);
  // A 2-rank checkpoint resumed by one process in 2 parts continues as the 2 ranks did: no config warning.
  const std::string moved = fresh_dir("dist_acc_moved");
  ASSERT_EQ(run_mpi(args(moved, 8, 10, dropout)).status, 0);
  const RunResult rm = run_luong(args(moved, 8, 15, dropout + " --set train.accumulate=2 --resume auto"));
  ASSERT_EQ(rm.status, 0) << rm.output;
  EXPECT_EQ(rm.output.find("warning"), std::string::npos) << rm.output;
  EXPECT_LE(max_rel_diff(checkpoint_path(ranks, 15), checkpoint_path(moved, 15)), 1e-6);
}

// Validation BLEU under mpirun: each rank translates part of the validation set and one all-reduce of BLEU's
// and chrF's statistics gives the whole set's scores, which are what one process evaluating that checkpoint gets.
TEST_F(DistTrainTest, ValidationBleuOfTwoRanksIsTheWholeSetsScore) {
  const std::string run = fresh_dir("dist_valid_bleu");
  const RunResult r = run_mpi(args(run, 8, 200,
                                   "--set optim.name=adam --set optim.lr=0.02 --set train.checkpoint_every=100 "
                                   "--set train.valid_every=100 --set train.valid_metric=bleu "
                                   "--set train.valid_translations=true --json"));
  ASSERT_EQ(r.status, 0) << r.output;
  // Each rank translated every second line; the kept file interleaves them into what `luong translate` gives the
  // step's checkpoint, and the ranks' share files are gone.
  {
    std::ifstream in(run + "/valid_translations/step-200.txt");
    const std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const RunResult t = run_luong_shell(std::string(LUONG_BINARY) + " translate --checkpoint " +
                                        checkpoint_path(run, 200) + " < " + data_ + "/valid.src 2>/dev/null");
    ASSERT_EQ(t.status, 0) << t.output;
    EXPECT_EQ(kept, t.output);
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(run + "/valid_translations"),
                            std::filesystem::directory_iterator()),
              2);  // step-100.txt and step-200.txt
  }
  const auto summary = nlohmann::json::parse(r.output.substr(r.output.rfind('{')));
  // A score of 0 (a model that has learned nothing) would be the same for any part of the set.
  EXPECT_GT(summary["last_valid_bleu"].get<double>(), 5.0) << r.output;
  const RunResult e = run_luong("eval --checkpoint " + checkpoint_path(run, 200) + " --src " + data_ +
                                "/valid.src --ref " + data_ + "/valid.tgt --json 2>/dev/null");
  ASSERT_EQ(e.status, 0) << e.output;
  EXPECT_NEAR(summary["last_valid_bleu"].get<double>(), nlohmann::json::parse(e.output)["bleu"].get<double>(), 1e-9)
      << r.output;
  EXPECT_NEAR(summary["last_valid_chrf"].get<double>(), nlohmann::json::parse(e.output)["chrf"].get<double>(), 1e-9)
      << r.output;
}

TEST_F(DistTrainTest, CheckpointsResumeAcrossWorldSizes) {
  const std::string straight = fresh_dir("dist_straight");
  ASSERT_EQ(run_luong(args(straight, 16, 20)).status, 0);
  // Two ranks to step 10, then one process to 20.
  const std::string a = fresh_dir("dist_2to1");
  ASSERT_EQ(run_mpi(args(a, 8, 10)).status, 0);
  const RunResult ra = run_luong(args(a, 16, 20, "--resume auto --json"));
  ASSERT_EQ(ra.status, 0) << ra.output;
  EXPECT_NE(ra.output.find("\"resumed_from\":\"" + checkpoint_path(a, 10) + "\""), std::string::npos) << ra.output;
  // 2 x 8 and 1 x 16 sentences are the same global batch: not a config change worth a warning.
  EXPECT_EQ(ra.output.find("warning: resuming with a changed config"), std::string::npos) << ra.output;
  EXPECT_LE(max_rel_diff(checkpoint_path(straight, 20), checkpoint_path(a, 20)), 1e-6);
  // The same per-process batch on another number of processes is another global batch: said, not silent.
  const std::string c = fresh_dir("dist_2to1_same_batch");
  ASSERT_EQ(run_mpi(args(c, 8, 10)).status, 0);
  const RunResult rc = run_luong(args(c, 8, 20, "--resume auto"));
  ASSERT_EQ(rc.status, 0) << rc.output;
  EXPECT_NE(rc.output.find("processes: 2 -> 1 with train.batch_size 8 per process (the global batch changes)"),
            std::string::npos)
      << rc.output;
  // One process to step 10, then two ranks to 20.
  const std::string b = fresh_dir("dist_1to2");
  ASSERT_EQ(run_luong(args(b, 16, 10)).status, 0);
  const RunResult rb = run_mpi(args(b, 8, 20, "--resume auto"));
  ASSERT_EQ(rb.status, 0) << rb.output;
  EXPECT_LE(max_rel_diff(checkpoint_path(straight, 20), checkpoint_path(b, 20)), 1e-6);
}

TEST_F(DistTrainTest, KilledRankEndsTheJobAndKeepsTheLastCheckpoint) {
  const std::string dir = fresh_dir("dist_kill");
  const std::string log = dir + "/mpirun.log";
  // A long run in the background; once a checkpoint exists, SIGKILL one rank's process.
  const std::string cmd = std::string(kMpirun) + LUONG_BINARY + " " + args(dir, 8, 100000, "--set train.checkpoint_every=2") +
                          " > " + log + " 2>&1 & echo $!";
  FILE* p = popen(cmd.c_str(), "r");
  char buf[64] = {0};
  ASSERT_NE(fgets(buf, sizeof buf, p), nullptr);
  pclose(p);
  const pid_t mpirun_pid = static_cast<pid_t>(std::atol(buf));
  for (int i = 0; i < 300 && list_checkpoints(dir).size() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_GE(list_checkpoints(dir).size(), 2u) << "no checkpoint appeared";
  // The ranks are the luong processes whose parent is mpirun (or its orted child).
  const RunResult victim =
      run_luong_shell("pgrep -f -n -- '^" + std::string(LUONG_BINARY) + " train --config.*" + dir + "'");
  const pid_t rank_pid = static_cast<pid_t>(std::atol(victim.output.c_str()));
  ASSERT_GT(rank_pid, 0) << victim.output;
  const auto t0 = std::chrono::steady_clock::now();
  kill(rank_pid, SIGKILL);
  int status = 0;
  bool ended = false;
  for (int i = 0; i < 600 && !ended; ++i) {  // the job must end well within the 20 s timeout
    ended = kill(mpirun_pid, 0) != 0;
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  (void)status;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(ended) << "mpirun still running " << seconds << " s after a rank was killed";
  EXPECT_LT(seconds, 25.0);
  const LatestCheckpoint latest = find_latest_valid(dir);
  ASSERT_TRUE(latest.checkpoint.has_value()) << "the last checkpoint must be intact";
}

// A scheduler or a user may signal one process of the job only. That rank used to stop and wait in its
// final save while the other trained on, until the watchdog (5 minutes by default) aborted the job with
// no checkpoint of the stop. The request now rides on each step's all-reduce: both ranks stop after the
// same step, save, and exit 143.
TEST_F(DistTrainTest, ASignalToOneRankStopsBothAtTheSameStepWithACheckpoint) {
  const std::string dir = fresh_dir("dist_one_signalled");
  const std::string log = dir + "/mpirun.log", rc_file = dir + "/rc";
  const std::string cmd = "(" + std::string(kMpirun) + LUONG_BINARY + " " +
                          args(dir, 8, 100000, "--set train.checkpoint_every=2") + " > " + log + " 2>&1; echo $? > " +
                          rc_file + ") > /dev/null 2>&1 &";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  for (int i = 0; i < 300 && list_checkpoints(dir).size() < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_GE(list_checkpoints(dir).size(), 2u) << "no checkpoint appeared";
  const RunResult victim =
      run_luong_shell("pgrep -f -n -- '^" + std::string(LUONG_BINARY) + " train --config.*" + dir + "'");
  const pid_t rank_pid = static_cast<pid_t>(std::atol(victim.output.c_str()));
  ASSERT_GT(rank_pid, 0) << victim.output;
  kill(rank_pid, SIGTERM);
  bool ended = false;
  for (int i = 0; i < 300 && !ended; ++i) {  // well within the 20 s watchdog the old behaviour ran into
    ended = std::filesystem::exists(rc_file) && std::filesystem::file_size(rc_file) > 0;
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(ended) << "the job still runs 15 s after one rank was signalled";
  const std::string output = run_luong_shell("cat " + log).output;
  EXPECT_EQ(std::atoi(run_luong_shell("cat " + rc_file).output.c_str()), 143) << output;
  EXPECT_NE(output.find("1 of the 2 processes received signal 15"), std::string::npos) << output;
  EXPECT_EQ(output.find("did not complete"), std::string::npos) << output;
  // The stop step was saved: the newest checkpoint is the one the run ended on, and it loads.
  const LatestCheckpoint latest = find_latest_valid(dir);
  ASSERT_TRUE(latest.checkpoint.has_value()) << output;
  EXPECT_TRUE(latest.skipped.empty()) << output;
}

// A stop that reaches one rank in the middle of a validation: that rank gives up its share, the other finishes
// its own, and the ranks agree afterwards that the validation is not recorded; both save the stop's checkpoint
// at that step, marked as owing the validation, which the resumed job does first. The resumed job records the
// same validations and ends with the same parameters as one that was never stopped.
TEST_F(DistTrainTest, AStopInOneRanksValidationIsAgreedAndTheResumedJobDoesItFirst) {
  const std::string plain = fresh_dir("dist_valid_plain"), stopped = fresh_dir("dist_valid_stopped");
  const std::string settings =
      "--set train.valid_every=10 --set train.valid_bleu=true --set train.log_every=1 --set train.checkpoint_every=0 "
      "--json";
  ASSERT_EQ(run_mpi(args(plain, 8, 20, settings)).status, 0);
  auto records = [](const std::string& dir, const std::string& type) {
    std::vector<nlohmann::json> out;
    std::ifstream in(dir + "/metrics.jsonl");
    for (std::string line; std::getline(in, line);)
      if (auto j = nlohmann::json::parse(line); j["type"] == type) {
        for (const char* k : {"elapsed_s", "tokens_per_s", "mem_allocated", "mem_cached", "mem_peak"}) j.erase(k);
        out.push_back(j);
      }
    return out;
  };
  const std::string log = fresh_log_path("dist_valid_stopped");
  const pid_t pid = start_shell_command(std::string(kMpirun) + "-x LUONG_TEST_VALIDATION_DELAY_MS=100 " + LUONG_BINARY +
                                        " " + args(stopped, 8, 20, settings) + " > " + log + " 2>&1");
  bool at_validation = false;
  for (int i = 0; i < 3000 && !at_validation; ++i) {
    for (const auto& r : records(stopped, "train")) at_validation = at_validation || r["step"] == 10;
    if (!at_validation) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(at_validation) << file_text(log);
  // Rank 1's process: the luong process of this run whose environment says so.
  const RunResult ranks =
      run_luong_shell("for p in $(pgrep -f -- '^" + std::string(LUONG_BINARY) + " train --config.*" + stopped +
                      "'); do tr '\\0' '\\n' < /proc/$p/environ | grep -qx OMPI_COMM_WORLD_RANK=1 && echo $p; done");
  const pid_t rank1 = static_cast<pid_t>(std::atol(ranks.output.c_str()));
  ASSERT_GT(rank1, 0) << ranks.output;
  kill(rank1, SIGTERM);
  EXPECT_EQ(wait_exit_status(pid), 143) << file_text(log);
  const std::string out = file_text(log);
  EXPECT_NE(out.find("1 of the 2 processes received signal 15"), std::string::npos) << out;
  EXPECT_EQ(list_checkpoints(stopped).back().step, 10) << out;
  EXPECT_TRUE(records(stopped, "valid").empty()) << out;

  // (--quiet: the notes of the cut-short validation and of doing it first are not printed; the records show it.)
  const RunResult resumed = run_mpi(args(stopped, 8, 20, settings + " --resume auto"));
  ASSERT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_EQ(records(stopped, "valid"), records(plain, "valid"));
  EXPECT_EQ(records(stopped, "train"), records(plain, "train"));
  EXPECT_EQ(max_rel_diff(checkpoint_path(plain, 20), checkpoint_path(stopped, 20)), 0.0);
}

// Rank 0 writes the checkpoints, and a stopped run exits non-zero: mpirun then kills what is left of the job.
// The other rank must not get there while rank 0 still writes the stop's checkpoint (MPI_Finalize, at exit,
// is collective and holds it). LUONG_TEST_CHECKPOINT_DELAY_MS makes that write take seconds.
TEST_F(DistTrainTest, AStoppedJobEndsOnlyOnceRankZeroHasWrittenTheCheckpoint) {
  const std::string dir = fresh_dir("dist_stop_slow_save"), log = fresh_log_path("dist_stop_slow_save");
  const pid_t pid = start_shell_command(std::string(kMpirun) + "-x LUONG_TEST_CHECKPOINT_DELAY_MS=100 " + LUONG_BINARY +
                                        " " + args(dir, 8, 1000000, kSaveOnlyAtTheStop) + " > " + log + " 2>&1");
  ASSERT_TRUE(wait_until_training(dir)) << file_text(log);
  const RunResult rank =
      run_luong_shell("pgrep -f -n -- '^" + std::string(LUONG_BINARY) + " train --config.*" + dir + "'");
  ASSERT_GT(std::atol(rank.output.c_str()), 0) << rank.output;
  kill(static_cast<pid_t>(std::atol(rank.output.c_str())), SIGTERM);
  EXPECT_EQ(wait_exit_status(pid), 143) << file_text(log);
  expect_saved_at_the_stop(dir, file_text(log));
}

// A Ctrl-C reaches launch/mpirun-luong, not mpirun (which would kill the ranks a second later, before their
// save): the script relays it as SIGUSR1, every rank finishes the step and saves, and the script exits 130.
TEST_F(DistTrainTest, MpirunLuongTurnsACtrlCIntoAStopThatSaves) {
  const std::string dir = fresh_dir("dist_wrapper_ctrl_c"), log = fresh_log_path("dist_wrapper_ctrl_c");
  const pid_t pid =
      start_shell_command("env LUONG_TEST_CHECKPOINT_DELAY_MS=100 LUONG_DIST_TIMEOUT_S=20 OMP_NUM_THREADS=1 " +
                          std::string(LUONG_SOURCE_DIR) + "/launch/mpirun-luong -np 2 " + LUONG_BINARY + " " +
                          args(dir, 8, 1000000, kSaveOnlyAtTheStop) + " > " + log + " 2>&1");
  ASSERT_TRUE(wait_until_training(dir)) << file_text(log);
  kill(pid, SIGINT);  // what a terminal sends the foreground process group, which holds the script alone
  EXPECT_EQ(wait_exit_status(pid), 130) << file_text(log);
  const std::string output = file_text(log);
  EXPECT_NE(output.find("stopping after the current step, then saving a checkpoint"), std::string::npos) << output;
  EXPECT_EQ(output.find("stopping now"), std::string::npos) << output;
  expect_saved_at_the_stop(dir, output);
}

// train.checkpoint_minutes under mpirun: rank 0's clock decides, and the step's all-reduce carries the decision
// to every rank, so the job saves by the clock too. A save is the ranks' joint act, checked in it
// (trainer_checkpoints.cpp): a decision left to each rank's own clock fails this job.
TEST_F(DistTrainTest, TimedCheckpointsAreSavedUnderMpirun) {
  const std::string dir = fresh_dir("dist_timed_saves");
  const RunResult r = run_luong_shell("env LUONG_DIST_TIMEOUT_S=20 " + std::string(kMpirun) + LUONG_BINARY + " " +
                                      args(dir, 8, 600,
                                           "--set train.checkpoint_every=0 --set data.valid_src= --set data.valid_tgt= "
                                           "--set train.checkpoint_minutes=0.0005") +
                                      " 2>&1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_GE(list_checkpoints(dir).size(), 3u) << r.output;
}

// A stop that reaches the script before mpirun starts (here during MPIRUN_LUONG_TEST_DELAY_S, between the traps
// and the start) ends it with the signal's status and starts nothing: it used to end the script alone, after
// which mpirun could start with no one left to relay a stop.
TEST_F(DistTrainTest, MpirunLuongStoppedBeforeItsJobStartsStartsNothing) {
  const std::string dir = fresh_dir("dist_wrapper_early_stop"), log = fresh_log_path("dist_wrapper_early_stop");
  const pid_t pid = start_shell_command("env MPIRUN_LUONG_TEST_DELAY_S=2 OMP_NUM_THREADS=1 " +
                                        std::string(LUONG_SOURCE_DIR) + "/launch/mpirun-luong -np 2 " + LUONG_BINARY +
                                        " " + args(dir, 8, 1000000) + " > " + log + " 2>&1");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  kill(pid, SIGINT);
  EXPECT_EQ(wait_exit_status(pid), 130) << file_text(log);
  EXPECT_NE(file_text(log).find("mpirun-luong: stopped (signal 2) before the job started"), std::string::npos)
      << file_text(log);
  EXPECT_FALSE(std::filesystem::exists(dir + "/metrics.jsonl")) << file_text(log);
  // Anchored, so that the shell running pgrep (whose command line holds the pattern) does not match.
  EXPECT_EQ(run_luong_shell("pgrep -f -- '^(mpirun|" + std::string(LUONG_BINARY) + ") .*" + dir + "'").status, 1)
      << "a process of the job is running";
}

// Rank 1 of a multi-node job may not see rank 0's run directory (node-local storage): it used to start
// over while rank 0 resumed, and both then hung in their first collective until the watchdog. Both now
// stop at once, saying where each would have resumed.
TEST_F(DistTrainTest, RanksThatDisagreeOnTheResumeStepStopAtOnceSayingWhy) {
  const std::string dir = fresh_dir("dist_resume_here"), elsewhere = fresh_dir("dist_resume_elsewhere");
  ASSERT_EQ(run_mpi(args(dir, 8, 10)).status, 0);
  const std::string script = dir + "/per_rank.sh";
  {
    std::ofstream out(script);
    out << "#!/bin/sh\nif [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then exec " << LUONG_BINARY << " "
        << args(elsewhere, 8, 20, "--resume auto") << "; fi\nexec " << LUONG_BINARY << " "
        << args(dir, 8, 20, "--resume auto") << "\n";
  }
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  const auto t0 = std::chrono::steady_clock::now();
  const RunResult r = run_luong_shell(std::string(kMpirun) + script + " 2>&1");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_LT(seconds, 15.0) << "the 20 s watchdog, not the check, ended the job:\n" << r.output;
  EXPECT_NE(r.output.find("the processes disagree on where to resume (rank 0: step 10, rank 1: no checkpoint)"),
            std::string::npos)
      << r.output;
  EXPECT_TRUE(list_checkpoints(elsewhere).empty());
  // The same step from another run (a stale node-local copy): the steps agree, the parameters do not.
  ASSERT_EQ(run_mpi(args(elsewhere, 8, 10, "--set seed=2")).status, 0);
  const std::string script2 = dir + "/per_rank_same_step.sh";
  {
    std::ofstream out(script2);
    out << "#!/bin/sh\nif [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then exec " << LUONG_BINARY << " "
        << args(elsewhere, 8, 20, "--resume auto --set seed=2") << "; fi\nexec " << LUONG_BINARY << " "
        << args(dir, 8, 20, "--resume auto --set seed=2") << "\n";
  }
  std::filesystem::permissions(script2, std::filesystem::perms::owner_all);
  const RunResult same_step = run_luong_shell(std::string(kMpirun) + script2 + " 2>&1");
  EXPECT_NE(same_step.status, 0) << same_step.output;
  EXPECT_NE(same_step.output.find("the processes resumed from different checkpoints"), std::string::npos)
      << same_step.output;
  EXPECT_FALSE(std::filesystem::exists(checkpoint_path(dir, 15))) << "no step may run on differing replicas";
}

// The processes of a job must train on the same config and data. Another optim.lr on one rank used to
// train silently divergent replicas, and node-local copies of the data that differ duplicated or skipped
// pairs without a word. Both are refused before the first step, naming the key (or the data).
TEST_F(DistTrainTest, ProcessesWithDifferentConfigsOrDataAreRefusedNamingTheDifference) {
  const std::string dir = fresh_dir("dist_disagree");
  // Rank 1 gets an extra --set; every other argument is the same.
  const std::string wrapper = dir + "/rank1_extra.sh";
  {
    std::ofstream out(wrapper);
    out << "#!/bin/sh\nextra=$1; shift\nif [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then exec \"$@\" $extra; fi\n"
        << "exec \"$@\"\n";
  }
  std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
  const RunResult lr = run_luong_shell(std::string(kMpirun) + wrapper + " --set=optim.lr=0.25 " + LUONG_BINARY + " " +
                                       args(dir + "/run_lr", 8, 10) + " 2>&1");
  EXPECT_NE(lr.status, 0) << lr.output;
  // Each rank names its own value; which ranks' lines get out before the job is torn down may vary.
  EXPECT_NE(lr.output.find("started with different configs: optim.lr (rank(s) 1 differ from rank 0; rank "),
            std::string::npos)
      << lr.output;
  EXPECT_FALSE(std::filesystem::exists(checkpoint_path(dir + "/run_lr", 5))) << "refused before the first step";

  // The same relative data paths, resolved in two directories holding different corpora (node-local
  // copies that are not identical).
  for (const std::string node : {"node0", "node1"}) {
    const std::string n = dir + "/" + node;
    const RunResult g =
        run_luong("gen-data --out " + n + "/d --train " + (node == "node0" ? "300" : "299") + " --valid 20 --test 10");
    ASSERT_EQ(g.status, 0) << g.output;
  }
  const std::string cd_wrapper = dir + "/per_node.sh";
  {
    std::ofstream out(cd_wrapper);
    out << "#!/bin/sh\ncd " << dir << "/node$OMPI_COMM_WORLD_RANK && exec \"$@\"\n";
  }
  std::filesystem::permissions(cd_wrapper, std::filesystem::perms::owner_all);
  std::string relative = args(dir + "/run_data", 8, 10);
  for (const std::string f : {"train.src", "train.tgt", "valid.src", "valid.tgt"})
    relative += " --set data." + f.substr(0, f.find('.')) + "_" + f.substr(f.find('.') + 1) + "=d/" + f;
  const RunResult data =
      run_luong_shell(std::string(kMpirun) + cd_wrapper + " " + LUONG_BINARY + " " + relative + " 2>&1");
  EXPECT_NE(data.status, 0) << data.output;
  EXPECT_NE(data.output.find("read different data: rank(s) 1 differ from rank 0"), std::string::npos) << data.output;
  EXPECT_NE(data.output.find(" training pairs from d/train.src"), std::string::npos) << data.output;

  // Identical node-local copies under different paths are fine: the contents are what is compared.
  std::filesystem::create_directories(dir + "/copy/d");
  std::filesystem::copy(dir + "/node0/d", dir + "/copy/d", std::filesystem::copy_options::recursive);
  const std::string paths_wrapper = dir + "/per_node_paths.sh";
  {
    std::ofstream out(paths_wrapper);
    out << "#!/bin/sh\nif [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then d=" << dir << "/copy/d; else d=" << dir
        << "/node0/d; fi\nexec \"$@\" --set data.train_src=$d/train.src --set data.train_tgt=$d/train.tgt"
        << " --set data.valid_src=$d/valid.src --set data.valid_tgt=$d/valid.tgt\n";
  }
  std::filesystem::permissions(paths_wrapper, std::filesystem::perms::owner_all);
  const RunResult copies = run_luong_shell(std::string(kMpirun) + paths_wrapper + " " + LUONG_BINARY + " " +
                                           args(dir + "/run_copies", 8, 10) + " 2>&1");
  EXPECT_EQ(copies.status, 0) << copies.output;
}

// A signal that arrives after the last step's validation (here: while rank 0 writes the checkpoint that holds
// its outcome, the run's last save) has nothing left to be agreed on: the run completed, so the job reports
// success rather than an interruption on one rank only. (One that arrives before that validation ends makes
// the ranks drop it and stop with a checkpoint that owes it: AStopInOneRanksValidationIsAgreed...)
TEST_F(DistTrainTest, ASignalAfterTheLastStepLeavesACompletedRunSuccessful) {
  const std::string dir = fresh_dir("dist_signal_after_last");
  const std::string log = dir + "/mpirun.log", rc_file = dir + "/rc";
  // Each checkpoint entry takes 100 ms to write, so the final save lasts long enough to be signalled.
  const std::string cmd = "(LUONG_TEST_CHECKPOINT_DELAY_MS=100 " + std::string(kMpirun) +
                          "-x LUONG_TEST_CHECKPOINT_DELAY_MS " + LUONG_BINARY + " " + args(dir, 8, 10) + " > " + log +
                          " 2>&1; echo $? > " + rc_file + ") > /dev/null 2>&1 &";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  bool saving_last = false;
  for (int i = 0; i < 1000 && !saving_last; ++i) {
    // The final validation is recorded (rank 0 writes its record, then saves step 10 again with its outcome).
    const bool validated = file_text(dir + "/metrics.jsonl").find("\"type\":\"valid\"") != std::string::npos;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      saving_last = saving_last || (validated && e.path().filename().string().rfind("ckpt-10.h5.tmp.", 0) == 0);
    if (!saving_last) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(saving_last) << "the final save was not seen";
  // Rank 0 writes checkpoints: the temp file's name ends with its pid.
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("ckpt-10.h5.tmp.", 0) == 0) kill(static_cast<pid_t>(std::atol(name.c_str() + 15)), SIGTERM);
  }
  bool ended = false;
  for (int i = 0; i < 600 && !ended; ++i) {
    ended = std::filesystem::exists(rc_file) && std::filesystem::file_size(rc_file) > 0;
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(ended);
  const std::string output = run_luong_shell("cat " + log).output;
  EXPECT_EQ(std::atoi(run_luong_shell("cat " + rc_file).output.c_str()), 0) << output;
  EXPECT_EQ(find_latest_valid(dir).checkpoint->path, checkpoint_path(dir, 10)) << output;
}

}  // namespace
}  // namespace luong::testing
