#include "engine/signals.h"

#include <csignal>

namespace clustersweep::engine {

namespace {

volatile std::sig_atomic_t g_signal = 0;
struct sigaction g_previous[3];
constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGUSR1};

extern "C" void on_signal(int number) {
  if (g_signal != 0 && number == SIGINT) {
    // The second Ctrl-C: the user wants out now.
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
    return;
  }
  if (g_signal == 0) g_signal = number;
}

}  // namespace

SignalGuard::SignalGuard() {
  g_signal = 0;
  struct sigaction action = {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &action, &g_previous[i]);
}

SignalGuard::~SignalGuard() {
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &g_previous[i], nullptr);
}

bool SignalGuard::raised() noexcept { return g_signal != 0; }
int SignalGuard::signal() noexcept { return g_signal; }

}  // namespace clustersweep::engine
