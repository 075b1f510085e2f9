#pragma once
// Rank 0's progress report on standard error: a live bar with points/s and ETA on a terminal, a
// plain line every few seconds otherwise (batch logs), or nothing.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "jobs/job.h"

namespace clustersweep::engine {

class ProgressMeter {
 public:
  // `total` points of which `done` were finished by earlier runs (a resume).
  ProgressMeter(std::uint64_t total, std::uint64_t done, jobs::ProgressMode mode, double interval_s,
                std::FILE* out = stderr);
  void add(std::uint64_t points) noexcept { done_ += points; }
  void tick();    // prints when due
  void finish();  // the last report (and the bar's newline)

  // "[#####-----]  52.3%  5.23M/10.0M points  2.10M points/s  ETA 0:00:02", width in characters.
  std::string bar_text(double elapsed_s) const;
  std::string line_text(double elapsed_s) const;

 private:
  double elapsed_s() const;
  std::uint64_t total_;
  std::uint64_t start_done_;
  std::uint64_t done_;
  jobs::ProgressMode mode_;
  double interval_s_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_;
  double last_print_s_ = -1e9;
  bool printed_bar_ = false;
};

// 1234567 -> "1.23M"; 999 -> "999".
std::string short_count(double value);
// Seconds as "H:MM:SS".
std::string clock_time(double seconds);

}  // namespace clustersweep::engine
