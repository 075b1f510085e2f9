#include "spaces/expression.h"

#include <gtest/gtest.h>

namespace clustersweep::spaces {
namespace {

ExpressionNames names() {
  ExpressionNames n;
  n.names = {"tp", "pp", "gpu", "dp"};
  n.label_value = [](int variable, std::string_view label,
                     std::vector<std::string>& valid) -> std::optional<double> {
    if (variable != 2) return std::nullopt;
    valid = {"A100", "H100"};
    if (label == "A100") return 0;
    if (label == "H100") return 1;
    return std::nullopt;
  };
  return n;
}

double eval(const std::string& text, std::vector<double> vars = {8, 4, 1, 2}) {
  return Expression::compile(text, names()).evaluate(vars.data());
}

TEST(Expression, ArithmeticAndPrecedence) {
  EXPECT_EQ(eval("1 + 2 * 3"), 7);
  EXPECT_EQ(eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(eval("tp * pp"), 32);
  EXPECT_EQ(eval("tp / pp - 1"), 1);
  EXPECT_EQ(eval("-tp + 10"), 2);
  EXPECT_EQ(eval("tp % 3"), 2);
  EXPECT_EQ(eval("2 - 3 - 4"), -5);  // left-associative
  EXPECT_EQ(eval("64 / 4 / 2"), 8);
  EXPECT_EQ(eval("1.5e1"), 15);
}

TEST(Expression, ComparisonsAndLogic) {
  EXPECT_EQ(eval("tp * pp <= 32"), 1);
  EXPECT_EQ(eval("tp * pp < 32"), 0);
  EXPECT_EQ(eval("tp >= 8 and pp > 4"), 0);
  EXPECT_EQ(eval("tp >= 8 && pp > 4"), 0);
  EXPECT_EQ(eval("tp >= 8 or pp > 4"), 1);
  EXPECT_EQ(eval("tp > 8 || pp == 4"), 1);
  EXPECT_EQ(eval("not tp == 8"), 0);
  EXPECT_EQ(eval("!(tp != 8)"), 1);
  EXPECT_EQ(eval("tp == 1 or tp == 8 and pp == 1"), 0);  // and binds tighter than or
  EXPECT_EQ(eval("tp == 8 or tp == 1 and pp == 1"), 1);
}

TEST(Expression, Labels) {
  EXPECT_EQ(eval("gpu == \"H100\""), 1);
  EXPECT_EQ(eval("gpu != 'H100'"), 0);
  EXPECT_EQ(eval("\"A100\" == gpu or dp >= 2"), 1);
  EXPECT_EQ(eval("gpu == \"A100\"", {8, 4, 0, 2}), 1);
}

TEST(Expression, VariablesRead) {
  const auto x = Expression::compile("tp * pp <= 64 and gpu == \"A100\"", names());
  EXPECT_EQ(x.variables(), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(x.text(), "tp * pp <= 64 and gpu == \"A100\"");
}

std::string error(const std::string& text) {
  try {
    Expression::compile(text, names());
  } catch (const ExpressionError& e) {
    return std::to_string(e.offset()) + ": " + e.what();
  }
  return "(no error)";
}

TEST(Expression, Errors) {
  EXPECT_EQ(error(""), "0: empty expression");
  EXPECT_EQ(error("tq < 4"), "0: unknown name 'tq'; did you mean 'tp'?");
  EXPECT_EQ(error("tp < "), "5: expected a number, a name or '(', got end of expression");
  EXPECT_EQ(error("(tp < 4"), "7: expected ')', got end of expression");
  EXPECT_EQ(error("tp pp"), "3: expected an operator, got 'pp'");
  EXPECT_EQ(error("1 < tp < 8"), "7: comparisons do not chain; join them with 'and'");
  EXPECT_EQ(error("tp # 2"), "3: unexpected character '#'");
  EXPECT_EQ(error("gpu == \"B200\""),
            "7: \"B200\" is not a value of 'gpu'; values are: A100, H100");
  EXPECT_EQ(error("tp == \"x\""), "6: 'tp' holds numbers, not labels like \"x\"");
  EXPECT_EQ(error("\"x\" + 1"),
            "0: a string like \"x\" can only be compared with == or != to a label axis such as gpu "
            "or model");
  EXPECT_EQ(error("gpu == \"H100"), "7: unterminated string");
}

}  // namespace
}  // namespace clustersweep::spaces
