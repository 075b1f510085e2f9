#include "slurm/options.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace clustersweep::slurm {
namespace {

std::string error_of(auto&& call) {
  try {
    call();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TimeLimit, ParsesEveryFormSbatchTakes) {
  EXPECT_EQ(parse_time_limit("90"), 90 * 60u);  // minutes
  EXPECT_EQ(parse_time_limit("1500"), 1500 * 60u);
  EXPECT_EQ(parse_time_limit("90:30"), 90 * 60u + 30);  // minutes:seconds
  EXPECT_EQ(parse_time_limit("00:01:00"), 60u);
  EXPECT_EQ(parse_time_limit("02:30:15"), 2 * 3600u + 30 * 60 + 15);
  EXPECT_EQ(parse_time_limit("100:00:00"), 100 * 3600u);
  EXPECT_EQ(parse_time_limit("0:5:0"), 300u);
  EXPECT_EQ(parse_time_limit("1-00"), 24 * 3600u);  // days-hours
  EXPECT_EQ(parse_time_limit("2-6"), 54 * 3600u);
  EXPECT_EQ(parse_time_limit("1-12:30"), 36 * 3600u + 30 * 60);  // days-hours:minutes
  EXPECT_EQ(parse_time_limit("1-12:00:00"), 36 * 3600u);
}

TEST(TimeLimit, FormatsBackToWhatSlurmReads) {
  EXPECT_EQ(format_time_limit(60), "00:01:00");
  EXPECT_EQ(format_time_limit(2 * 3600 + 30 * 60 + 15), "02:30:15");
  EXPECT_EQ(format_time_limit(36 * 3600), "1-12:00:00");
  for (const std::uint64_t s : {1ull, 59ull, 3599ull, 86399ull, 86400ull, 200000ull})
    EXPECT_EQ(parse_time_limit(format_time_limit(s)), s);
  EXPECT_EQ(format_time_limit(parse_time_limit("90")), "01:30:00");
  EXPECT_EQ(format_time_limit(parse_time_limit("1-00")), "1-00:00:00");
}

TEST(TimeLimit, SqueueDurationsReadTheSameWay) {
  EXPECT_EQ(slurm_duration("5:07"), 307u);
  EXPECT_EQ(slurm_duration("1-02:03:04"), 93784u);
  EXPECT_FALSE(slurm_duration("UNLIMITED"));
  EXPECT_FALSE(slurm_duration("INVALID"));
  EXPECT_EQ(slurm_duration("0"), 0u);
}

TEST(TimeLimit, RefusesMalformedLimitsNamingTheFlag) {
  const std::string expected_form =
      "--time: expected one of sbatch's forms MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS "
      "(for example 90, 02:30:00 or 1-12), with minutes and seconds below 60 and hours below 24 "
      "after a day count, got ";
  for (const char* bad :
       {"2h", "", "01:00:00:00", "1-", "-01:00:00", "aa:bb:cc", "01:000:00", "1-100:00:00",
        "01:00:", " 01:00:00", "01:75:00", "1-24:00:00", "90:60", "1-1:60", "UNLIMITED", "1.5"})
    EXPECT_EQ(error_of([&] { parse_time_limit(bad); }), expected_form + "'" + bad + "'") << bad;
  for (const char* none : {"0", "00:00:00", "0-0"})
    EXPECT_EQ(error_of([&] { parse_time_limit(none); }),
              std::string("--time: a job of clustersweep needs a time limit; got '") + none +
                  "' (to Slurm, no limit at all)");
}

TEST(Counts, AcceptOnlyPositiveWholeNumbers) {
  EXPECT_EQ(parse_positive("--nodes", "4"), 4u);
  EXPECT_EQ(parse_positive("--nodes", "1048576"), 1048576u);
  for (const char* bad : {"0", "-2", "2.5", "four", "", "4 ", "99999999999999999999"})
    EXPECT_EQ(error_of([&] { parse_positive("--nodes", bad); }),
              std::string("--nodes: expected a whole number from 1 to 1048576, got '") + bad + "'");
  EXPECT_EQ(error_of([] { parse_positive("--segments", "2000", 1000); }),
            "--segments: expected a whole number from 1 to 1000, got '2000'");
}

TEST(Array, ReadsTasksAndThrottle) {
  EXPECT_EQ(parse_array("16").tasks, 16u);
  EXPECT_EQ(parse_array("16").at_once, 0u);
  EXPECT_EQ(parse_array("16%4").tasks, 16u);
  EXPECT_EQ(parse_array("16%4").at_once, 4u);
  for (const char* bad : {"0", "16%", "%4", "16%0", "a", "4-8", "16%4%2"})
    EXPECT_EQ(
        error_of([&] { parse_array(bad); }),
        std::string("--array: expected K or K%T, K shards of which at most T run at once (for "
                    "example 16%4), got '") +
            bad + "'");
}

TEST(Words, SplitLikeAShell) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split_words("--then", "pareto --objectives a,b --svg front.svg"),
            (V{"pareto", "--objectives", "a,b", "--svg", "front.svg"}));
  EXPECT_EQ(split_words("--then", "  top   --by 'step time'  \"x y\" a\\ b "),
            (V{"top", "--by", "step time", "x y", "a b"}));
  EXPECT_EQ(split_words("--then", R"(a "q\"uote" '')"), (V{"a", "q\"uote", ""}));
  EXPECT_EQ(error_of([] { split_words("--then", "pareto 'open"); }),
            "--then: unterminated single quote in 'pareto 'open'");
  EXPECT_EQ(error_of([] { split_words("--then", "   "); }),
            "--then: expected a command, got '   '");
}

TEST(Words, QuoteForTheShell) {
  EXPECT_EQ(shell_quote("/scratch/run-1/results.h5"), "/scratch/run-1/results.h5");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("$HOME"), "'$HOME'");
}

}  // namespace
}  // namespace clustersweep::slurm
