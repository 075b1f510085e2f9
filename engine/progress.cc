#include "engine/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace clustersweep::engine {

std::string short_count(double value) {
  const char* suffix[] = {"", "k", "M", "G", "T", "P"};
  int i = 0;
  while (std::fabs(value) >= 1000 && i < 5) {
    value /= 1000;
    ++i;
  }
  if (i == 0) return fmt::format("{:.0f}", value);
  return fmt::format("{:.{}f}{}", value, value < 10 ? 2 : value < 100 ? 1 : 0, suffix[i]);
}

std::string clock_time(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--:--";
  const auto s = static_cast<long long>(std::llround(seconds));
  return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

ProgressMeter::ProgressMeter(std::uint64_t total, std::uint64_t done, jobs::ProgressMode mode,
                             double interval_s, std::FILE* out)
    : total_(total),
      start_done_(done),
      done_(done),
      mode_(mode),
      interval_s_(interval_s),
      out_(out),
      start_(std::chrono::steady_clock::now()) {
  if (mode_ == jobs::ProgressMode::automatic)
    mode_ = isatty(fileno(out_)) ? jobs::ProgressMode::bar : jobs::ProgressMode::lines;
}

double ProgressMeter::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

namespace {

struct Figures {
  double fraction, rate, eta;
};

Figures figures(std::uint64_t total, std::uint64_t start_done, std::uint64_t done, double elapsed) {
  const double fraction = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const double rate = elapsed > 0 ? static_cast<double>(done - start_done) / elapsed : 0;
  const double eta = rate > 0 ? static_cast<double>(total - done) / rate : -1;
  return {fraction, rate, eta};
}

}  // namespace

std::string ProgressMeter::bar_text(double elapsed) const {
  const Figures f = figures(total_, start_done_, done_, elapsed);
  constexpr int kWidth = 30;
  const int filled = std::clamp(static_cast<int>(f.fraction * kWidth), 0, kWidth);
  return fmt::format(
      "[{}{}] {:5.1f}%  {}/{} points  {} points/s  ETA {}", std::string(filled, '#'),
      std::string(kWidth - filled, '-'), 100 * f.fraction, short_count(static_cast<double>(done_)),
      short_count(static_cast<double>(total_)), short_count(f.rate), clock_time(f.eta));
}

std::string ProgressMeter::line_text(double elapsed) const {
  const Figures f = figures(total_, start_done_, done_, elapsed);
  return fmt::format("progress: {:.1f}% ({} of {} points), {:.0f} points/s, elapsed {}, ETA {}",
                     100 * f.fraction, done_, total_, f.rate, clock_time(elapsed),
                     clock_time(f.eta));
}

void ProgressMeter::tick() {
  if (mode_ == jobs::ProgressMode::none) return;
  const double now = elapsed_s();
  if (mode_ == jobs::ProgressMode::bar) {
    if (now - last_print_s_ < 0.2) return;
    fmt::print(out_, "\r{}", bar_text(now));
    std::fflush(out_);
    printed_bar_ = true;
  } else {
    if (now - last_print_s_ < interval_s_) return;
    if (last_print_s_ < 0 && now < interval_s_) return;  // nothing yet for short runs
    fmt::print(out_, "{}\n", line_text(now));
    std::fflush(out_);
  }
  last_print_s_ = now;
}

void ProgressMeter::finish() {
  if (mode_ == jobs::ProgressMode::none) return;
  const double now = elapsed_s();
  if (mode_ == jobs::ProgressMode::bar) {
    fmt::print(out_, "\r{}\n", bar_text(now));
  } else if (last_print_s_ >= 0) {
    fmt::print(out_, "{}\n", line_text(now));
  }
  std::fflush(out_);
}

}  // namespace clustersweep::engine
