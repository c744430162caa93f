// `luong bleu` end to end through the binary, against the sacrebleu command's own output.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/bleu/bleu_command.h"
#include "tests/bleu/bleu_fixture.h"

namespace luong {
namespace {

using testing::bleu_data;
using testing::quoted;
using testing::run;
using testing::RunResult;

TEST(CmdBleu, TextOutputMatchesTheSacreBleuCommand) {
  const auto expected = testing::load_bleu_json("expected.json");
  for (const auto& [name, c] : expected["cases"].items()) {
    const RunResult r = run(quoted(bleu_data(c["ref"])), bleu_data(c["hyp"]));
    EXPECT_EQ(r.status, 0) << name << ": " << r.output;
    EXPECT_EQ(r.output, c["cli_text"].get<std::string>() + "\n") << name;
  }
}

TEST(CmdBleu, JsonOutputHasSacreBleuKeysAndExactNumbers) {
  const auto expected = testing::load_bleu_json("expected.json");
  for (const auto& [name, c] : expected["cases"].items()) {
    const RunResult r = run("--json " + quoted(bleu_data(c["ref"])), bleu_data(c["hyp"]));
    ASSERT_EQ(r.status, 0) << name << ": " << r.output;
    const auto got = nlohmann::json::parse(r.output);
    for (const auto& [key, value] : c["cli_json"].items()) EXPECT_EQ(got.at(key), value) << name << " key " << key;
    EXPECT_NEAR(got["score_unrounded"].get<double>(), c["score"].get<double>(), 1e-9) << name;
    EXPECT_EQ(got["counts"], c["counts"]) << name;
    EXPECT_EQ(got["totals"], c["totals"]) << name;
    EXPECT_EQ(got["hyp_len"], c["hyp_len"]) << name;
  }
}

TEST(CmdBleu, ClearErrors) {
  const RunResult count = run(quoted(bleu_data("ref.txt")), bleu_data("zero4_hyp.txt"));
  EXPECT_EQ(count.status, 1);
  EXPECT_NE(count.output.find("standard input has 3 lines but the reference " + bleu_data("ref.txt") + " has 37"),
            std::string::npos)
      << count.output;

  const RunResult missing = run("/nonexistent/ref.txt", bleu_data("hyp.txt"));
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.output.find("cannot open reference file /nonexistent/ref.txt"), std::string::npos)
      << missing.output;

  const std::string bad = (std::filesystem::temp_directory_path() /
                           ("luong_bleu_bad_" + std::to_string(::getpid()) + ".txt")).string();
  std::ofstream(bad, std::ios::binary) << "good line\nbad \xFF line\n";
  const RunResult utf8 = run(quoted(bleu_data("short_ref.txt")), bad);
  std::filesystem::remove(bad);
  EXPECT_EQ(utf8.status, 1);
  EXPECT_NE(utf8.output.find("standard input line 2: invalid UTF-8"), std::string::npos) << utf8.output;

  const RunResult metric = run("-m ter " + quoted(bleu_data("ref.txt")), bleu_data("hyp.txt"));
  EXPECT_EQ(metric.status, 2);
  EXPECT_NE(metric.output.find("--metrics: 'ter' is not a metric (bleu, chrf)"), std::string::npos) << metric.output;
}

// -m chrf, and -m with both metrics (printed BLEU first, aligned, whatever the order asked), against the
// sacrebleu command's output (tests/bleu/data/chrf.json).
TEST(CmdBleu, ChrfOutputMatchesTheSacreBleuCommand) {
  const auto expected = testing::load_bleu_json("chrf.json");
  for (const auto& [name, c] : expected["cases"].items()) {
    const std::string ref = quoted(bleu_data(c["ref"])), hyp = bleu_data(c["hyp"]);
    EXPECT_EQ(run("-m chrf " + ref, hyp).output, c["cli_text"].get<std::string>() + "\n") << name;
    EXPECT_EQ(run("-m chrf bleu " + ref, hyp).output, c["cli_both_text"].get<std::string>() + "\n") << name;
    const RunResult j = run("--json -m chrf " + ref, hyp);
    ASSERT_EQ(j.status, 0) << name << ": " << j.output;
    const auto got = nlohmann::json::parse(j.output);
    for (const auto& [key, value] : c["cli_json"].items()) EXPECT_EQ(got.at(key), value) << name << " key " << key;
    EXPECT_NEAR(got["score_unrounded"].get<double>(), c["score"].get<double>(), 1e-9) << name;
    const auto both = nlohmann::json::parse(run("--json -m bleu chrf " + ref, hyp).output);
    ASSERT_EQ(both.size(), 2u) << name;
    EXPECT_EQ(both[0]["name"], "BLEU") << name;
    EXPECT_EQ(both[1]["score"], c["cli_json"]["score"]) << name;
    // chrF++: sacrebleu -m chrf --chrf-word-order 2.
    const auto& pp = c["plusplus"];
    EXPECT_EQ(run("-m chrf --chrf-word-order 2 " + ref, hyp).output, pp["cli_text"].get<std::string>() + "\n") << name;
    const auto got_pp = nlohmann::json::parse(run("--json -m chrf --chrf-word-order 2 " + ref, hyp).output);
    for (const auto& [key, value] : pp["cli_json"].items()) EXPECT_EQ(got_pp.at(key), value) << name << " key " << key;
  }
  const RunResult three = run("-m chrf --chrf-word-order 3 " + quoted(bleu_data("ref.txt")), bleu_data("hyp.txt"));
  EXPECT_NE(three.status, 0);
  EXPECT_NE(three.output.find("--chrf-word-order"), std::string::npos) << three.output;
}

// Several reference files (sacrebleu REF1 REF2): the sacrebleu command's text and JSON, the files before or
// after -m as its parser takes them.
TEST(CmdBleu, SeveralReferenceFilesScoreAsTheSacreBleuCommand) {
  const auto m = testing::load_bleu_json("expected.json")["multi_reference"];
  std::string refs;
  for (const auto& name : m["refs"]) refs += " " + quoted(bleu_data(name));
  const std::string hyp = bleu_data(m["hyp"]);
  const RunResult text = run(refs, hyp);
  ASSERT_EQ(text.status, 0) << text.output;
  EXPECT_EQ(text.output, m["bleu"]["cli_text"].get<std::string>() + "\n");
  for (const std::string& args : {refs + " -m bleu chrf", "-m bleu chrf" + refs})
    EXPECT_EQ(run(args, hyp).output, m["cli_both_text"].get<std::string>() + "\n") << args;
  for (const auto& [args, key] : {std::pair{"--json" + refs, "bleu"}, std::pair{"--json -m chrf" + refs, "chrf"},
                                  std::pair{"--json -m chrf --chrf-word-order 2" + refs, "chrf_plusplus"}}) {
    const RunResult j = run(args, hyp);
    ASSERT_EQ(j.status, 0) << args << ": " << j.output;
    const auto got = nlohmann::json::parse(j.output);
    for (const auto& [field, value] : m[key]["cli_json"].items())
      EXPECT_EQ(got.at(field), value) << args << " " << field;
    EXPECT_NEAR(got["score_unrounded"].get<double>(), m[key]["score"].get<double>(), 1e-9) << args;
  }
  // A reference of another length is named.
  const RunResult mismatch = run(refs + " " + quoted(bleu_data("short_ref.txt")), hyp);
  EXPECT_EQ(mismatch.status, 1);
  EXPECT_NE(
      mismatch.output.find("standard input has 37 lines but the reference " + bleu_data("short_ref.txt") + " has 2"),
      std::string::npos)
      << mismatch.output;
}

}  // namespace
}  // namespace luong
