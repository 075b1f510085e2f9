// Renders the SVG charts and the HTML report in headless Chromium and checks the screenshots
// actually show something: a plot that does not draw is a bug, not a style issue.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/front.h"
#include "analysis/output.h"
#include "analysis/report.h"
#include "analysis/sensitivity.h"
#include "analysis/svg.h"
#include "base/files.h"
#include "tests/analysis/sweep_fixture.h"

namespace clustersweep::analysis {
namespace {

namespace fs = std::filesystem;

std::string run(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  char buffer[512];
  while (fgets(buffer, sizeof buffer, pipe)) out += buffer;
  pclose(pipe);
  return out;
}

std::string fmt_profile() { return "clustersweep-chromium-" + std::to_string(getpid()); }

struct Stats {
  int width = 0, height = 0;
  double ink = 0;
  int colours = 0;
};

// Screenshots `file` with headless Chromium; empty stats when it produced no PNG.
Stats screenshot(const fs::path& file, const fs::path& png) {
  const fs::path profile = fs::temp_directory_path() / fmt_profile();
  const std::string command =
      "chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
      "--disable-background-networking --disable-component-update --disable-sync --hide-scrollbars "
      "--user-data-dir=" +
      profile.string() + " --screenshot=" + png.string() + " --window-size=1000,700 file://" +
      file.string() + " >/dev/null 2>&1";
  std::system(command.c_str());
  fs::remove_all(profile);
  Stats s;
  if (!fs::exists(png)) return s;
  std::istringstream in(run(
      "/usr/bin/python3 " CLUSTERSWEEP_SOURCE_DIR "/tests/analysis/png_stats.py " + png.string()));
  in >> s.width >> s.height >> s.ink >> s.colours;
  return s;
}

class RenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("command -v chromium >/dev/null 2>&1") != 0)
      GTEST_SKIP() << "chromium is not installed";
    dir = fs::temp_directory_path() / ("clustersweep-render-" + std::to_string(getpid()));
    fs::create_directories(dir);
  }
  void TearDown() override {
    if (!dir.empty() && !std::getenv("KEEP_RENDER")) fs::remove_all(dir);
  }
  fs::path dir;
  MemoryTable table = testing::sweep_table();
  Dataset data{table, stored_pricing(table)};
};

TEST_F(RenderTest, ParetoSvgDraws) {
  FrontRequest request;
  request.objectives = {{"time_to_train_s", false}, {"energy_kwh", false}};
  request.group_by = "gpu";
  request.scan.feasible_only = true;
  const auto result = compute_fronts(data, request);
  const std::string svg = render_svg(front_plot(data, request, result));
  // Axes in the readable unit of their range, and a log scale where values span decades.
  EXPECT_NE(svg.find(">time to train (days) — log scale<"), std::string::npos);
  EXPECT_NE(svg.find(">energy (MWh)<"), std::string::npos);
  EXPECT_NE(svg.find("gpu=H100-SXM5-80GB"), std::string::npos);
  write_file_atomically((dir / "pareto.svg").string(), svg, "test");
  const Stats s = screenshot(dir / "pareto.svg", dir / "pareto.png");
  ASSERT_EQ(s.width, 1000) << "no screenshot";
  EXPECT_GT(s.ink, 0.01);   // axes, grid, text and points
  EXPECT_LT(s.ink, 0.6);    // not a filled-in block
  EXPECT_GT(s.colours, 5);  // grey points and coloured fronts
}

TEST_F(RenderTest, SensitivityChartDraws) {
  const auto s = sensitivity(data, "time_to_train_s", {});
  write_file_atomically((dir / "bars.svg").string(), render_svg(sensitivity_chart(s)), "test");
  const Stats stats = screenshot(dir / "bars.svg", dir / "bars.png");
  ASSERT_EQ(stats.width, 1000) << "no screenshot";
  EXPECT_GT(stats.ink, 0.01);
}

TEST_F(RenderTest, ReportIsSelfContainedAndDraws) {
  ReportOptions options;
  const std::string html = render_report(data, options);
  // Opens offline: nothing is fetched from anywhere.
  for (const char* external : {"src=", "href=", "@import", "url(", "<script"})
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  for (const char* section :
       {"<h2>Summary</h2>", "<h2>Pareto fronts</h2>", "<h2>Best designs by time to train</h2>",
        "<h2>Energy, cost and carbon</h2>", "<h2>Sensitivity of time to train</h2>"})
    EXPECT_NE(html.find(section), std::string::npos) << section;
  EXPECT_EQ(std::count(html.begin(), html.end(), '\n') > 100, true);
  write_file_atomically((dir / "index.html").string(), html, "test");
  const Stats s = screenshot(dir / "index.html", dir / "report.png");
  ASSERT_EQ(s.width, 1000) << "no screenshot";
  EXPECT_GT(s.ink, 0.02);
}

}  // namespace
}  // namespace clustersweep::analysis
