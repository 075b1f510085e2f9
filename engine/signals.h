#pragma once
// SIGINT, SIGTERM and SIGUSR1 ask a run to stop: the handler only sets a flag that the scheduler
// polls between slices, so the run stops handing out work, lets its writes land and exits with
// kExitInterrupted (75). A second SIGINT (Ctrl-C twice) kills the process at once.
namespace clustersweep::engine {

class SignalGuard {
 public:
  SignalGuard();   // installs the handlers and clears the flag (one guard at a time)
  ~SignalGuard();  // restores the previous handlers
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

  static bool raised() noexcept;
  static int signal() noexcept;  // the first signal caught, 0 if none
};

}  // namespace clustersweep::engine
