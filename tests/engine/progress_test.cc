#include "engine/progress.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace clustersweep::engine {
namespace {

TEST(Progress, ShortCountsAndClock) {
  EXPECT_EQ(short_count(999), "999");
  EXPECT_EQ(short_count(1234567), "1.23M");
  EXPECT_EQ(short_count(10.0e6), "10.0M");
  EXPECT_EQ(short_count(250e3), "250k");
  EXPECT_EQ(clock_time(3725), "1:02:05");
  EXPECT_EQ(clock_time(-1), "--:--:--");
}

TEST(Progress, BarAndLineShowPointsRateAndEta) {
  std::FILE* sink = std::tmpfile();
  ProgressMeter meter(10'000'000, 2'000'000, jobs::ProgressMode::lines, 5, sink);
  meter.add(3'000'000);
  EXPECT_EQ(
      meter.bar_text(2.0),
      "[###############---------------]  50.0%  5.00M/10.0M points  1.50M points/s  ETA 0:00:03");
  EXPECT_EQ(meter.line_text(2.0),
            "progress: 50.0% (5000000 of 10000000 points), 1500000 points/s, elapsed 0:00:02, ETA "
            "0:00:03");
  std::fclose(sink);
}

}  // namespace
}  // namespace clustersweep::engine
