// The sweep specs shipped in configs/sweeps/ plan only valid trials: each trial's config (the base config with
// its overrides and grid values) passes the schema and its rules, so a user's first `luong sweep` of one does
// not fail trial by trial. Planned with --dry-run from the repository root, as their comments say to run them.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/support/run_luong.h"

namespace luong::testing {
namespace {

TEST(ShippedSweepSpecs, EveryTrialOfEverySpecIsValid) {
  const std::filesystem::path specs = std::filesystem::path(LUONG_SOURCE_DIR) / "configs" / "sweeps";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(specs)) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string out = fresh_dir("shipped_sweep_" + entry.path().stem().string());
    const RunResult r = run_luong_shell("cd " + std::string(LUONG_SOURCE_DIR) + " && " + LUONG_BINARY + " sweep " +
                                        entry.path().string() + " --out " + out + " --dry-run --json 2>/dev/null");
    ASSERT_EQ(r.status, 0) << entry.path() << "\n" << r.output;
    const auto trials = nlohmann::json::parse(r.output);
    EXPECT_FALSE(trials.empty()) << entry.path();
    int drawn_later = 0;
    for (const auto& t : trials) {
      // TPE: a trial drawn when it starts has no config yet; the spec's startup trials are checked.
      if (t.value("drawn_later", false)) {
        ++drawn_later;
        continue;
      }
      EXPECT_TRUE(t.at("valid").get<bool>()) << entry.path() << ": " << t.dump();
      // Successive halving: more than one rung, or it prunes nothing.
      if (t.contains("rung_steps")) {
        EXPECT_GE(t["rung_steps"].size(), 2u) << entry.path() << ": " << t.dump();
      }
    }
    EXPECT_LT(drawn_later, static_cast<int>(trials.size())) << entry.path() << ": no trial drawn at random";
    if (entry.path().stem() == "tpe-search") {
      EXPECT_EQ(drawn_later, 8);
    }
    ++checked;
  }
  EXPECT_GE(checked, 7);  // asha-search, attention, bpe, ema, lr-dropout, random-search, tpe-search
}

}  // namespace
}  // namespace luong::testing
