// Results: ranking, table formats, result.json round trip, reading trial logs, the SVG plot.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include "framework/core/error.h"
#include "framework/sweep/results_table.h"
#include "framework/sweep/trial_result.h"
#include "framework/sweep/valid_plot.h"
#include "tests/support/run_luong.h"

namespace luong::sweep {
namespace {

TrialResult make(const std::string& name, TrialStatus s, std::optional<double> ppl, std::optional<double> bleu = {}) {
  TrialResult r;
  r.name = name, r.status = s, r.valid_ppl = ppl, r.bleu = bleu;
  r.varied = {{"optim.lr", {"0.00123456789", "0.001235"}}};
  r.sets = {"optim.lr=0.00123456789"};
  r.tokens_per_s = 1234.6, r.wall_s = 65.25, r.steps = 20;
  return r;
}

std::vector<std::string> order(const std::vector<TrialResult>& rs) {
  std::vector<std::string> n;
  for (const auto& r : rs) n.push_back(r.name);
  return n;
}

TEST(SweepResults, RankedByMetricFailedLast) {
  const std::vector<TrialResult> rs = {
      make("failed", TrialStatus::failed, std::nullopt), make("b", TrialStatus::ok, 12.0, 20.0),
      make("pending", TrialStatus::pending, std::nullopt), make("a", TrialStatus::ok, 9.5, 18.0),
      make("noval", TrialStatus::ok, std::nullopt), make("stopped", TrialStatus::interrupted, 7.0),
      make("c", TrialStatus::ok, 30.0, 25.0), make("stopped_early", TrialStatus::interrupted, std::nullopt),
      make("stopped2", TrialStatus::interrupted, 5.0)};
  EXPECT_EQ(order(rank_results(rs, "valid_ppl", "min")),
            (std::vector<std::string>{"a", "b", "c", "noval", "stopped2", "stopped", "stopped_early", "pending", "failed"}));
  EXPECT_EQ(order(rank_results(rs, "valid_ppl", "max")),
            (std::vector<std::string>{"c", "b", "a", "noval", "stopped", "stopped2", "stopped_early", "pending", "failed"}));
  EXPECT_EQ(order(rank_results(rs, "bleu", "max")),
            (std::vector<std::string>{"c", "b", "a", "noval", "stopped", "stopped_early", "stopped2", "pending", "failed"}));
}

// Each score ranks by its own value: chrF and BLEU (validation and evaluation) order these trials differently.
TEST(SweepResults, ChrfMetricsRankByChrfNotBleu) {
  std::vector<TrialResult> rs = {make("x", TrialStatus::ok, 9.0), make("y", TrialStatus::ok, 9.0),
                                 make("z", TrialStatus::ok, 9.0)};
  const double bleu[] = {30, 20, 10}, chrf[] = {50, 70, 60};
  for (size_t i = 0; i < rs.size(); ++i) {
    rs[i].valid_bleu = rs[i].bleu = bleu[i];
    rs[i].valid_chrf = rs[i].chrf = chrf[i];
  }
  for (const char* m : {"valid_bleu", "bleu"})
    EXPECT_EQ(order(rank_results(rs, m, "max")), (std::vector<std::string>{"x", "y", "z"})) << m;
  for (const char* m : {"valid_chrf", "chrf"})
    EXPECT_EQ(order(rank_results(rs, m, "max")), (std::vector<std::string>{"y", "z", "x"})) << m;
}

TEST(SweepResults, CsvIsPreciseMarkdownIsRounded) {
  TrialResult bad = make("bad", TrialStatus::failed, std::nullopt);
  bad.error = "invalid config: model.attention: \"nonsense\", not registered\nsecond line";
  const std::vector<TrialResult> rs = {make("good", TrialStatus::ok, 9.87654321), bad};
  const std::string csv = to_csv(make_table(rs, {"optim.lr"}, false, true));
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "rank,trial,optim.lr,valid_ppl,tokens_per_s,wall_s,steps,status,error");
  EXPECT_NE(csv.find("1,good,0.00123456789,9.87654321,1234.6,65.250,20,ok,\n"), std::string::npos) << csv;
  // Quotes doubled, the cell quoted because of the comma, quote and newline.
  EXPECT_NE(csv.find("2,bad,0.00123456789,,,65.250,,failed,\"invalid config: model.attention: \"\"nonsense\"\", not "
                     "registered\nsecond line\"\n"),
            std::string::npos)
      << csv;
  const std::string md = to_markdown(make_table(rs, {"optim.lr"}, true, false));
  EXPECT_NE(md.find("| rank | trial | optim.lr | valid_ppl | bleu | tokens_per_s | wall_s | steps | status | error |\n"
                    "|---|---|---|---|---|---|---|---|---|---|\n"
                    "| 1 | good | 0.001235 | 9.877 |  | 1235 | 0:01:05 | 20 | ok |  |\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| failed | invalid config: model.attention: \"nonsense\", not registered |"), std::string::npos) << md;
  const auto j = results_json(rs, "out");
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["rank"], 1);
  EXPECT_EQ(j[0]["run_dir"], "out/trials/good");
  EXPECT_EQ(j[1]["valid_ppl"], nullptr);
}

// A value with a line break or a '|' (a path in a grid) stays on its row of the markdown table.
TEST(SweepResults, MarkdownCellsKeepTheirRow) {
  TrialResult r = make("odd", TrialStatus::ok, 2.0);
  r.varied = {{"data.train_src", {"'/x\ny|z.src'", "/x\ny|z.src"}}};
  const std::string md = to_markdown(make_table({r}, {"data.train_src"}, false, false));
  EXPECT_NE(md.find("| 1 | odd | /x y\\|z.src | 2.000 |"), std::string::npos) << md;
  EXPECT_EQ(std::count(md.begin(), md.end(), '\n'), 3) << md;  // header, rule, one row
}

TEST(SweepResults, ResultFileRoundTrips) {
  const std::string dir = testing::fresh_dir("sweep_result");
  TrialResult r = make("x", TrialStatus::ok, 3.25, 17.5);
  r.varied.push_back({"model.attention", {"'dot'", "dot"}});
  r.attempts = 2, r.stop_reason = "reached train.max_steps = 20", r.resumed_from = "ckpt-10.h5";
  EXPECT_FALSE(read_result(dir).has_value());
  write_result(dir, r);
  const auto back = read_result(dir);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->name, "x");
  EXPECT_EQ(back->status, TrialStatus::ok);
  EXPECT_EQ(back->valid_ppl, 3.25);
  EXPECT_EQ(back->bleu, 17.5);
  EXPECT_EQ(back->sets, r.sets);
  EXPECT_EQ(back->attempts, 2);
  EXPECT_EQ(back->resumed_from, "ckpt-10.h5");
  ASSERT_EQ(back->varied.size(), 2u);
  for (const auto& a : back->varied) {
    if (a.key == "model.attention") {
      EXPECT_EQ(a.value.yaml, "'dot'");
    }
  }
  std::ofstream(dir + "/result.json") << "{\"name\": \"x\", \"status\": \"running\"";
  EXPECT_THROW(read_result(dir), Error);
  std::filesystem::remove_all(dir);
}

TEST(SweepResults, ReadsCurvesSummariesAndTails) {
  const std::string dir = testing::fresh_dir("sweep_logs");
  std::ofstream(dir + "/metrics.jsonl") << R"({"type":"train","step":5,"tokens_per_s":100.0}
{"type":"valid","step":10,"valid_ppl":30.5}
{"type":"train","step":15,"tokens_per_s":300.0}
{"type":"valid","step":20,"valid_ppl":12.25}
{"type":"valid","step":30,"valid_ppl":14.0}
{"type":"valid","step":40,"va)";  // a line cut by a kill
  EXPECT_EQ(valid_curve(dir + "/metrics.jsonl"),
            (std::vector<std::pair<int64_t, double>>{{10, 30.5}, {20, 12.25}, {30, 14.0}}));
  EXPECT_EQ(best_valid_ppl(dir + "/metrics.jsonl"), 12.25);
  EXPECT_DOUBLE_EQ(mean_train_tokens_per_s(dir + "/metrics.jsonl"), 200.0);
  EXPECT_FALSE(best_valid_ppl(dir + "/missing.jsonl").has_value());

  std::ofstream(dir + "/train.log") << "luong 0.1.0: 1 process(es)\n"
                                    << "{\"steps\": 5, \"stop_reason\": \"interrupted (checkpoint saved)\"}\n"
                                    << "step 10 loss 3.0\r\033[K{\"steps\": 20, \"stop_reason\": \"reached\"}\n"
                                    << "{\"other\": 1}\n\n   \n";
  const auto j = last_json_line(dir + "/train.log", "stop_reason");
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ((*j)["steps"], 20);
  EXPECT_FALSE(last_json_line(dir + "/train.log", "bleu").has_value());
  EXPECT_EQ(log_tail(dir + "/train.log", 2), "{\"steps\": 20, \"stop_reason\": \"reached\"}\n{\"other\": 1}");
  std::filesystem::remove_all(dir);
}

TEST(SweepPlot, NiceTicksCoverTheRange) {
  EXPECT_EQ(nice_ticks(0, 100, 5), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  EXPECT_EQ(nice_ticks(3.2, 9.7, 6), (std::vector<double>{2, 4, 6, 8, 10}));  // 6.5 / 6 rounds up to steps of 2
  EXPECT_EQ(nice_ticks(3.2, 9.7, 10), (std::vector<double>{3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(nice_ticks(0, 1, 4), (std::vector<double>{0, 0.5, 1}));
  const auto flat = nice_ticks(5, 5, 4);
  EXPECT_LT(flat.front(), 5);
  EXPECT_GT(flat.back(), 5);
  EXPECT_THROW(nice_ticks(2, 1, 4), Error);
}

TEST(SweepPlot, OnePolylinePerTrialWithLegendAndLogAxis) {
  const std::vector<PlotCurve> curves = {{"lr-0.1", {{100, 900.0}, {200, 50.0}, {300, 12.0}}},
                                         {"lr-<0.01>", {{100, 400.0}, {200, 30.0}}}};
  const std::string svg = valid_svg(curves, "sweep");
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  const std::regex polyline("<polyline[^>]*points=\"([^\"]*)\"");
  std::vector<std::string> point_lists;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), polyline); it != std::sregex_iterator(); ++it)
    point_lists.push_back((*it)[1]);
  ASSERT_EQ(point_lists.size(), 2u);
  EXPECT_EQ(std::count(point_lists[0].begin(), point_lists[0].end(), ','), 3);
  EXPECT_EQ(std::count(point_lists[1].begin(), point_lists[1].end(), ','), 2);
  EXPECT_NE(svg.find(">lr-0.1</text>"), std::string::npos);
  EXPECT_NE(svg.find(">lr-&lt;0.01&gt;</text>"), std::string::npos);  // escaped
  EXPECT_NE(svg.find("(log scale)"), std::string::npos);  // 12 .. 900 spans more than 20x
  EXPECT_NE(svg.find(">1000</text>"), std::string::npos);
  EXPECT_NE(svg.find(">10</text>"), std::string::npos);
  // Lower perplexity is drawn lower (larger y): the first curve's last point is below its first.
  const auto first_y = std::stod(point_lists[0].substr(point_lists[0].find(',') + 1));
  const auto last_y = std::stod(point_lists[0].substr(point_lists[0].rfind(',') + 1));
  EXPECT_GT(last_y, first_y);
  EXPECT_EQ(valid_svg({{"a", {{10, 5.0}, {20, 6.0}}}}, "t").find("(log scale)"), std::string::npos);
  EXPECT_NE(valid_svg({}, "t").find("no validation results yet"), std::string::npos);
}

// Scores (BLEU, chrF) keep a linear axis however wide they span, and their zeros (an early BLEU) are drawn;
// higher is drawn higher. Non-finite values are left out.
TEST(SweepPlot, ScoresUseALinearAxisAndDrawTheirZeros) {
  const PlotAxis bleu{"validation BLEU", false};
  const std::string svg = valid_svg({{"a", {{10, 0.0}, {20, 0.5}, {30, 30.0}, {40, std::nan("")}}}}, "t", bleu);
  EXPECT_EQ(svg.find("(log scale)"), std::string::npos);
  EXPECT_NE(svg.find(">validation BLEU</text>"), std::string::npos);
  const std::regex polyline("<polyline[^>]*points=\"([^\"]*)\"");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, polyline));
  const std::string pts = m[1];
  EXPECT_EQ(std::count(pts.begin(), pts.end(), ','), 3) << pts;  // 0, 0.5 and 30; the NaN left out
  const double first_y = std::stod(pts.substr(pts.find(',') + 1)), last_y = std::stod(pts.substr(pts.rfind(',') + 1));
  EXPECT_LT(last_y, first_y);  // 30 above 0
  // The same values as perplexities: the zero is not drawn (log axis, positives only).
  const std::string ppl = valid_svg({{"a", {{10, 0.0}, {20, 0.5}, {30, 30.0}}}}, "t");
  ASSERT_TRUE(std::regex_search(ppl, m, polyline));
  EXPECT_EQ(std::count(m[1].first, m[1].second, ','), 2);
  EXPECT_NE(ppl.find("(log scale)"), std::string::npos);
}

}  // namespace
}  // namespace luong::sweep
