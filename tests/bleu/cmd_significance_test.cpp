// `luong bleu --confidence`, `--paired-bs` and `--paired-ar` through the binary: the sacrebleu command's JSON
// (significance.json), the table's marks, and the refusals.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/bleu/bleu_command.h"
#include "tests/bleu/bleu_fixture.h"

namespace luong {
namespace {

using testing::bleu_data;
using testing::run;
using testing::RunResult;

const nlohmann::json& fixture() { return testing::significance_fixture(); }

std::string data_dir() { return bleu_data(""); }

// `luong bleu ref.txt ARGS` in the fixture directory (the systems named as sacrebleu named them there).
RunResult in_data(const std::string& args) { return run("ref.txt " + args, "/dev/null", data_dir()); }

TEST(CmdSignificance, PairedTestsJsonEqualsTheSacreBleuCommand) {
  for (const std::string test : {"bs", "ar"}) {
    const RunResult r = in_data("-i hyp.txt sys2.txt sys3.txt --json --paired-" + test);
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(nlohmann::json::parse(r.output), fixture()["cli_paired_" + test + "_json"]) << test;
  }
}

TEST(CmdSignificance, ConfidenceJsonEqualsTheSacreBleuCommand) {
  const RunResult r = run("--json --confidence -m bleu chrf ref.txt", bleu_data("hyp.txt"), data_dir());
  ASSERT_EQ(r.status, 0) << r.output;
  const auto got = nlohmann::json::parse(r.output);
  const auto& want = fixture()["cli_confidence_json"];
  ASSERT_EQ(got.size(), want.size());
  for (size_t m = 0; m < want.size(); ++m)
    for (const auto& [key, value] : want[m].items()) EXPECT_EQ(got[m].at(key), value) << m << " key " << key;
  // The same from -i, and the text line: the estimate after the score, bs and seed in the signature.
  const RunResult text = in_data("-i hyp.txt --confidence");
  EXPECT_NE(text.output.find("BLEU|nrefs:1|bs:1000|seed:12345|case:mixed"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find(" = 62.6 (\u03bc = 62.5 \u00b1 9.5) 86.8/"), std::string::npos) << text.output;
}

TEST(CmdSignificance, TableMarksSignificantSystemsAndNamesTheTest) {
  const RunResult r = in_data("-i hyp.txt sys2.txt sys3.txt --paired-bs -m bleu chrf --chrf-word-order 2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("Baseline: hyp.txt  62.6 (62.5 \u00b1 9.5)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("sys2.txt  47.5 (47.4 \u00b1 10.5) (p = 0.0010)*"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(p = 0.1499)  "), std::string::npos) << r.output;  // sys3: no mark
  EXPECT_NE(r.output.find("chrF2++ (\u03bc \u00b1 95% CI)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Paired bootstrap resampling test, 1000 resamples: each system against the baseline, hyp.txt"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" - chrF2++|nrefs:1|bs:1000|seed:12345|case:mixed|eff:yes|nc:6|nw:2"), std::string::npos)
      << r.output;
  // Another seed and count: other resamples, named in the signature.
  const RunResult other = in_data("-i hyp.txt sys2.txt --paired-ar --paired-ar-n 500 --seed 7");
  EXPECT_NE(other.output.find("|ar:500|seed:7|"), std::string::npos) << other.output;
}

TEST(CmdSignificance, SeveralSystemsWithoutATestAreScoredSideBySide) {
  const RunResult r = in_data("-i hyp.txt sys2.txt -m bleu chrf --json");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto got = nlohmann::json::parse(r.output);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1]["system"], "sys2.txt");
  EXPECT_EQ(got[1]["BLEU"], "47.5");  // sacrebleu's JSON holds the formatted scores here
  EXPECT_EQ(got[0]["chrF2"], "72.9");
}

TEST(CmdSignificance, AnOutputAgainstItsCopyIsNotSignificant) {
  const std::string copy = (std::filesystem::temp_directory_path() / "luong_significance_copy.txt").string();
  std::filesystem::copy_file(bleu_data("hyp.txt"), copy, std::filesystem::copy_options::overwrite_existing);
  for (const std::string test : {"bs", "ar"}) {
    const RunResult r = in_data("-i hyp.txt " + copy + " --paired-" + test);
    EXPECT_NE(r.output.find("(p = 1.0000)"), std::string::npos) << r.output;  // sacreBLEU says p = 0.0010*
    EXPECT_EQ(r.output.find("(p = 1.0000)*"), std::string::npos) << r.output;
  }
  std::filesystem::remove(copy);
}

TEST(CmdSignificance, MisuseIsRefusedWithTheReason) {
  const auto expect = [](const RunResult& r, int status, const std::string& text) {
    EXPECT_EQ(r.status, status) << r.output;
    EXPECT_NE(r.output.find(text), std::string::npos) << r.output;
  };
  expect(in_data("-i hyp.txt --paired-bs"), 2, "a paired test needs a baseline and at least one system");
  expect(in_data("-i hyp.txt sys2.txt --confidence"), 2, "for several, compare them with --paired-bs");
  expect(in_data("-i hyp.txt sys2.txt --paired-bs --paired-ar"), 2, "excludes");
  expect(in_data("-i hyp.txt sys2.txt --paired-bs-n 10"), 2, "requires --paired-bs");
  expect(in_data("-i hyp.txt sys2.txt --paired-bs --paired-bs-n 0"), 2, "--paired-bs-n");
  expect(in_data("-i hyp.txt hyp.txt --paired-bs"), 1, "-i names hyp.txt twice");
  expect(in_data("-i hyp.txt missing.txt --paired-bs"), 1, "cannot open system output missing.txt");
  expect(in_data("-i hyp.txt short_hyp.txt --paired-bs"), 1, "short_hyp.txt has");
}

}  // namespace
}  // namespace luong
