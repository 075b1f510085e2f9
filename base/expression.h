#pragma once
// The one expression language of clustersweep: a spec's `constraints` (docs/spec-format.md) and
// the analysis commands' `--where` (docs/analysis.md) are both written in it.
//
//   tp * pp <= 64 and gpu == 'H100-SXM5-80GB'
//   not (tp > 8 or recompute == 'full') and time_to_train_s < 30 * 86400
//
// Loosest first: or/||; and/&&; not/!; one comparison (< <= > >= == !=; they do not chain);
// + -; * / %; unary -; numbers, true/false, names, 'strings' or "strings", parentheses.
// A name with labels holds the index of one of its labels and is only compared (== or !=) with a
// quoted label or with a name of the same labels; the types are checked when compiling, so a
// mistyped expression is an error instead of one that silently keeps or removes everything.
// A condition holds when its value is non-zero and not NaN, so NaN compares and tests false.
//
// An expression compiles once into postfix code. Evaluating it allocates nothing: one point at a
// time (a spec's constraints, on the sweep's hot path) or a block of rows (a filter over columns).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace clustersweep {

namespace expression_syntax {
class ExpressionCompiler;  // expression.cc: compiles an expression's text
}

// A name an expression may read; name i of ExpressionNames::names is value i at evaluation.
struct ExpressionName {
  std::string name;
  std::vector<std::string> labels;  // empty: the name holds numbers
};

struct ExpressionNames {
  std::vector<ExpressionName> names;
  std::string noun = "name";  // what a name is called in messages ("column" for --where)
  std::string example = "tp * pp <= 64";  // offered when the expression is empty
};

// A compile error: what() is the message; column() is the 1-based character of the offending
// text and width() its length.
class ExpressionError : public std::runtime_error {
 public:
  ExpressionError(std::size_t column, std::size_t width, const std::string& message)
      : std::runtime_error(message), column_(column), width_(width == 0 ? 1 : width) {}
  std::size_t column() const noexcept { return column_; }
  std::size_t width() const noexcept { return width_; }

  // Two more lines for the message: `text` and a caret under the offending part of it.
  //   "\n    tpp * pp <= 64\n    ^~~"
  std::string caret(std::string_view text) const;

 private:
  std::size_t column_;
  std::size_t width_;
};

class Expression {
 public:
  // Deeper nesting (of parentheses, not and unary -) is a compile error instead of a stack
  // overflow. Each level of parentheses holds at most five pending operands (one per binary
  // precedence level), so whatever nests within kMaxDepth fits the evaluation stack.
  static constexpr int kMaxDepth = 64;
  static constexpr int kMaxStack = 512;
  // Rows evaluated together by the block form of evaluate().
  static constexpr std::size_t kBlockRows = 256;

  // Throws ExpressionError naming the offending text and, for an unknown name or label, the
  // closest valid one.
  static Expression compile(std::string_view text, const ExpressionNames& names);

  // values[i] is the value of name i.
  double evaluate(const double* values) const noexcept;
  bool holds(const double* values) const noexcept { return is_true(evaluate(values)); }
  // The rows [0, n): columns[i] points at the n values of name i (only the names read are
  // used); out receives n results. `stack` is scratch space of at least stack_size() values.
  void evaluate(const double* const* columns, std::size_t n, double* out,
                double* stack) const noexcept;
  std::size_t stack_size() const noexcept {
    return static_cast<std::size_t>(max_stack_) * kBlockRows;
  }

  static bool is_true(double v) noexcept { return v != 0 && v == v; }

  const std::string& text() const noexcept { return text_; }
  // The names the expression reads (indices, sorted, unique).
  const std::vector<int>& names_read() const noexcept { return names_read_; }

  enum class Op : std::uint8_t {
    constant,
    variable,
    negate,
    logical_not,
    add,
    subtract,
    multiply,
    divide,
    modulo,
    less,
    less_equal,
    greater,
    greater_equal,
    equal,
    not_equal,
    logical_and,
    logical_or,
  };
  struct Instruction {
    Op op;
    int variable = 0;
    double constant = 0;
  };

 private:
  std::string text_;
  std::vector<Instruction> code_;
  std::vector<int> names_read_;
  int max_stack_ = 1;
  friend class expression_syntax::ExpressionCompiler;
};

}  // namespace clustersweep
