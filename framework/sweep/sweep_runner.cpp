#include "framework/sweep/sweep_runner.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "framework/core/error.h"
#include "framework/io/checkpoint_dir.h"
#include "framework/io/config_leaves.h"
#include "framework/io/config_value.h"
#include "framework/io/directory_lock.h"
#include "framework/io/json_text.h"
#include "framework/sweep/gpu_pool.h"
#include "framework/sweep/median_stopping.h"
#include "framework/sweep/successive_halving.h"
#include "framework/sweep/tpe_sampler.h"
#include "framework/sweep/trial_process.h"

namespace luong::sweep {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr size_t kErrorTailLines = 6;

// The reason the attempt that wrote `log` from byte `from` on gave for failing: its last "luong: error: ..."
// line, "aborting the job: ..." (under mpirun, where the tail of the log is Open MPI's abort banner) or
// "luong sweep: cannot execute ..." (the launcher or binary did not start). Earlier attempts' lines, before
// `from`, are not this failure's. When there is none (a process killed by a signal): what the log holds.
std::string failure_reason(const std::string& log, std::uintmax_t from) {
  std::ifstream in(log);
  if (from > 0) in.seekg(static_cast<std::streamoff>(from));
  std::string reason;
  bool any_output = false;
  for (std::string line; std::getline(in, line);) {
    any_output = any_output || line.find_first_not_of(" \t\r") != std::string::npos;
    if (line.find("luong: error:") != std::string::npos || line.find("aborting the job:") != std::string::npos ||
        line.rfind("luong sweep: cannot execute", 0) == 0)
      reason = line;
  }
  if (!reason.empty()) return reason;
  return any_output ? "no error message in its log" : "no output in its log";
}

// "optim.weight_decay: 0.0 -> 0.01, ..." for the keys whose values differ.
std::string changed_keys(const std::string& before, const std::string& after) {
  std::string out;
  for (const ChangedLeaf& c : changed_leaves(config_leaves(before), config_leaves(after)))
    out += str(out.empty() ? "" : ", ", c.key, ": ", c.before, " -> ", c.after);
  return out.empty() ? "the text differs" : out;
}

// Attempts and accumulated wall time of a trial over every sweep run (<trial>/sweep_state.json); under successive
// halving also the steps its current (or last) run trains to, and whether it reached them and waits there.
struct TrialState {
  int64_t attempts = 0;
  double wall_s = 0.0;
  int64_t budget = 0;
  bool paused = false;
};

TrialState read_state(const std::string& dir) {
  std::ifstream in(dir + "/sweep_state.json");
  const json j = in ? json::parse(in, nullptr, false) : json();
  if (!j.is_object()) return {};
  return {j.value("attempts", int64_t{0}), j.value("wall_s", 0.0), j.value("budget", int64_t{0}),
          j.value("paused", false)};
}

void write_state(const std::string& dir, const TrialState& s) {
  const std::string path = dir + "/sweep_state.json";
  json j{{"attempts", s.attempts}, {"wall_s", s.wall_s}};
  if (s.budget > 0) j["budget"] = s.budget, j["paused"] = s.paused;
  std::ofstream(path + ".tmp") << j.dump() << "\n";
  fs::rename(path + ".tmp", path);
}

// Size of a file, 0 when it does not exist yet.
std::uintmax_t size_of(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t n = fs::file_size(path, ec);
  return ec ? 0 : n;
}

// The eval data of a trial: the test set, else the validation set.
std::optional<std::pair<std::string, std::string>> eval_data(const Config& c) {
  if (!c.get_string("data.test_src").empty() && !c.get_string("data.test_tgt").empty())
    return std::make_pair(c.get_string("data.test_src"), c.get_string("data.test_tgt"));
  if (!c.get_string("data.valid_src").empty() && !c.get_string("data.valid_tgt").empty())
    return std::make_pair(c.get_string("data.valid_src"), c.get_string("data.valid_tgt"));
  return std::nullopt;
}

// The best validation BLEU and chrF a trial recorded (train.valid_bleu, or train.valid_metric bleu or chrf), from
// its metrics log; left as they are when the log has none (a result read back keeps what it had).
void read_valid_scores(TrialResult& r, const std::string& metrics_path) {
  if (auto b = best_valid_score(metrics_path, "valid_bleu")) r.valid_bleu = b;
  if (auto c = best_valid_score(metrics_path, "valid_chrf")) r.valid_chrf = c;
}

class SweepRun {
 public:
  SweepRun(const SweepSpec& spec, const std::vector<Trial>& trials, const SweepOptions& o)
      : spec_(spec), trials_(trials), o_(o), configs_(trials.size()), eval_only_(trials.size(), false), gpus_(o.gpus) {
    if (spec.prune.asha()) halving_.emplace(spec.prune.halving, spec.prune.mode, trials.size());
    for (const auto& t : trials) {
      TrialResult r;
      r.name = t.name, r.varied = t.varied, r.sets = t.sets;
      results_.push_back(std::move(r));
    }
  }

  SweepOutcome run() {
    fs::create_directories(o_.out_dir + "/trials");
    // Two sweeps on one directory would run the same trials at once, each marking the other's as failed.
    lock_directory(o_.out_dir, "--out", "luong sweep");
    restore_draws();
    for (size_t i = 0; i < trials_.size(); ++i)
      if (prepare(i)) queue_.push_back(i);
    // Trials an interrupted sweep left halfway to a rung's steps finish that run before new trials start.
    std::stable_partition(queue_.begin(), queue_.end(), [&](size_t i) { return halving_ && halving_->target(i) > 0; });
    // Only now, with the directory locked and every trial's settings checked against what it holds, does the
    // spec become the directory's record: a sweep refused above leaves the one that produced the results.
    copy_spec();
    warn_about_gpus(queue_);
    bool forwarded = false, killed = false;
    while (true) {
      const bool stopping = interrupt_count() > 0;
      // A trial starts when a slot is free and, with a GPU pool, the GPUs it needs are too.
      std::optional<size_t> due;
      while (!stopping && static_cast<int64_t>(slots_.size()) < o_.parallel && (due = next_trial()) &&
             (!gpus_.enabled() || gpus_.free() >= gpus_needed(*due))) {
        if (next_ < queue_.size() && queue_[next_] == *due) ++next_;
        if (trials_[*due].drawn_later && !draw_trial(*due)) continue;  // its config was invalid: recorded as failed
        eval_only_[*due] ? start_eval(*due) : start_train(*due);
        report_due_ = true;
      }
      if (stopping && !forwarded) {
        forwarded = true;
        if (!slots_.empty()) say(str("interrupted: stopping ", slots_.size(), " running trial(s) (they save a checkpoint)"));
        // A pruned trial has had its SIGTERM: a second one would stop it before its checkpoint is saved.
        for (const auto& s : slots_)
          if (s.pruned.empty()) kill(s.pid, SIGTERM);
      }
      if (interrupt_count() > 1 && !killed) {
        killed = true;
        say("second interrupt: killing running trials (they resume from their last checkpoint)");
        for (const auto& s : slots_) kill(s.pid, SIGKILL);
      }
      if (slots_.empty() && (stopping || !next_trial())) break;
      if (!stopping) prune_trials_behind();
      reap();
      if (!stopping) report_progress();
      nap(50);
    }
    for (size_t i = next_; i < queue_.size(); ++i) results_[queue_[i]].status = TrialStatus::pending;
    if (interrupt_count() == 0) prune_waiting_trials();
    return {results_, interrupt_count() > 0};
  }

 private:
  enum class Stage { train, eval };
  struct Slot {
    size_t index;
    pid_t pid;
    Stage stage;
    Clock::time_point start;
    std::uintmax_t log_offset;  // the log's size when the process started: its own output comes after
    std::uintmax_t metrics_size = 0;  // metrics.jsonl's size when the pruning rule last looked at it
    size_t validations = 0;           // its validation records then
    std::string pruned;               // why the rule stopped it (SIGTERM sent); empty while it trains on
    std::vector<std::string> gpus;    // what it was given from the pool (CUDA_VISIBLE_DEVICES)
  };

  // What runs next: under successive halving a waiting trial due to go on (the highest rung first), else the next
  // trial of the queue; nullopt when nothing can start now.
  std::optional<size_t> next_trial() const {
    if (halving_)
      if (auto p = halving_->due()) return p;
    if (next_ < queue_.size()) return queue_[next_];
    if (halving_ && slots_.empty()) return halving_->last_chance();
    return std::nullopt;
  }

  size_t gpus_needed(size_t i) const { return eval_only_[i] ? 1 : static_cast<size_t>(o_.gpus_per_trial); }

  // The environment of a new process and the pool's GPUs it takes (none without a pool).
  std::pair<std::vector<std::pair<std::string, std::string>>, std::vector<std::string>> child_env_taking(size_t n) {
    auto env = o_.child_env;
    if (!gpus_.enabled()) return {env, {}};
    auto ids = gpus_.take(n);
    LUONG_CHECK(ids.has_value(), "sweep: ", n, " GPU(s) wanted, ", gpus_.free(), " free");
    env.emplace_back("CUDA_VISIBLE_DEVICES", visible_devices(*ids));
    return {env, *ids};
  }

  static std::string on_gpus(const std::vector<std::string>& ids) {
    if (ids.empty()) return "";
    return str(ids.size() == 1 ? " on GPU " : " on GPUs ", visible_devices(ids));
  }

  // Parallel trials on a GPU device without a pool all compute on the same device; a pool with CPU trials does
  // nothing. Both are said once, before anything starts.
  void warn_about_gpus(const std::vector<size_t>& queue) const {
    bool any_cuda = false;
    for (size_t i : queue)
      any_cuda = any_cuda || (configs_[i] && configs_[i]->get_string("device").rfind("cuda", 0) == 0);
    if (queue.empty()) return;
    if (!gpus_.enabled() && any_cuda && o_.parallel > 1)
      say(str("warning: ", o_.parallel, " trials at once on device cuda share the GPU(s) every trial sees; give ",
              "each its own with --gpus 0,1,... (or gpus: in the spec)"));
    if (gpus_.enabled() && !any_cuda) say("warning: gpus has no effect: the trials run on the CPU (device: cpu)");
  }

  void say(const std::string& s) const {
    if (o_.log) o_.log(s);
  }
  std::string tag(size_t i) const { return str("[", i + 1, "/", trials_.size(), "] ", trials_[i].name); }
  std::string dir(size_t i) const { return trial_dir(o_.out_dir, trials_[i].name); }

  // Returns whether the trial still has to run; records finished and invalid trials. A TPE trial not drawn yet
  // waits in the queue (draw_trial prepares it when it is due).
  bool prepare(size_t i) {
    const Trial& t = trials_[i];
    if (t.drawn_later) return true;
    const std::string d = dir(i);
    check_same_trial(i);
    check_same_config(i);
    if (auto done = read_result(d)) {
      // Successive halving: a finished trial counts in the rungs it reached (and passed), evaluated yet or not.
      if (halving_ && done->status != TrialStatus::failed) halving_->finished(i, done->steps, pruning_curve(i));
      // Finished under a spec ranked by another metric (or, for chrf, by an earlier version that recorded no
      // chrF): its training is done, but the score was never computed. Only the evaluation runs (a resumed
      // `luong train` would train nothing, but report a rate of 0).
      const bool needs_eval = done->status == TrialStatus::ok && spec_.evaluates() && !done->metric(spec_.metric);
      if (needs_eval) {
        say(str(tag(i), ": finished, but without ", spec_.metric, " (the spec's metric is now ", spec_.metric,
                "): evaluating it"));
        results_[i] = *done;  // its training's figures (steps, rate, wall time) stay; the scores are added
        results_[i].varied = t.varied;
        eval_only_[i] = true;
      } else if (done->status != TrialStatus::failed || !o_.retry_failed) {
        done->varied = t.varied;  // the plan's order (the file's is alphabetical)
        // Finished before the sweep was ranked by a validation score: its metrics log has it if it computed it.
        read_valid_scores(*done, d + "/metrics.jsonl");
        results_[i] = *done;
        if (done->status == TrialStatus::ok) remember_curve(i);
        say(str(tag(i), ": already ", status_name(done->status), ", skipped",
                done->status == TrialStatus::failed   ? " (rerun with --retry-failed to run it again)"
                : done->status == TrialStatus::pruned ? " (delete its result.json to train it on)"
                                                      : ""));
        return false;
      }
      fs::remove(d + "/result.json");  // run again: until it finishes again it is unfinished
    }
    fs::create_directories(d);
    std::ofstream(d + "/trial.json") << json_text(json{{"name", t.name},
                                                       {"base", spec_.base},
                                                       {"sets", t.sets},
                                                       {"launch", spec_.launch},
                                                       {"command", train_command(spec_, t, o_)}},
                                                  2)
                                     << "\n";
    try {
      configs_[i] = o_.resolve(spec_.base, t.sets);
      const std::string& m = spec_.metric;
      if (spec_.evaluates()) {
        const auto files = eval_data(*configs_[i]);
        if (!files)
          LUONG_FAIL("metric ", m, " needs data.test_src/test_tgt or data.valid_src/valid_tgt in the trial's config");
        // Said now rather than after the trial has trained.
        for (const std::string& f : {files->first, files->second})
          if (std::error_code ec; !fs::is_regular_file(f, ec))
            LUONG_FAIL("metric ", m, " evaluates on ", f, ", which does not exist or is not a file");
      }
      const Config& c = *configs_[i];
      // The ranking's or the pruning's validation metric ("metric" or "prune.metric" in the messages).
      const auto needs_validation = [&](const std::string& what, const std::string& metric) {
        if (metric != "valid_ppl" && !c.get_bool("train.valid_bleu") && c.get_string("train.valid_metric") == "ppl")
          LUONG_FAIL(what, " ", metric, " needs validation scoring in the trial's run: add train.valid_bleu: true (or ",
                     "train.valid_metric: ", metric.substr(6), ") to the spec's overrides");
        if (c.get_string("data.valid_src").empty())
          LUONG_FAIL(what, " ", metric, " needs a validation set: data.valid_src is empty in the trial's config");
      };
      if (spec_.ranks_by_validation_score()) needs_validation("metric", m);
      if (spec_.prune.enabled) needs_validation("prune.metric", spec_.prune.metric);
      if (halving_) check_step_limit(c.get_int("train.max_steps"));
    } catch (const Error& e) {
      fail(i, str("invalid config: ", e.what()));
      return false;
    }
    std::ofstream(d + "/config.yaml") << configs_[i]->dump();
    if (!halving_ || eval_only_[i]) return true;
    // Successive halving: where an earlier sweep left it. Waiting at a rung's steps, it runs again only when
    // promoted; stopped on the way to them (interrupted), it finishes that run first.
    halving_->set_max_steps(i, configs_[i]->get_int("train.max_steps"));
    const TrialState st = read_state(d);
    halving_->restore(i, st.budget, st.paused, pruning_curve(i));
    if (!halving_->waiting(i)) return true;
    mark_waiting(i, st.budget);
    say(str(tag(i), ": waiting at step ", st.budget, " (", halving_->rung_text(i, st.budget), ")"));
    return false;
  }

  // random.sampler tpe: the values of trial i, drawn now from the results so far (tpe_sampler.h), recorded in
  // <out>/tpe_draws.json before anything else, so a sweep run again continues with the same trials. Returns
  // whether it is to run (prepare's answer).
  bool draw_trial(size_t i) {
    // Training with no result yet (not a later rung's run of a trial that has one).
    std::vector<size_t> running;
    for (const Slot& s : slots_)
      if (s.stage == Stage::train && (!halving_ || halving_->reached(s.index) == 0)) running.push_back(s.index);
    const std::vector<size_t> order = tpe_ranking(results_, spec_, running);
    const size_t liars = order.size() >= kTpeMinObservations ? running.size() : 0;
    std::vector<std::vector<Assignment>> ranked;
    for (size_t k : order) ranked.push_back(trials_[k].varied);
    Trial& t = trials_[i];
    t.varied = tpe_draw(spec_.random_params, ranked, spec_.random_seed, i);
    t.drawn_later = false;
    t.sets = trial_sets(spec_, t.varied);
    // A directory of that name holds another trial (of a sweep that drew other values into this --out).
    name_drawn_trial(t, [&](const std::string& name) {
      std::error_code ec;
      const bool named =
          std::any_of(trials_.begin(), trials_.end(), [&](const Trial& o) { return &o != &t && o.name == name; });
      return named || fs::exists(trial_dir(o_.out_dir, name), ec);
    });
    results_[i].name = t.name, results_[i].varied = t.varied, results_[i].sets = t.sets;
    draws_.push_back({{"trial", i + 1},
                      {"name", t.name},
                      {"values", values_json(t.varied)},
                      {"from", order.size() - liars},
                      {"running", liars}});
    write_draws();
    say(ranked.size() < kTpeMinObservations
            ? str(tag(i), ": drawn at random (TPE needs ", kTpeMinObservations, " results, has ", ranked.size(), ")")
            : str(tag(i), ": drawn by TPE from ", ranked.size() - liars, " results",
                  liars > 0 ? str(" and ", liars, " running trial(s) counted as the worst") : std::string(),
                  " (the best ", tpe_below_count(ranked.size()), " against the rest)"));
    return prepare(i);
  }

  static json values_json(const std::vector<Assignment>& varied) {
    json v = json::array();
    for (const auto& a : varied) v.push_back({{"key", a.key}, {"yaml", a.value.yaml}, {"label", a.value.label}});
    return v;
  }

  std::string draws_path() const { return o_.out_dir + "/tpe_draws.json"; }

  void write_draws() const {
    const std::string path = draws_path();
    std::ofstream(path + ".tmp")
        << json_text(json{{"seed", spec_.random_seed}, {"startup", spec_.tpe_startup}, {"draws", draws_}}, 2) << "\n";
    fs::rename(path + ".tmp", path);
  }

  // The TPE trials an earlier run of this sweep drew take their places again (their values, their names). Drawn
  // under another seed or startup, or with values the spec's params no longer allow, they are another sweep's.
  void restore_draws() {
    if (!spec_.tpe()) return;
    std::ifstream in(draws_path());
    if (!in) return;
    const json j = json::parse(in, nullptr, false);
    const auto refuse = [&](const std::string& why) {
      LUONG_FAIL(draws_path(), ": ", why, ": use another --out directory, or delete it to draw the TPE trials again");
    };
    if (!j.is_object() || !j.contains("draws") || !j["draws"].is_array() || !j.contains("seed") ||
        !j["seed"].is_number_unsigned() || !j.contains("startup") || !j["startup"].is_number_integer())
      refuse("not a record of TPE draws");
    const uint64_t seed = j.value("seed", uint64_t{0});
    const int64_t startup = j.value("startup", int64_t{0});
    // The default startup follows random.samples: a sweep given more samples keeps its draws by saying the old one.
    if (seed != spec_.random_seed || startup != spec_.tpe_startup)
      refuse(str("drawn with random.seed ", seed, " and random.startup ", startup, ", the spec now says ",
                 spec_.random_seed, " and ", spec_.tpe_startup,
                 seed == spec_.random_seed ? str(" (set random.startup: ", startup, " to continue them)") : ""));
    for (const json& d : j["draws"]) {
      // Written by write_draws; anything else (an edited or cut file) is said, not read as far as it goes.
      const auto shaped = [](const json& x) {
        if (!x.is_object() || !x.contains("trial") || !x["trial"].is_number_unsigned() || !x.contains("name") ||
            !x["name"].is_string() || !x.contains("values") || !x["values"].is_array())
          return false;
        return std::all_of(x["values"].begin(), x["values"].end(), [](const json& v) {
          return v.is_object() && v.contains("key") && v["key"].is_string() && v.contains("yaml") &&
                 v["yaml"].is_string() && v.contains("label") && v["label"].is_string();
        });
      };
      if (!shaped(d)) refuse(str("not a record of TPE draws (", json_text(d), ")"));
      const size_t i = d.value("trial", size_t{0}) - 1;
      if (i >= trials_.size()) continue;  // a sweep since cut to fewer samples: that trial is not in it now
      if (!trials_[i].drawn_later) refuse(str("trial ", i + 1, " drawn twice"));
      std::vector<Assignment> varied;
      for (const json& v : d.value("values", json::array()))
        varied.push_back({v.value("key", ""), {v.value("yaml", ""), v.value("label", "")}});
      if (!allowed_by_spec(varied))
        refuse(str("trial ", i + 1, "'s values are not ones the spec's random.params allow"));
      const std::string name = d.value("name", "");
      if (name.empty() || name[0] == '.' || name.find('/') != std::string::npos)
        refuse(str("trial ", i + 1, "'s name '", name, "' is not a directory name the sweep gives"));
      Trial& t = trials_[i];
      t.varied = varied, t.drawn_later = false, t.sets = trial_sets(spec_, varied), t.name = name;
      results_[i].name = t.name, results_[i].varied = t.varied, results_[i].sets = t.sets;
      draws_.push_back(d);
    }
  }

  // The spec's random parameters, in order, each with a value its distribution can give.
  bool allowed_by_spec(const std::vector<Assignment>& varied) const {
    if (varied.size() != spec_.random_params.size()) return false;
    for (size_t k = 0; k < varied.size(); ++k)
      if (varied[k].key != spec_.random_params[k].key || !value_allowed(spec_.random_params[k], varied[k].value.yaml))
        return false;
    return true;
  }

  // The trial's validation curve on the pruning metric.
  ValidCurve pruning_curve(size_t i) const { return valid_curve(dir(i) + "/metrics.jsonl", spec_.prune.metric); }

  // The sweep is over: the trials still waiting at a rung were never among its best, and are pruned there.
  void prune_waiting_trials() {
    if (!halving_) return;
    for (size_t i = 0; i < trials_.size(); ++i)
      if (halving_->waiting(i)) finish_pruned(i, halving_->why_pruned(i, spec_.prune.metric));
  }

  // The same --set list over a base file whose contents changed is another trial too: a trial that has
  // trained (it holds checkpoints) is neither continued nor reported with it. (A resumed one would only
  // have shown a "resuming with a changed config" warning in its train.log, and a finished one's result
  // belongs to the old config.) A config that no longer resolves is reported by prepare().
  void check_same_config(size_t i) const {
    std::ifstream in(dir(i) + "/config.yaml");
    if (!in || !holds_checkpoints(dir(i))) return;
    std::string resolved;
    try {
      resolved = o_.resolve(spec_.base, trials_[i].sets).dump();
    } catch (const Error&) {
      return;
    }
    std::stringstream saved;
    saved << in.rdbuf();
    if (saved.str() == resolved) return;
    // Successive halving gives each run of a trial its rung's train.max_steps, which its run directory's config
    // then holds: that one key may differ.
    if (halving_) {
      const auto changed = changed_leaves(config_leaves(saved.str()), config_leaves(resolved));
      if (changed.size() == 1 && changed[0].key == "train.max_steps") return;
    }
    LUONG_FAIL("trial '", trials_[i].name, "' in ", o_.out_dir, " was trained with another config (the base file ",
               spec_.base, " changed: ", changed_keys(saved.str(), resolved),
               "): use another --out directory, or delete ", dir(i), " to rerun it");
  }

  // A trial directory holds one trial's checkpoints: refuse to continue it with other settings, or under
  // another launch: prefix (another number of processes; the global batch of a resumed trial would change).
  // Records written before `launch` was kept are compared on base and sets only.
  void check_same_trial(size_t i) const {
    std::ifstream in(dir(i) + "/trial.json");
    if (!in) return;
    const json j = json::parse(in, nullptr, false);
    if (!j.is_object()) return;
    const auto sets = j.value("sets", std::vector<std::string>{});
    const std::string base = j.value("base", "");
    // Compared as trial.json stores them: a path that is not UTF-8 (the spec's directory in Latin-1) is kept
    // there with U+FFFD, and read back it must still be the same trial.
    const auto stored = [](const json& v) { return json::parse(json_text(v)); };
    if (stored(sets) != stored(trials_[i].sets) || stored(base) != stored(spec_.base))
      LUONG_FAIL("trial '", trials_[i].name, "' in ", o_.out_dir, " was started with other settings (base ", base,
                 ", --set ", json_text(sets), "; now base ", spec_.base, ", --set ", json_text(trials_[i].sets),
                 "): use another --out directory, or delete ", dir(i), " to rerun it");
    if (!j.contains("launch")) return;
    // Compared as written: how many processes a launcher starts is its own business (-np, --n, -H a:2,
    // --map-by, srun -n2, ...), and reading it from the text missed most of those forms.
    const auto launch = j.value("launch", std::vector<std::string>{});
    if (launch != spec_.launch && holds_checkpoints(dir(i)))
      LUONG_FAIL("trial '", trials_[i].name, "' in ", o_.out_dir, " was started with launch: ", launch_text(launch),
                 " and the spec now says ", launch_text(spec_.launch),
                 " (another number of processes would train with another global batch): use another --out "
                 "directory, or delete ",
                 dir(i), " to rerun it");
  }

  static std::string launch_text(const std::vector<std::string>& launch) {
    std::string s;
    for (const auto& w : launch) s += (s.empty() ? "" : " ") + w;
    return s.empty() ? "none" : s;
  }

  void copy_spec() const {
    const std::string copy = o_.out_dir + "/sweep.yaml";
    std::error_code ec;
    if (fs::exists(copy, ec) && fs::equivalent(spec_.file, copy, ec)) return;
    fs::copy_file(spec_.file, copy, fs::copy_options::overwrite_existing, ec);
    if (ec) LUONG_FAIL("cannot copy the sweep spec ", spec_.file, " to ", copy, ": ", ec.message());
  }

  void start_train(size_t i) {
    TrialState st = read_state(dir(i));
    ++st.attempts;
    // Successive halving: to its first rung's steps, to the next rung's when promoted, or to the target of a run
    // an interrupted sweep stopped on the way.
    const bool promoted = halving_ && halving_->waiting(i);
    const int64_t steps = halving_ ? halving_->start(i) : 0;
    st.budget = steps, st.paused = false;
    write_state(dir(i), st);
    const std::string log = dir(i) + "/train.log";
    const std::uintmax_t offset = size_of(log);
    // The pruning rule judges the validations this attempt logs: those of earlier attempts were judged then (a
    // trial resumed after an interrupt, or a pruned one given another chance by deleting its result.json).
    const std::string metrics = dir(i) + "/metrics.jsonl";
    const size_t judged = spec_.prune.median() ? valid_curve(metrics, spec_.prune.metric).size() : 0;
    auto [env, gpus] = child_env_taking(static_cast<size_t>(o_.gpus_per_trial));
    const pid_t pid = spawn_child({train_command(spec_, trials_[i], o_, steps), log, env});
    slots_.push_back({i, pid, Stage::train, Clock::now(), offset, size_of(metrics), judged, {}, gpus});
    results_[i].status = TrialStatus::running;
    const std::string to_rung =
        steps > 0 ? str(" to step ", steps, " (", halving_->rung_text(i, steps), ")") : std::string();
    const std::string again = promoted          ? str(", promoted from step ", halving_->reached(i))
                              : st.attempts > 1 ? str(" (attempt ", st.attempts, ", resuming)")
                                                : std::string();
    say(str(tag(i), ": training", to_rung, again, on_gpus(gpus), " [pid ", pid, "]"));
  }

  void start_eval(size_t i) {
    const Config& c = *configs_[i];
    std::string ckpt = dir(i) + "/best.h5";
    if (!fs::exists(ckpt)) {
      const auto all = list_checkpoints(dir(i));
      if (all.empty()) return fail(i, str("metric ", spec_.metric, ": the trial left no checkpoint to evaluate"));
      ckpt = all.back().path;
    }
    const auto [src, ref] = *eval_data(c);
    std::vector<std::string> argv = {
        o_.luong_binary, "eval",     "--checkpoint",        ckpt, "--src", src, "--ref", ref,
        "--json",        "--device", c.get_string("device")};
    // The trial's decoding settings, whatever its checkpoint says.
    const std::pair<const char*, std::string> decoding[] = {
        {"--beam", std::to_string(c.get_int("eval.beam_size"))},
        {"--length-penalty", value_to_yaml(c.get_number("eval.length_penalty"))},
        {"--max-len-ratio", value_to_yaml(c.get_number("eval.max_len_ratio"))},
        {"--batch-size", std::to_string(c.get_int("eval.batch_size"))}};
    for (const auto& [flag, value] : decoding) argv.insert(argv.end(), {flag, value});
    // The translations, for the report's significance test against the best trial.
    argv.insert(argv.end(), {"--output", dir(i) + "/" + kEvalTranslationsFile});
    const std::string log = dir(i) + "/eval.log";
    const std::uintmax_t offset = size_of(log);
    auto [env, gpus] = child_env_taking(1);
    const pid_t pid = spawn_child({argv, log, env});
    slots_.push_back({i, pid, Stage::eval, Clock::now(), offset, 0, 0, {}, gpus});
    results_[i].status = TrialStatus::running;
    say(str(tag(i), ": evaluating BLEU and chrF on ", src, on_gpus(gpus)));
  }

  // The finished trial's validation curve on the pruning metric: what later trials are compared with.
  void remember_curve(size_t i) {
    if (!spec_.prune.median()) return;
    ValidCurve c = valid_curve(dir(i) + "/metrics.jsonl", spec_.prune.metric);
    if (!c.empty()) finished_curves_.push_back(std::move(c));
  }

  // The median stopping rule (spec `prune:`), applied to each training trial when it has logged a new validation:
  // one behind the finished trials is sent SIGTERM, so it saves a checkpoint and exits; on_train_exit records it.
  void prune_trials_behind() {
    if (!spec_.prune.median()) return;
    for (Slot& s : slots_) {
      if (s.stage != Stage::train || !s.pruned.empty()) continue;
      const std::string metrics = dir(s.index) + "/metrics.jsonl";
      const std::uintmax_t size = size_of(metrics);
      if (size == s.metrics_size) continue;  // nothing logged since the last look
      s.metrics_size = size;
      const ValidCurve curve = valid_curve(metrics, spec_.prune.metric);
      // Each new validation in turn, as if the rule had looked right after it was logged: the decision, and the
      // step it names, do not depend on how many validations a fast trial made between two looks.
      std::optional<PruneVerdict> verdict;
      while (!verdict && s.validations < curve.size()) {
        ++s.validations;
        verdict = median_stopping(ValidCurve(curve.begin(), curve.begin() + static_cast<std::ptrdiff_t>(s.validations)),
                                  finished_curves_, spec_.prune);
      }
      if (!verdict) continue;
      s.pruned = describe(*verdict, spec_.prune);
      say(str(tag(s.index), ": ", s.pruned, "; stopping it (it saves a checkpoint)"));
      kill(s.pid, SIGTERM);
    }
  }

  // The results so far to o_.on_progress, when a trial started or ended since the last time or report_every_s has
  // passed (but not more often than every 2 s: a sweep of short trials rewrote every file for each of them); a
  // running training trial's row shows how far it got (its metrics log).
  void report_progress() {
    if (!o_.on_progress) return;
    const auto now = Clock::now();
    const double since = std::chrono::duration<double>(now - last_report_).count();
    if (since < 2.0 || (!report_due_ && since < o_.report_every_s)) return;
    report_due_ = false, last_report_ = now;
    for (const Slot& s : slots_) {
      if (s.stage != Stage::train) continue;
      TrialResult& r = results_[s.index];
      const std::string metrics = dir(s.index) + "/metrics.jsonl";
      r.steps = last_logged_step(metrics);
      r.valid_ppl = best_valid_ppl(metrics);
      read_valid_scores(r, metrics);
      r.tokens_per_s = mean_train_tokens_per_s(metrics);
    }
    o_.on_progress(results_);
  }

  void reap() {
    for (size_t k = 0; k < slots_.size();) {
      const std::optional<int> status = poll_child(slots_[k].pid);
      if (!status) {
        ++k;
        continue;
      }
      report_due_ = true;
      const Slot s = slots_[k];
      slots_.erase(slots_.begin() + static_cast<std::ptrdiff_t>(k));
      gpus_.give_back(s.gpus);  // before the exit handler, which may start the trial's evaluation on one
      TrialState st = read_state(dir(s.index));
      st.wall_s += std::chrono::duration<double>(Clock::now() - s.start).count();
      write_state(dir(s.index), st);
      if (s.stage == Stage::train)
        on_train_exit(s.index, *status, s.log_offset, s.pruned);
      else
        on_eval_exit(s.index, *status, s.log_offset);
    }
  }

  // `pruned`: why the pruning rule stopped it, when it did.
  void on_train_exit(size_t i, int status, std::uintmax_t log_offset, const std::string& pruned) {
    const std::string log = dir(i) + "/train.log";
    // Read whatever the exit status: an interrupted `luong train` prints its summary, then exits with 130/143.
    const auto summary = last_json_line(log, "stop_reason", log_offset);
    const bool child_interrupted = summary && summary->value("stop_reason", "").rfind("interrupted", 0) == 0;
    // A pruned trial that finished before the signal reached it is an ordinary finished trial (below); one that
    // exited otherwise after it (killed, or a launcher's own status with no summary) was stopped by it.
    const bool stopped = child_interrupted || (!pruned.empty() && !exited_ok(status));
    if (stopped || (interrupt_count() > 0 && !exited_ok(status))) {
      const std::string metrics = dir(i) + "/metrics.jsonl";
      // Killed before its summary (a second interrupt): the metrics log still tells how far it got.
      const int64_t steps = summary ? number_or(*summary, "steps", int64_t{0}) : last_logged_step(metrics);
      double rate = summary ? number_or(*summary, "tokens_per_s", 0.0) : 0.0;
      if (rate <= 0.0) rate = mean_train_tokens_per_s(metrics);
      mark_interrupted(i, steps, rate);
      if (!pruned.empty() && stopped) return finish_pruned(i, pruned);
      say(str(tag(i), ": interrupted, resumable (", describe_wait_status(status), ")"));
      return;
    }
    if (!exited_ok(status) || !summary)
      return fail(i, str("luong train: ", describe_wait_status(status), summary ? "" : " (no --json summary line)",
                         "; ", failure_reason(log, log_offset), "; last lines of ", log, ":\n",
                         log_tail(log, kErrorTailLines, log_offset)));
    TrialResult& r = results_[i];
    const std::string metrics = dir(i) + "/metrics.jsonl";
    r.valid_ppl = best_valid_ppl(metrics);
    read_valid_scores(r, metrics);
    if (!r.valid_ppl && number_or(*summary, "best_valid_ppl", 0.0) > 0.0)
      r.valid_ppl = (*summary)["best_valid_ppl"].get<double>();
    r.steps = number_or(*summary, "steps", int64_t{0});
    r.tokens_per_s = number_or(*summary, "tokens_per_s", 0.0);
    // A run resumed after its last step trained nothing: its rate is 0, the metrics log has the real one.
    if (r.tokens_per_s <= 0.0) r.tokens_per_s = mean_train_tokens_per_s(metrics);
    r.stop_reason = summary->value("stop_reason", "");
    r.resumed_from = summary->value("resumed_from", "");
    if (halving_) {
      // Successive halving: a run that trained to its rung's steps short of the trial's own limit waits there
      // (one that ended there for another reason, early stopping, stays ended when promoted: luong train says so).
      const bool at_target = r.steps >= halving_->target(i);
      if (at_target && halving_->reached_target(i, pruning_curve(i))) return wait_at_rung(i);
      halving_->finished(i, r.steps, pruning_curve(i));
    }
    if (spec_.evaluates()) {
      // No new process once the sweep is stopping: the next run evaluates it (training is already done).
      if (interrupt_count() > 0) return mark_interrupted(i, r.steps, r.tokens_per_s);
      return start_eval(i);
    }
    finish_ok(i);
  }

  void on_eval_exit(size_t i, int status, std::uintmax_t log_offset) {
    const std::string log = dir(i) + "/eval.log";
    if (interrupt_count() > 0 && !exited_ok(status)) {
      mark_interrupted(i, results_[i].steps, results_[i].tokens_per_s);
      say(str(tag(i), ": evaluation interrupted, resumable"));
      return;
    }
    const auto j = exited_ok(status) ? last_json_line(log, "bleu", log_offset) : std::nullopt;
    if (!j)
      return fail(i, str("luong eval: ", describe_wait_status(status), "; ", failure_reason(log, log_offset),
                         "; last lines of ", log, ":\n", log_tail(log, kErrorTailLines, log_offset)));
    results_[i].bleu = (*j)["bleu"].get<double>();
    if (j->contains("chrf") && (*j)["chrf"].is_number()) results_[i].chrf = (*j)["chrf"].get<double>();
    results_[i].eval_ref = j->value("ref", "");
    // The chrF word order from its signature ("...|nw:2|..."): the p-value must be of the score the trial ranks by.
    const std::string sig = j->value("chrf_signature", "");
    const size_t nw = sig.find("|nw:");
    results_[i].eval_chrf_word_order = nw == std::string::npos ? 0 : sig[nw + 4] - '0';
    finish_ok(i);
  }

  void finish_ok(size_t i) {
    TrialResult& r = results_[i];
    r.status = TrialStatus::ok;
    remember_curve(i);
    const TrialState st = read_state(dir(i));
    r.attempts = st.attempts, r.wall_s = st.wall_s;
    write_result(dir(i), r);
    std::string what = r.valid_ppl ? str("best valid ppl ", *r.valid_ppl) : std::string("no validation");
    if (r.valid_bleu) what += str(", best valid BLEU ", *r.valid_bleu);
    if (r.valid_chrf) what += str(", best valid chrF ", *r.valid_chrf);
    if (r.bleu) what += str(", BLEU ", *r.bleu);
    if (r.chrf) what += str(", chrF ", *r.chrf);
    say(str(tag(i), ": ok, ", what, ", ", static_cast<int64_t>(r.tokens_per_s), " tokens/s"));
  }

  void wait_at_rung(size_t i) {
    const int64_t steps = halving_->target(i);
    TrialState st = read_state(dir(i));
    st.paused = true;
    write_state(dir(i), st);
    mark_waiting(i, steps);
    say(str(tag(i), ": reached step ", steps, " (", halving_->rung_text(i, steps), "), best ", spec_.prune.metric, " ",
            halving_->best_at(i, steps), "; waiting to be compared"));
  }

  // A trial at a rung's steps: its row shows how far it got, with the rate over all its runs (the same whether it
  // just got there or a rerun finds it there).
  void mark_waiting(size_t i, int64_t steps) {
    mark_interrupted(i, steps, mean_train_tokens_per_s(dir(i) + "/metrics.jsonl"));
    results_[i].status = TrialStatus::waiting;
  }

  // Recorded as finished (result.json), so a rerun of the sweep skips it; its checkpoints stay.
  void finish_pruned(size_t i, const std::string& why) {
    TrialResult& r = results_[i];
    r.status = TrialStatus::pruned;
    r.stop_reason = why;
    write_result(dir(i), r);
    say(str(tag(i), ": pruned after ", r.steps, " steps"));
  }

  // The partial table shows how far an unfinished trial got; nothing is written to result.json.
  void mark_interrupted(size_t i, int64_t steps, double tokens_per_s) {
    TrialResult& r = results_[i];
    r.status = TrialStatus::interrupted;
    r.valid_ppl = best_valid_ppl(dir(i) + "/metrics.jsonl");
    read_valid_scores(r, dir(i) + "/metrics.jsonl");
    r.steps = steps;
    r.tokens_per_s = tokens_per_s;
    const TrialState st = read_state(dir(i));
    r.attempts = st.attempts, r.wall_s = st.wall_s;
  }

  void fail(size_t i, const std::string& error) {
    if (halving_) halving_->failed(i);
    TrialResult& r = results_[i];
    r.status = TrialStatus::failed;
    r.error = error;
    const TrialState st = read_state(dir(i));
    r.attempts = st.attempts, r.wall_s = st.wall_s;
    write_result(dir(i), r);
    say(str(tag(i), ": FAILED: ", error));
  }

  const SweepSpec& spec_;
  std::vector<Trial> trials_;   // TPE trials get their values (and names) as they are drawn
  json draws_ = json::array();  // what tpe_draws.json records
  const SweepOptions& o_;
  std::vector<std::optional<Config>> configs_;
  std::vector<bool> eval_only_;  // finished trials that only need their evaluation (metric bleu or chrf)
  std::vector<TrialResult> results_;
  std::vector<Slot> slots_;
  std::vector<ValidCurve> finished_curves_;  // of the trials finished ok, on spec_.prune.metric
  GpuPool gpus_;
  std::vector<size_t> queue_;  // trials to start, in order
  size_t next_ = 0;            // the first of them not started
  std::optional<HalvingSchedule> halving_;  // prune: {rule: asha}
  bool report_due_ = false;                 // a trial started or ended since the last on_progress
  Clock::time_point last_report_ = Clock::now() - std::chrono::hours(1);
};

}  // namespace

std::string trial_dir(const std::string& out_dir, const std::string& name) { return out_dir + "/trials/" + name; }

std::vector<std::string> train_command(const SweepSpec& spec, const Trial& t, const SweepOptions& o, int64_t steps) {
  std::vector<std::string> argv = spec.launch;
  argv.insert(argv.end(), {o.luong_binary, "train", "--config", spec.base, "--run-dir", trial_dir(o.out_dir, t.name)});
  for (const auto& s : t.sets) argv.insert(argv.end(), {"--set", s});
  if (steps > 0) argv.insert(argv.end(), {"--set", "train.max_steps=" + std::to_string(steps)});
  argv.insert(argv.end(), {"--resume", "auto", "--json"});
  return argv;
}

SweepOutcome run_sweep(const SweepSpec& spec, const std::vector<Trial>& trials, const SweepOptions& options) {
  LUONG_CHECK(options.parallel >= 1, "sweep: parallel must be at least 1, got ", options.parallel);
  if (!options.gpus.empty() && static_cast<int64_t>(options.gpus.size()) < options.gpus_per_trial)
    LUONG_FAIL("sweep: a trial runs ", options.gpus_per_trial, " processes, one a GPU, but only ", options.gpus.size(),
               " GPU(s) are listed (", visible_devices(options.gpus), ")");
  LUONG_CHECK(options.resolve, "sweep: no config resolver");
  return SweepRun(spec, trials, options).run();
}

}  // namespace luong::sweep
