// The number layer: what reads as a number, and the exact message for what does not.
#include "base/numbers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "base/error.h"

namespace clustersweep {
namespace {

constexpr std::uint64_t kMaxU64 = std::numeric_limits<std::uint64_t>::max();
constexpr std::int64_t kMinI64 = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMaxI64 = std::numeric_limits<std::int64_t>::max();

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(WholeNumbers, ReadTheWholeTextInRange) {
  EXPECT_EQ(parse_uint64("--ranks", "1", 1, 4294967295), 1u);
  EXPECT_EQ(parse_uint64("--ranks", "4294967295", 1, 4294967295), 4294967295u);
  EXPECT_EQ(parse_uint64("--n", "007"), 7u);
  EXPECT_EQ(parse_uint64("--n", "0"), 0u);
  // 2^63 needs the unsigned form, 2^64 - 1 is its largest.
  EXPECT_EQ(parse_uint64("--n", "9223372036854775808"), std::uint64_t{1} << 63);
  EXPECT_EQ(parse_uint64("--n", "18446744073709551615"), kMaxU64);
  EXPECT_EQ(parse_int64("--n", "-9223372036854775808"), kMinI64);
  EXPECT_EQ(parse_int64("--n", "9223372036854775807"), kMaxI64);
  EXPECT_EQ(parse_int64("--n", "-0"), 0);
  EXPECT_EQ(parse_int64("--n", "-5", -10, 10), -5);
}

TEST(WholeNumbers, QuoteTheTextOfAnythingElse) {
  EXPECT_EQ(error_of([] { parse_uint64("--ranks", "-1", 1, 4294967295); }),
            "--ranks: expected a whole number from 1 to 4294967295, got '-1'");
  EXPECT_EQ(error_of([] { parse_uint64("--ranks", "0", 1, 4294967295); }),
            "--ranks: expected a whole number from 1 to 4294967295, got '0'");
  EXPECT_EQ(error_of([] { parse_uint64("--ranks", "4294967296", 1, 4294967295); }),
            "--ranks: expected a whole number from 1 to 4294967295, got '4294967296'");
  const std::string all = "--n: expected a whole number from 0 to 18446744073709551615, got '";
  for (const char* bad : {"18446744073709551616", "-0", "+1", " 1", "1 ", "1e3", "1.0", "1.", "",
                          "0x10", "one", "1,000", "-", "9223372036854775808x"})
    EXPECT_EQ(error_of([&] { parse_uint64("--n", bad); }), all + bad + "'") << bad;
  const std::string signed_all =
      "--n: expected a whole number from -9223372036854775808 to 9223372036854775807, got '";
  for (const char* bad : {"9223372036854775808", "-9223372036854775809", "+1", " -1", "--1", "1e3"})
    EXPECT_EQ(error_of([&] { parse_int64("--n", bad); }), signed_all + bad + "'") << bad;
  EXPECT_EQ(error_of([] { parse_int64("tp", "-1", 1, kMaxInt); }),
            "tp: expected a whole number from 1 to 2147483647, got '-1'");
}

TEST(WholeNumbers, ReadWithoutANameReturnsTheProblem) {
  std::uint64_t value = 42;
  EXPECT_EQ(read_uint64("12", 0, 100, value), "");
  EXPECT_EQ(value, 12u);
  EXPECT_EQ(read_uint64("101", 0, 100, value), "expected a whole number from 0 to 100, got '101'");
  EXPECT_EQ(value, 12u);  // left alone on a problem
  std::int64_t signed_value = 0;
  EXPECT_EQ(read_int64("2147483648", 0, kMaxInt, signed_value),
            "expected a whole number from 0 to 2147483647, got '2147483648'");
  EXPECT_EQ(whole_range_text(std::int64_t{1}, kMaxInt), "a whole number from 1 to 2147483647");
}

TEST(RealNumbers, ReadDecimalTextInTheDomain) {
  const RealDomain any;
  EXPECT_EQ(parse_real("--x", "2.5", any), 2.5);
  EXPECT_EQ(parse_real("--x", "-2.5", any), -2.5);
  EXPECT_EQ(parse_real("--x", "1e-3", any), 1e-3);
  EXPECT_EQ(parse_real("--x", "1E+3", any), 1000);
  EXPECT_EQ(parse_real("--x", ".5", any), 0.5);
  EXPECT_EQ(parse_real("--x", "5.", any), 5);
  EXPECT_EQ(parse_real("--x", "1.7976931348623157e308", any), 1.7976931348623157e308);
  // -0 is 0, and reads as +0 (no "-0" in what is printed back).
  const double zero = parse_real("--x", "-0", RealDomain::at_least(0));
  EXPECT_EQ(zero, 0);
  EXPECT_FALSE(std::signbit(zero));
  EXPECT_EQ(parse_real("--x", "0", RealDomain::between(0, 600)), 0);
  EXPECT_EQ(parse_real("--x", "600", RealDomain::between(0, 600)), 600);
  EXPECT_EQ(parse_real("--x", "inf", RealDomain::above(0).or_infinity()),
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(parse_real("--x", "Infinity", RealDomain::above(0).or_infinity()),
            std::numeric_limits<double>::infinity());
}

TEST(RealNumbers, QuoteTheTextOfAnythingElse) {
  const auto error = [](const char* text, const RealDomain& domain) {
    return error_of([&] { parse_real("--x", text, domain); });
  };
  for (const char* bad : {"inf", "-inf", "nan", "NaN", "-nan", "1e400", "-1e400", "1e-400", "+1",
                          " 1", "1 ", "0x10", "1e", "", ".", "1,5", "2s", "1..2"})
    EXPECT_EQ(error(bad, RealDomain{}),
              std::string("--x: expected a finite number, got '") + bad + "'")
        << bad;
  EXPECT_EQ(error("-1", RealDomain::at_least(0)), "--x: expected a finite number >= 0, got '-1'");
  EXPECT_EQ(error("inf", RealDomain::at_least(0)), "--x: expected a finite number >= 0, got 'inf'");
  EXPECT_EQ(error("0", RealDomain::above(0)), "--x: expected a finite number > 0, got '0'");
  EXPECT_EQ(error("-0", RealDomain::above(0)), "--x: expected a finite number > 0, got '-0'");
  EXPECT_EQ(error("0.5", RealDomain::at_least(1)), "--x: expected a finite number >= 1, got '0.5'");
  EXPECT_EQ(error("600.5", RealDomain::between(0, 600)),
            "--x: expected a number from 0 to 600, got '600.5'");
  EXPECT_EQ(error("inf", RealDomain::between(0, 600)),
            "--x: expected a number from 0 to 600, got 'inf'");
  EXPECT_EQ(error("nan", RealDomain::above(0).or_infinity()),
            "--x: expected a number > 0 or inf, got 'nan'");
  EXPECT_EQ(error("0", RealDomain::above(0).or_infinity()),
            "--x: expected a number > 0 or inf, got '0'");
  EXPECT_EQ(error("1", RealDomain{0, 1, true, true}),
            "--x: expected a number > 0 and < 1, got '1'");
  EXPECT_EQ(error("2", RealDomain{-std::numeric_limits<double>::infinity(), 1.5}),
            "--x: expected a finite number <= 1.5, got '2'");
}

TEST(RealNumbers, ReadWithoutANameLeavesTheValueOnAProblem) {
  double value = 7;
  EXPECT_EQ(read_real("nan", RealDomain{}, value), "expected a finite number, got 'nan'");
  EXPECT_EQ(value, 7);
  EXPECT_EQ(read_real("0.25", RealDomain::between(0, 1), value), "");
  EXPECT_EQ(value, 0.25);
}

}  // namespace
}  // namespace clustersweep
