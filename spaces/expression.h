#pragma once
// The tiny expression language of a spec's `constraints` (docs/spec-format.md):
//   numbers, names, "label" strings, ( ), unary - and not/!, * / %, + -,
//   < <= > >= == !=, and/&&, or/||.
// Truth is "non-zero"; comparisons give 1 or 0. Expressions compile once into postfix code and
// evaluate allocation-free over an array of variable values.
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace clustersweep::spaces {

// A compile error at byte `offset` of the expression text.
class ExpressionError : public std::runtime_error {
 public:
  ExpressionError(std::size_t offset, const std::string& message)
      : std::runtime_error(message), offset_(offset) {}
  std::size_t offset() const noexcept { return offset_; }

 private:
  std::size_t offset_;
};

// The names an expression may use: variable i is names[i]. A string literal may only be compared
// (== or !=) with a variable for which `label_value` maps it to the number the variable holds
// (a label's index); it returns nullopt (and may fill `valid` with the allowed labels) otherwise.
struct ExpressionNames {
  std::vector<std::string> names;
  std::function<std::optional<double>(int variable, std::string_view label,
                                      std::vector<std::string>& valid)>
      label_value;
};

class Expression {
 public:
  static constexpr int kMaxStack = 32;

  // Throws ExpressionError naming the offending token and, for an unknown name, the closest one.
  static Expression compile(std::string_view text, const ExpressionNames& names);

  double evaluate(const double* variables) const noexcept;
  bool holds(const double* variables) const noexcept { return evaluate(variables) != 0; }

  const std::string& text() const noexcept { return text_; }
  // The variables the expression reads (sorted, unique).
  const std::vector<int>& variables() const noexcept { return variables_; }

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
  std::vector<int> variables_;
  friend class ExpressionParser;
};

}  // namespace clustersweep::spaces
