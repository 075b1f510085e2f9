#pragma once
// The runtime settings of the software stack (estimator/stack.h) as named settings: one table
// that the flags, the spec's [plan] keys, the store's columns and `estimate --json` all read, so a
// setting's name, its values and its default live in one place.
#include <span>
#include <string_view>

#include "estimator/stack.h"

namespace clustersweep::spaces {

struct StackSetting {
  const char* name;  // snake_case: the setting, the spec key and the store column
  const char* help;  // one line for --help and docs
  int count;         // values, indexed 0..count-1 (booleans: 0 = false, 1 = true)
  bool boolean;
  int (*get)(const estimator::Stack&) noexcept;
  void (*set)(estimator::Stack&, int) noexcept;
  const char* (*value_name)(int) noexcept;  // "partial"; "off"/"on" for booleans
  int all_from = 0;  // the first value a spec's "all" sweeps (framework: not "any")
};

// The settings, in the order of their spec axes and store columns (spaces/space.h).
inline constexpr int kNumStackSettings = 14;
std::span<const StackSetting> stack_settings() noexcept;
// nullptr when `name` is not one of them.
const StackSetting* find_stack_setting(std::string_view name) noexcept;
// The value index of `text` (a value name; for booleans also 0/1, yes/no, on/off); -1 if none.
int parse_stack_value(const StackSetting& setting, std::string_view text) noexcept;
// "none, partial or full": the valid values, for error messages.
std::string stack_values(const StackSetting& setting);

}  // namespace clustersweep::spaces
