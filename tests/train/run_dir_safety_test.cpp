// What `luong train` does to a run directory when something goes wrong: a diverging run writes no
// NaN or diverged checkpoint and leaves best.h5 on the best validated step; best.h5 is only ever the
// checkpoint of an improving validation; a fresh run refuses a directory holding another run's checkpoints
// (--overwrite starts over); --resume auto with nothing loadable falls back to best.h5 or stops instead of
// starting over; a refused resume (another model size, fewer layers) leaves config.yaml alone; Ctrl-C
// saves and exits 130; temp files of a killed save are cleaned up; resuming with a changed config says
// what changed; --quiet keeps warnings, such as a training text that the vocabulary maps mostly to <unk>.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_dir.h"
#include "framework/ops/tensor_math.h"
#include "tests/support/run_luong.h"

namespace luong::testing {
namespace {

namespace fs = std::filesystem;

class RunDirSafetyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { data_ = generated_corpus("run_dir_safety_data", "--train 400 --valid 40 --test 10"); }
  static std::string train_args(const std::string& run_dir, const std::string& extra = "") {
    return tiny_train_command(run_dir, data_) +
           " --set model.hidden_size=16 --set model.embedding_size=16 --set model.dropout=0" +
           " --set train.batch_size=16 --set train.max_epochs=0 --set train.max_steps=20" +
           " --set train.valid_every=10 --set train.checkpoint_every=10 --set train.keep_checkpoints=2 " + extra;
  }
  static std::string data_;
};
std::string RunDirSafetyTest::data_;

int64_t step_of(const std::string& path) { return load_checkpoint(path).state.ints.at("trainer/step"); }

// Every floating-point tensor of the checkpoint is finite.
bool all_finite(const std::string& path) {
  for (const auto& [name, t] : load_checkpoint(path).state.tensors)
    if ((t.dtype() == DType::f32 || t.dtype() == DType::f64) && !std::isfinite(sum_squares(t))) return false;
  return true;
}

// The validated steps of metrics.jsonl and their perplexities.
std::map<int64_t, double> valid_ppls(const std::string& run_dir) {
  std::map<int64_t, double> out;
  std::ifstream in(run_dir + "/metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    // A diverged validation's perplexity is NaN, written as null: not a candidate for the best.
    if (j.value("type", "") == "valid" && j.at("valid_ppl").is_number())
      out[j.at("step").get<int64_t>()] = j.at("valid_ppl").get<double>();
  }
  return out;
}

// name -> size and modification time of every file in a directory: "nothing was touched".
std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename() == ".lock") continue;  // every run takes the lock, refused or not
    std::ostringstream os;
    os << fs::file_size(e.path()) << "@" << fs::last_write_time(e.path()).time_since_epoch().count();
    out[e.path().filename().string()] = os.str();
  }
  return out;
}

TEST_F(RunDirSafetyTest, ADivergingRunWritesNoBadCheckpointAndKeepsTheBestValidatedOne) {
  const std::string dir = fresh_dir("safety_nan");
  ASSERT_EQ(run_luong(train_args(dir)).status, 0);
  for (const char* lr : {"1e38", "1e30"}) {  // NaN parameters; finite but diverged losses
    SCOPED_TRACE(lr);
    const std::string diverge = std::string("--resume auto --set train.max_steps=60 --set optim.lr=") + lr +
                                " --set optim.clip_norm=0 --set train.checkpoint_every=1" +
                                " --set train.valid_every=0 --set train.keep_checkpoints=3";
    const RunResult r = run_luong(train_args(dir, diverge));
    EXPECT_NE(r.status, 0) << r.output;
    // Stopped by the run of bad steps or by the validation at the epoch's end, whichever comes first.
    const bool stopped = r.output.find("consecutive steps had a NaN/Inf loss or gradient") != std::string::npos ||
                         r.output.find("training diverged: validation perplexity") != std::string::npos;
    EXPECT_TRUE(stopped) << r.output;
    for (const auto& f : list_checkpoints(dir)) EXPECT_TRUE(all_finite(f.path)) << f.path;
    EXPECT_TRUE(all_finite(best_checkpoint_path(dir)));
    const auto ppls = valid_ppls(dir);
    ASSERT_FALSE(ppls.empty());
    int64_t best_step = ppls.begin()->first;
    for (const auto& [step, ppl] : ppls)
      if (ppl < ppls.at(best_step)) best_step = step;
    EXPECT_EQ(step_of(best_checkpoint_path(dir)), best_step) << "best.h5 must stay the best validated step";
  }
}

// A run that diverges before its first checkpoint: its NaN validation is not called the best, and the error
// says that nothing was written (it said the earlier checkpoints were intact).
TEST_F(RunDirSafetyTest, ARunDivergingBeforeItsFirstCheckpointSaysItWroteNone) {
  const std::string dir = fresh_dir("safety_nan_first");
  const RunResult r = run_luong(train_args(dir,
                                           "--set optim.name=sgd --set optim.lr=1e308 --set optim.clip_norm=0 "
                                           "--set train.max_steps=5 --set train.valid_every=5"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("training diverged: validation perplexity"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("the run wrote no checkpoint in " + dir), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("(best)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("are intact"), std::string::npos) << r.output;
  EXPECT_TRUE(list_checkpoints(dir).empty());
}

TEST_F(RunDirSafetyTest, BestIsTheCheckpointOfTheImprovingValidationNotALaterPeriodicOne) {
  const std::string dir = fresh_dir("safety_best");
  // Validation every 10 steps, checkpoints every 5. Steps 10 and 20 improve; the resumed run's lr of 1
  // makes step 30 worse, so the periodic ckpt-25 (after an improving validation, before a worse one) must
  // not become best.h5: step 20 stays the best.
  const std::string every = " --set train.checkpoint_every=5 --set train.keep_checkpoints=0";
  ASSERT_EQ(run_luong(train_args(dir, every)).status, 0);
  const RunResult r = run_luong(train_args(dir, every + " --resume auto --set train.max_steps=30 --set optim.lr=1"));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto ppls = valid_ppls(dir);
  ASSERT_EQ(ppls.size(), 3u);
  ASSERT_GT(ppls.at(30), ppls.at(20)) << "the setting must make the last validation worse";
  int64_t best_step = 10;
  for (const auto& [step, ppl] : ppls)
    if (ppl < ppls.at(best_step)) best_step = step;
  EXPECT_EQ(step_of(best_checkpoint_path(dir)), best_step);
  EXPECT_TRUE(fs::equivalent(best_checkpoint_path(dir), checkpoint_path(dir, best_step)));
}

TEST_F(RunDirSafetyTest, AFreshRunRefusesAnotherRunsDirectoryUnlessOverwrite) {
  const std::string dir = fresh_dir("safety_fresh");
  ASSERT_EQ(run_luong(train_args(dir)).status, 0);
  const auto before = snapshot(dir);
  const RunResult refused = run_luong(train_args(dir, "--set model.hidden_size=32"));
  EXPECT_NE(refused.status, 0);
  EXPECT_NE(refused.output.find("already holds a run's checkpoints"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("--resume auto"), std::string::npos) << refused.output;
  EXPECT_EQ(snapshot(dir), before) << "a refused run must not touch the directory";

  const RunResult both = run_luong(train_args(dir, "--overwrite --resume auto"));
  EXPECT_NE(both.status, 0);
  EXPECT_NE(both.output.find("--overwrite"), std::string::npos) << both.output;

  // A run that cannot start (its training file is missing) deletes nothing, --overwrite or not.
  const RunResult cannot = run_luong(train_args(dir, "--overwrite --set data.train_src=" + dir + "/missing.src"));
  EXPECT_EQ(cannot.status, 1) << cannot.output;
  EXPECT_NE(cannot.output.find(dir + "/missing.src"), std::string::npos) << cannot.output;
  EXPECT_EQ(snapshot(dir), before) << "the earlier run survives a new one that never started";

  const RunResult over = run_luong(train_args(dir, "--overwrite --set model.hidden_size=32 --set train.max_steps=10"));
  ASSERT_EQ(over.status, 0) << over.output;
  const auto files = list_checkpoints(dir);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].step, 10);
  EXPECT_EQ(valid_ppls(dir).size(), 1u) << "metrics.jsonl restarted";
}

TEST_F(RunDirSafetyTest, ResumeAutoWithNothingLoadableUsesBestOrStops) {
  const std::string dir = fresh_dir("safety_unloadable");
  ASSERT_EQ(run_luong(train_args(dir)).status, 0);
  // best.h5 becomes an independent copy, then every step checkpoint is emptied.
  const std::string best = best_checkpoint_path(dir);
  fs::copy_file(best, best + ".copy");
  fs::rename(best + ".copy", best);
  for (const auto& f : list_checkpoints(dir)) std::ofstream(f.path, std::ios::trunc);
  const RunResult from_best = run_luong(train_args(dir, "--resume auto --set train.max_steps=30 --json"));
  ASSERT_EQ(from_best.status, 0) << from_best.output;
  EXPECT_NE(from_best.output.find("resuming from " + best), std::string::npos) << from_best.output;
  EXPECT_NE(from_best.output.find("\"steps\":30"), std::string::npos) << from_best.output;

  for (const auto& f : list_checkpoints(dir)) std::ofstream(f.path, std::ios::trunc);
  std::ofstream(best, std::ios::trunc);
  const auto before = snapshot(dir);
  const RunResult stopped = run_luong(train_args(dir, "--resume auto --set train.max_steps=40"));
  EXPECT_NE(stopped.status, 0);
  EXPECT_NE(stopped.output.find("holds checkpoints but none loads"), std::string::npos) << stopped.output;
  EXPECT_EQ(snapshot(dir), before) << "nothing may be started over or overwritten";
}

// Checkpoints after the one resumed from would outrank the resumed run's: keeping the newest two deleted its
// new checkpoints, and the next --resume auto continued the other branch. Resuming an older checkpoint by path
// is refused with nothing touched; files --resume auto skipped (damaged, or a model without trainer state) are
// moved aside, and the run's new checkpoints are the ones kept.
TEST_F(RunDirSafetyTest, AResumeNeverLeavesLaterCheckpointsToOutrankItsOwn) {
  const std::string dir = fresh_dir("safety_branch");
  ASSERT_EQ(run_luong(train_args(dir, "--set train.keep_checkpoints=3")).status, 0);  // ckpt-10, ckpt-20
  const auto before = snapshot(dir);
  const RunResult branch = run_luong(train_args(dir, "--resume " + dir + "/ckpt-10.h5 --set train.max_steps=30"));
  EXPECT_EQ(branch.status, 1) << branch.output;
  EXPECT_NE(branch.output.find("--run-dir " + dir + " holds checkpoints after step 10 (" + dir +
                               "/ckpt-20.h5): resuming from " + dir + "/ckpt-10.h5 here would branch the run"),
            std::string::npos)
      << branch.output;
  EXPECT_EQ(snapshot(dir), before) << "refused before anything was written";

  // A damaged ckpt-40 and an averaged model saved as ckpt-30: --resume auto continues from step 20.
  std::ofstream(dir + "/ckpt-40.h5") << "not a checkpoint";
  std::ofstream(dir + "/ckpt-40.h5.skipped") << "moved aside by an earlier resume";  // kept as it is
  ASSERT_EQ(run_luong("average -o " + dir + "/ckpt-30.h5 " + dir + "/ckpt-10.h5 " + dir + "/ckpt-20.h5").status, 0);
  const RunResult r =
      run_luong(train_args(dir, "--resume auto --set train.max_steps=30 --set train.keep_checkpoints=1"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("warning: skipping checkpoint " + dir + "/ckpt-30.h5: it has no trainer state"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("resumed from " + dir + "/ckpt-20.h5 at step 20"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("warning: moved " + dir + "/ckpt-40.h5 (skipped above) to " + dir + "/ckpt-40.h5.skipped.2"),
            std::string::npos)
      << r.output;
  std::vector<int64_t> steps;
  for (const auto& f : list_checkpoints(dir)) steps.push_back(f.step);
  EXPECT_EQ(steps, std::vector<int64_t>{30}) << "the run's own checkpoint is the one kept";
  EXPECT_EQ(step_of(dir + "/ckpt-30.h5"), 30);
  EXPECT_TRUE(fs::exists(dir + "/ckpt-40.h5.skipped.2"));
  std::ifstream earlier(dir + "/ckpt-40.h5.skipped");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(earlier), {}), "moved aside by an earlier resume");
  EXPECT_TRUE(fs::exists(dir + "/ckpt-30.h5.skipped"));
}

// A checkpoint with a NaN or an integer tensor where luong writes finite floats was changed outside luong:
// decoding and resuming refuse it naming the file and tensor (decoding said only "NaN log-probabilities";
// an integer parameter was rounded silently).
TEST_F(RunDirSafetyTest, NonFiniteOrIntegerStateInACheckpointIsNamedWhenLoaded) {
  const std::string dir = fresh_dir("safety_nan_state");
  ASSERT_EQ(run_luong(train_args(dir)).status, 0);
  const std::string good = dir + "/ckpt-20.h5";
  auto edited = [&](const std::string& name, const Tensor& value) {
    Checkpoint c = load_checkpoint(good);
    c.state.tensors[name] = value;
    const std::string path = dir + "/edited.h5";
    std::map<std::string, std::string> metadata;  // the caller's keys (world_size, ...), not the reserved ones
    for (const auto& [k, v] : c.metadata)
      if (k != "created" && k != "luong_version" && k != "format_version" && k.rfind("checksum", 0) != 0)
        metadata[k] = v;
    save_checkpoint(path, c.state, metadata);
    return path;
  };
  const Checkpoint c = load_checkpoint(good);
  std::string param, moment;
  for (const auto& [name, t] : c.state.tensors) {
    if (param.empty() && name.rfind("model/", 0) == 0) param = name;
    if (moment.empty() && name.rfind("optim/", 0) == 0 && t.numel() > 1) moment = name;
  }
  ASSERT_FALSE(param.empty());
  ASSERT_FALSE(moment.empty());
  Tensor nan_param = c.state.tensors.at(param).clone();
  nan_param.data<float>()[0] = std::nanf("");
  RunResult r = run_luong("translate --checkpoint " + edited(param, nan_param) + " 2>&1", "a b c\n");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("checkpoint " + dir + "/edited.h5: parameter '" + param + "' holds NaN or infinite values"),
            std::string::npos)
      << r.output;
  r = run_luong("translate --checkpoint " + edited(param, c.state.tensors.at(param).to(DType::i64)) + " 2>&1", "a\n");
  EXPECT_NE(r.output.find("parameter '" + param + "' is stored as int64; expected floating point"), std::string::npos)
      << r.output;

  // Finite in the file but not in the model's float32: refused too.
  Tensor huge = c.state.tensors.at(param).to(DType::f64);
  huge.data<double>()[0] = 1e300;
  r = run_luong("translate --checkpoint " + edited(param, huge) + " 2>&1", "a\n");
  EXPECT_NE(r.output.find("parameter '" + param + "' holds NaN or infinite values"), std::string::npos) << r.output;
  r = run_luong(train_args(
      dir, "--resume " + edited(moment, c.state.tensors.at(moment).to(DType::i64)) + " --set train.max_steps=30"));
  EXPECT_NE(r.output.find("state '"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("is stored as int64; expected floating point"), std::string::npos) << r.output;

  Tensor nan_moment = c.state.tensors.at(moment).clone();
  nan_moment.data<float>()[1] = std::numeric_limits<float>::infinity();
  r = run_luong(train_args(dir, "--resume " + edited(moment, nan_moment) + " --set train.max_steps=30"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("holds NaN or infinite values"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(dir + "/edited.h5"), std::string::npos) << r.output;
}

TEST_F(RunDirSafetyTest, AMissingResumeCheckpointIsRefusedBeforeAnythingIsCreated) {
  const std::string dir = fresh_dir("safety_missing_resume");
  const RunResult r = run_luong(train_args(dir, "--resume " + dir + "_nowhere.h5"));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("--resume " + dir + "_nowhere.h5 does not exist"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("train: "), std::string::npos) << "refused before the corpus is read";
  EXPECT_TRUE(!fs::exists(dir) || fs::is_empty(dir)) << "nothing written into the run dir";
}

TEST_F(RunDirSafetyTest, ARefusedResumeLeavesTheRunsConfigAndVocabulariesAlone) {
  const std::string dir = fresh_dir("safety_refused_resume");
  ASSERT_EQ(run_luong(train_args(dir)).status, 0);
  const auto before = snapshot(dir);
  const RunResult r = run_luong(train_args(dir, "--resume auto --set model.hidden_size=32 --set train.max_steps=30"));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("checkpoint " + checkpoint_path(dir, 20) + ": parameter"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(16, 16)"), std::string::npos) << r.output;
  EXPECT_EQ(snapshot(dir), before);
}

// A checkpoint of a 2-layer model used to resume into a 1-layer one with layer 1 silently dropped (SGD),
// or to fail only at the first step, after config.yaml had been rewritten (Adam). Both are refused while
// loading, naming the extra parameter and the config key that differs.
TEST_F(RunDirSafetyTest, AResumeIntoASmallerModelIsRefusedNamingTheChangedKey) {
  for (const std::string optim : {"sgd", "adam"}) {
    const std::string dir = fresh_dir("safety_fewer_layers_" + optim);
    ASSERT_EQ(run_luong(train_args(dir, "--set model.layers=2 --set optim.name=" + optim)).status, 0);
    const auto before = snapshot(dir);
    const RunResult r = run_luong(
        train_args(dir, "--resume auto --set model.layers=1 --set train.max_steps=30 --set optim.name=" + optim));
    EXPECT_NE(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("is not in this model"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("model.layers: 2 -> 1"), std::string::npos) << r.output;
    EXPECT_EQ(snapshot(dir), before) << optim;
  }
}

// A save that runs out of space (a file-size limit stands in for a full disk: writes fail the same way,
// with EFBIG instead of ENOSPC). It used to end in a segfault (status 139) in HDF5's exit handler after
// the error, with HDF5's internal dump in the message. Now: status 1, the system's reason, no temp file,
// and the previous checkpoint is still the newest valid one.
TEST_F(RunDirSafetyTest, ASaveThatRunsOutOfSpaceFailsCleanlyAndKeepsThePreviousCheckpoint) {
  const std::string dir = fresh_dir("safety_disk_full");
  ASSERT_EQ(run_luong(train_args(dir, "--quiet")).status, 0);
  const auto size_kb = static_cast<long>(fs::file_size(checkpoint_path(dir, 20)) / 1024);
  ASSERT_GT(size_kb, 8);
  const RunResult r =
      run_luong_shell("bash -c \"trap '' XFSZ; ulimit -f " + std::to_string(size_kb / 2) + "; exec " + LUONG_BINARY +
                      " " + train_args(dir, "--quiet --resume auto --set train.max_steps=40") + "\" 2>&1");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("file write failed: File too large"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("buf = 0x"), std::string::npos) << r.output;
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
  const LatestCheckpoint latest = find_latest_valid(dir);
  ASSERT_TRUE(latest.checkpoint.has_value());
  EXPECT_EQ(latest.checkpoint->path, checkpoint_path(dir, 20));
}

// A run that early stopping ended stays ended when resumed (the checkpoint holds its patience): resuming
// used to train on past it and replace best.h5, so a sweep interrupted after a trial had stopped got
// another result than an uninterrupted one. Raising train.early_stopping is how to train on.
// Another data.max_len keeps other pairs, so the saved data position no longer fits: the refusal names
// the key, not only its guesses (corpus, batch size, processes).
TEST_F(RunDirSafetyTest, ARefusedResumeNamesTheDataKeyThatMovedThePosition) {
  const std::string dir = fresh_dir("safety_max_len");
  ASSERT_EQ(run_luong(train_args(dir, "--quiet --set train.valid_every=0")).status, 0);
  const RunResult r = run_luong(
      train_args(dir, "--quiet --set train.valid_every=0 --resume auto --set train.max_steps=30 --set data.max_len=6"));
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("data.max_len: 20 -> 6"), std::string::npos) << r.output;
}

TEST_F(RunDirSafetyTest, AnEarlyStoppedRunStaysStoppedWhenResumed) {
  const std::string dir = fresh_dir("safety_early_stopped");
  // A learning rate too small to change anything: every validation after the first is no improvement.
  const std::string stalled = "--set optim.lr=1e-30 --set train.early_stopping=2 --set train.valid_every=5 --json";
  const RunResult first = run_luong(train_args(dir, stalled + " --set train.max_steps=100"));
  ASSERT_EQ(first.status, 0) << first.output;
  ASSERT_NE(first.output.find("\"steps\":15"), std::string::npos) << first.output;
  ASSERT_NE(first.output.find("early stopping: no improvement in 2 validations"), std::string::npos) << first.output;
  // The checkpoints and best.h5 untouched, and metrics.jsonl's records (config.yaml and the vocabularies are
  // rewritten, and metrics.jsonl reopened, by every run that starts).
  auto saved_state = [&] {
    auto files = snapshot(dir);
    std::erase_if(files, [](const auto& kv) { return !kv.first.ends_with(".h5"); });
    std::ifstream metrics(dir + "/metrics.jsonl");
    std::stringstream records;
    records << metrics.rdbuf();
    files["metrics.jsonl records"] = records.str();
    return files;
  };
  const auto before = saved_state();
  const RunResult again = run_luong(train_args(dir, stalled + " --set train.max_steps=200 --resume auto"));
  ASSERT_EQ(again.status, 0) << again.output;
  EXPECT_NE(again.output.find("\"steps\":15"), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("already done (early stopping: no improvement in 2 validations"), std::string::npos)
      << again.output;
  EXPECT_NE(again.output.find("\"last_valid_ppl\":null"), std::string::npos) << "not known after a no-op resume";
  EXPECT_NE(again.output.find("\"tokens_per_s\":null"), std::string::npos) << again.output;
  EXPECT_EQ(saved_state(), before) << "best.h5, the checkpoints and the metrics must be left as they were";
  const RunResult more = run_luong(
      train_args(dir,
                 "--set optim.lr=1e-30 --set train.early_stopping=4 --set train.valid_every=5 --json --resume auto"
                 " --set train.max_steps=200"));
  ASSERT_EQ(more.status, 0) << more.output;
  EXPECT_NE(more.output.find("\"steps\":25"), std::string::npos) << "a larger patience trains on: " << more.output;
}

TEST_F(RunDirSafetyTest, ResumingWithAChangedConfigNamesTheChanges) {
  const std::string dir = fresh_dir("safety_changed");
  ASSERT_EQ(run_luong(train_args(dir)).status, 0);
  const RunResult r = run_luong(train_args(dir, "--resume auto --set train.max_steps=30 --set optim.lr=0.5 --quiet"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("warning: resuming with a changed config"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("optim.lr: "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("train.max_steps: 20 -> 30"), std::string::npos) << "limits are not warned about when quiet";
  EXPECT_EQ(r.output.find("validation at step"), std::string::npos) << "--quiet keeps only warnings";
  const RunResult loud = run_luong(train_args(dir, "--resume auto --set train.max_steps=40 --set optim.lr=0.5"));
  ASSERT_EQ(loud.status, 0) << loud.output;
  EXPECT_NE(loud.output.find("resuming with changed settings that keep the run's steps: train.max_steps: 30 -> 40"),
            std::string::npos)
      << loud.output;
  EXPECT_EQ(loud.output.find("warning: resuming with a changed config"), std::string::npos) << loud.output;
}

TEST_F(RunDirSafetyTest, ASecondRunOnABusyDirectoryIsRefusedEvenWithOverwrite) {
  const std::string dir = fresh_dir("safety_busy");
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string cmd = "exec " + std::string(LUONG_BINARY) + " " +
                            train_args(dir, "--set train.max_steps=1000000 --set train.valid_every=0 --quiet") +
                            " > /dev/null 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 3000 && list_checkpoints(dir).empty(); ++i) usleep(10000);
  ASSERT_FALSE(list_checkpoints(dir).empty());
  const RunResult second = run_luong(train_args(dir, "--overwrite --set train.max_steps=5"));
  EXPECT_NE(second.status, 0);
  EXPECT_NE(second.output.find("is in use by another luong train (pid " + std::to_string(pid)), std::string::npos)
      << second.output;
  EXPECT_FALSE(list_checkpoints(dir).empty()) << "the running run's checkpoints must survive";
  kill(pid, SIGINT);
  int st = 0;
  waitpid(pid, &st, 0);
  // The lock went with the process: the run can be continued (here: it is already past max_steps).
  const RunResult resumed = run_luong(train_args(dir, "--resume auto --set train.max_steps=1 --quiet --json"));
  EXPECT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("\"stop_reason\":\"already done (train.max_steps = 1 reached)\""), std::string::npos)
      << resumed.output;
}

TEST_F(RunDirSafetyTest, InterruptSavesACheckpointAndExits130) {
  const std::string dir = fresh_dir("safety_sigint");
  const std::string log = fresh_dir("safety_sigint_log") + "/train.log";  // beside the run, not in it
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string cmd = "exec " + std::string(LUONG_BINARY) + " " +
                            train_args(dir, "--set train.max_steps=1000000 --set train.valid_every=0 --json") + " > " +
                            log + " 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Interrupt once training has produced a checkpoint (so it is well into its loop).
  for (int i = 0; i < 3000 && list_checkpoints(dir).empty(); ++i) usleep(10000);
  ASSERT_FALSE(list_checkpoints(dir).empty());
  kill(pid, SIGINT);
  int st = 0;
  waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 130);
  std::ifstream in(log);
  const std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(out.find("\"stop_reason\":\"interrupted"), std::string::npos) << out;
  const nlohmann::json summary = nlohmann::json::parse(out.substr(out.rfind("{\"")));
  EXPECT_EQ(list_checkpoints(dir).back().step, summary.at("steps").get<int64_t>()) << "saved at the last step";
}

TEST_F(RunDirSafetyTest, TempFilesOfAKilledSaveAreRemovedAndSummariesSayWhatIsUnknown) {
  const std::string dir = fresh_dir("safety_tmp");
  ASSERT_EQ(run_luong(train_args(dir)).status, 0);
  // A pid no process can have: Linux pids stay below pid_max, at most 2^22.
  const std::string stale = checkpoint_path(dir, 30) + ".tmp.4194304";
  std::ofstream(stale) << "half a checkpoint";
  const RunResult r = run_luong(train_args(dir, "--resume auto --set train.max_steps=25 --json"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_NE(r.output.find("removed " + stale), std::string::npos) << r.output;

  // No validation set and fewer steps than log_every: no invented numbers.
  const std::string bare = fresh_dir("safety_bare");
  const RunResult b = run_luong(train_args(bare, "--set data.valid_src= --set data.valid_tgt= --set train.max_steps=5 "
                                                 "--set train.log_every=10 --json"));
  ASSERT_EQ(b.status, 0) << b.output;
  const nlohmann::json j = nlohmann::json::parse(b.output.substr(b.output.rfind("{\"")));
  EXPECT_TRUE(j.at("best_valid_ppl").is_null());
  EXPECT_TRUE(j.at("train_loss").is_number());
  EXPECT_GT(j.at("train_loss").get<double>(), 0.0) << "the loss of the steps since the last log line";
}

TEST_F(RunDirSafetyTest, MostlyUnknownTrainingTextIsWarnedAboutEvenWhenQuiet) {
  const std::string dir = fresh_dir("safety_unk");
  const RunResult r = run_luong(train_args(dir, "--quiet --set data.min_freq=1000000 --set train.max_steps=2"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("warning: 100% of the source training tokens are <unk> (data.min_freq = 1000000"),
            std::string::npos)
      << r.output;
  const RunResult fine = run_luong(train_args(fresh_dir("safety_known"), "--quiet --set train.max_steps=2"));
  ASSERT_EQ(fine.status, 0) << fine.output;
  EXPECT_EQ(fine.output.find("<unk>"), std::string::npos) << fine.output;
}

TEST_F(RunDirSafetyTest, APairTooLongForMemoryIsRefusedBeforeAllocatingNamingItsLine) {
  // A pair whose attention weights alone (L x L floats) need more than the whole machine: L from the
  // host's memory, so the test means the same on any machine.
  const double host = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  const auto words = static_cast<int64_t>(std::sqrt(host / sizeof(float)) * 1.2);
  const std::string dir = fresh_dir("safety_long");
  fs::create_directories(dir);
  for (const char* side : {"src", "tgt"}) {
    std::ofstream out(dir + "/long." + side);
    out << "a b c\nd e\n";
    for (int64_t i = 0; i < words; ++i) out << (i % 2 ? "a " : "b ");
    out << "\n";
  }
  const RunResult r = run_luong(train_args(dir + "/run", "--set data.train_src=" + dir + "/long.src --set " +
                                                             "data.train_tgt=" + dir + "/long.tgt --set " +
                                                             "data.max_len=" + std::to_string(words + 1) +
                                                             " --set train.batch_size=1 --quiet"));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("for its attention weights alone"), std::string::npos) << r.output.substr(0, 2000);
  EXPECT_NE(r.output.find("line 3 of " + dir + "/long.src"), std::string::npos) << r.output.substr(0, 2000);
}

}  // namespace
}  // namespace luong::testing
