#include "base/expression.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace clustersweep {
namespace {

ExpressionNames names() {
  ExpressionNames n;
  n.names = {{"tp", {}},
             {"pp", {}},
             {"gpu", {"A100", "H100"}},
             {"dp", {}},
             {"best_gpu", {"A100", "H100"}},
             {"recompute", {"none", "full"}},
             {"time", {}}};
  return n;
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// tp = 8, pp = 4, gpu = H100, dp = 2, best_gpu = A100, recompute = full, time = NaN.
double eval(const std::string& text, std::vector<double> values = {8, 4, 1, 2, 0, 1, kNaN}) {
  const Expression x = Expression::compile(text, names());
  const double one = x.evaluate(values.data());
  // The block form gives the same on every row.
  std::vector<std::vector<double>> columns;
  std::vector<const double*> pointers;
  for (double v : values) columns.emplace_back(Expression::kBlockRows + 3, v);
  for (const auto& c : columns) pointers.push_back(c.data());
  std::vector<double> out(Expression::kBlockRows + 3), stack(x.stack_size());
  x.evaluate(pointers.data(), out.size(), out.data(), stack.data());
  for (double v : out) EXPECT_TRUE(v == one || (std::isnan(v) && std::isnan(one))) << text;
  return one;
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
  EXPECT_EQ(eval("1.5e1 + .5"), 15.5);
  EXPECT_EQ(eval("(tp > 1) + (pp > 1) + (dp > 1)"), 3);  // conditions count as 1 or 0
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
  EXPECT_EQ(eval("true and not false"), 1);
}

TEST(Expression, NaNIsFalse) {
  EXPECT_EQ(eval("time > 0"), 0);
  EXPECT_EQ(eval("time <= 0"), 0);
  EXPECT_EQ(eval("time and true"), 0);
  EXPECT_EQ(eval("not time"), 1);
  const Expression x = Expression::compile("time", names());
  const std::vector<double> v = {8, 4, 1, 2, 0, 1, kNaN};
  EXPECT_FALSE(x.holds(v.data()));
}

TEST(Expression, Labels) {
  EXPECT_EQ(eval("gpu == \"H100\""), 1);
  EXPECT_EQ(eval("gpu != 'H100'"), 0);
  EXPECT_EQ(eval("'A100' == gpu or dp >= 2"), 1);
  EXPECT_EQ(eval("gpu == 'A100'", {8, 4, 0, 2, 0, 1, 0}), 1);
  EXPECT_EQ(eval("gpu == best_gpu"), 0);
  EXPECT_EQ(eval("recompute == 'full' and gpu != best_gpu"), 1);
}

TEST(Expression, NamesRead) {
  const auto x = Expression::compile("tp * pp <= 64 and gpu == 'A100' and tp > 1", names());
  EXPECT_EQ(x.names_read(), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(x.text(), "tp * pp <= 64 and gpu == 'A100' and tp > 1");
}

// "column: message" then the caret lines.
std::string error(const std::string& text, ExpressionNames n = names()) {
  try {
    Expression::compile(text, n);
  } catch (const ExpressionError& e) {
    return std::to_string(e.column()) + ": " + e.what() + e.caret(text);
  }
  return "(no error)";
}

TEST(Expression, ErrorsNameTheColumnAndPutACaretUnderTheCulprit) {
  EXPECT_EQ(error("tpp * pp <= 64"),
            "1: unknown name 'tpp'; did you mean 'tp'?\n"
            "    tpp * pp <= 64\n"
            "    ^~~");
  EXPECT_EQ(error("tp <= 8 and gpu == 'B200'"),
            "20: 'B200' is not a value of 'gpu'; did you mean 'A100'?\n"
            "    tp <= 8 and gpu == 'B200'\n"
            "                       ^~~~~~");
  EXPECT_EQ(error("tp < "),
            "6: expected a number, a name or '(', got the end of the expression\n"
            "    tp < \n"
            "         ^");
  EXPECT_EQ(error("gpu < 'A100'"),
            "5: '<' cannot order the labels of 'gpu'; use == or !=\n"
            "    gpu < 'A100'\n"
            "        ^");
  // A long expression shows a window of it around the culprit.
  const std::string pad(80, ' ');
  EXPECT_EQ(error("tp <= 8" + pad + "and tpp > 1" + pad + "and pp > 1"),
            "92: unknown name 'tpp'; did you mean 'tp'?\n"
            "    ..." +
                std::string(46, ' ') + "and tpp > 1" + std::string(36, ' ') + "...\n" +
                std::string(4 + 3 + 50, ' ') + "^~~");
}

// Only the first line: column and message.
std::string message(const std::string& text, ExpressionNames n = names()) {
  const std::string all = error(text, std::move(n));
  return all.substr(0, all.find('\n'));
}

TEST(Expression, Errors) {
  EXPECT_EQ(message(""), "1: empty expression; expected a condition such as tp * pp <= 64");
  EXPECT_EQ(message("zzzzzz < 4"),
            "1: unknown name 'zzzzzz'; names are: tp, pp, gpu, dp, best_gpu, recompute, time");
  EXPECT_EQ(message("(tp < 4"),
            "8: expected ')' to close the '(' at column 1, got the end of the expression");
  EXPECT_EQ(message("tp pp"), "4: expected an operator or the end of the expression, got 'pp'");
  EXPECT_EQ(message("1 < tp < 8"), "8: comparisons do not chain; join them with 'and'");
  EXPECT_EQ(message("tp # 2"), "4: unexpected character '#'");
  EXPECT_EQ(message("tp = 2"), "4: '=' is not a comparison; use '=='");
  EXPECT_EQ(message("tp == 3x"), "8: unexpected 'x' after the number 3");
  EXPECT_EQ(message("tp == 1e999"), "7: 1e999 is out of range");
  EXPECT_EQ(message("gpu == 'B'"), "8: 'B' is not a value of 'gpu'; values are: A100, H100");
  EXPECT_EQ(message("tp == 'x'"),
            "7: the string 'x' can only be compared with == or != to a label name such as gpu");
  EXPECT_EQ(message("'x' + 1"),
            "1: the string 'x' can only be compared with == or != to a label name such as gpu");
  EXPECT_EQ(message("'x' == 'x'"),
            "1: the string 'x' can only be compared with == or != to a label name such as gpu");
  EXPECT_EQ(message("gpu == 1"),
            "1: 'gpu' holds labels; compare it with a quoted label, e.g. gpu == 'A100'");
  EXPECT_EQ(message("gpu and tp > 1"),
            "1: 'gpu' holds labels; compare it with a quoted label, e.g. gpu == 'A100'");
  EXPECT_EQ(message("gpu + 1 > 1"),
            "1: 'gpu' holds labels; compare it with a quoted label, e.g. gpu == 'A100'");
  EXPECT_EQ(message("gpu == recompute"), "5: 'gpu' and 'recompute' have different labels");
  EXPECT_EQ(message("gpu == 'H100"), "8: unterminated string; add the closing '");
  EXPECT_EQ(message("tp / 0 > 1"), "6: division by zero");
  EXPECT_EQ(message("tp % (0) > 1"), "6: division by zero");
  ExpressionNames columns = names();
  columns.noun = "column";
  EXPECT_EQ(message("tq > 1", columns), "1: unknown column 'tq'; did you mean 'tp'?");
  EXPECT_EQ(message("tp > ", columns),
            "6: expected a number, a column or '(', got the end of the expression");
}

TEST(Expression, DeepNestingIsAnErrorNotACrash) {
  for (const std::string open : {"(", "!", "-", "not "}) {
    std::string text;
    for (int i = 0; i < 100000; ++i) text += open;
    text += "tp";
    const std::string m = message(text);
    EXPECT_NE(m.find("nested more than 64 deep; simplify the expression"), std::string::npos)
        << open << ": " << m;
  }
  // Exactly at the limit compiles and evaluates.
  std::string text(Expression::kMaxDepth, '(');
  text += "tp";
  text += std::string(Expression::kMaxDepth, ')');
  EXPECT_EQ(eval(text), 8);
}

TEST(Expression, TheDeepestStackFits) {
  // Five pending operands per level of parentheses, at the deepest nesting allowed.
  std::string text;
  for (int i = 0; i < Expression::kMaxDepth; ++i) text += "tp or tp and tp == tp + tp * (";
  text += "tp";
  for (int i = 0; i < Expression::kMaxDepth; ++i) text += ")";
  EXPECT_EQ(eval(text), 1);
}

TEST(Expression, LongFlatExpressionsCompile) {
  std::string text = "tp";
  for (int i = 0; i < 100000; ++i) text += " + 1";
  EXPECT_EQ(eval(text + " > 0"), 1);
}

TEST(Expression, OnePointAndABlockOfRowsAgree) {
  // Random rows through random expressions: the two evaluators give the same bits.
  const std::vector<std::string> texts = {"tp * pp <= 32 and gpu == 'H100'", "tp / pp - dp % 3",
                                          "not (time > 1) or -tp < pp", "(tp > 1) + (pp > 1) * dp",
                                          "recompute != 'full' || dp >= tp / 2"};
  std::mt19937 rng(7);
  const std::size_t n = 3 * Expression::kBlockRows + 17;
  std::vector<std::vector<double>> columns(7, std::vector<double>(n));
  for (std::size_t i = 0; i < n; ++i) {
    columns[0][i] = 1 << (rng() % 4);
    columns[1][i] = 1 + rng() % 8;
    columns[2][i] = rng() % 2;
    columns[3][i] = rng() % 5;
    columns[4][i] = rng() % 2;
    columns[5][i] = rng() % 2;
    columns[6][i] = rng() % 3 == 0 ? kNaN : rng() % 100 / 10.0;
  }
  std::vector<const double*> pointers;
  for (const auto& c : columns) pointers.push_back(c.data());
  for (const auto& text : texts) {
    const Expression x = Expression::compile(text, names());
    std::vector<double> out(n), stack(x.stack_size());
    x.evaluate(pointers.data(), n, out.data(), stack.data());
    for (std::size_t i = 0; i < n; ++i) {
      double row[7];
      for (int j = 0; j < 7; ++j) row[j] = columns[j][i];
      const double one = x.evaluate(row);
      EXPECT_TRUE(one == out[i] || (std::isnan(one) && std::isnan(out[i]))) << text << " row " << i;
    }
  }
}

}  // namespace
}  // namespace clustersweep
