#include "spaces/expression.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "base/names.h"

namespace clustersweep::spaces {

namespace {

enum class TokenKind { number, name, string, op, end };

struct Token {
  TokenKind kind = TokenKind::end;
  std::string text;  // the name, the string's content, or the operator
  double number = 0;
  std::size_t offset = 0;
};

std::string describe(const Token& t) {
  switch (t.kind) {
    case TokenKind::end:
      return "end of expression";
    case TokenKind::string:
      return fmt::format("\"{}\"", t.text);
    default:
      return fmt::format("'{}'", t.text);
  }
}

std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    Token t;
    t.offset = i;
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      const std::string rest(s.substr(i));
      char* end = nullptr;
      t.number = std::strtod(rest.c_str(), &end);
      const std::size_t n = static_cast<std::size_t>(end - rest.c_str());
      t.kind = TokenKind::number;
      t.text = std::string(s.substr(i, n));
      i += n;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      t.text = std::string(s.substr(i, j - i));
      t.kind =
          (t.text == "and" || t.text == "or" || t.text == "not") ? TokenKind::op : TokenKind::name;
      i = j;
    } else if (c == '"' || c == '\'') {
      const std::size_t close = s.find(c, i + 1);
      if (close == std::string_view::npos) throw ExpressionError(i, "unterminated string");
      t.kind = TokenKind::string;
      t.text = std::string(s.substr(i + 1, close - i - 1));
      i = close + 1;
    } else {
      static constexpr std::string_view kTwo[] = {"<=", ">=", "==", "!=", "&&", "||"};
      t.kind = TokenKind::op;
      for (auto op : kTwo) {
        if (s.substr(i, 2) == op) t.text = std::string(op);
      }
      if (t.text.empty()) {
        if (std::string_view("+-*/%<>()!").find(c) == std::string_view::npos) {
          throw ExpressionError(i, fmt::format("unexpected character '{}'", c));
        }
        t.text = std::string(1, c);
      }
      i += t.text.size();
    }
    tokens.push_back(std::move(t));
  }
  Token end;
  end.offset = s.size();
  tokens.push_back(end);
  return tokens;
}

}  // namespace

// Recursive descent, one function per precedence level, emitting postfix code.
class ExpressionParser {
 public:
  ExpressionParser(std::string_view text, const ExpressionNames& names)
      : tokens_(tokenize(text)), names_(names) {}

  Expression run(std::string_view text) {
    if (peek().kind == TokenKind::end) throw ExpressionError(0, "empty expression");
    parse_or();
    if (peek().kind != TokenKind::end) {
      throw ExpressionError(peek().offset,
                            fmt::format("expected an operator, got {}", describe(peek())));
    }
    int depth = 0;
    int max_depth = 0;
    for (const auto& ins : out_.code_) {
      switch (ins.op) {
        case Expression::Op::constant:
        case Expression::Op::variable:
          ++depth;
          break;
        case Expression::Op::negate:
        case Expression::Op::logical_not:
          break;
        default:
          --depth;
          break;
      }
      max_depth = std::max(max_depth, depth);
    }
    if (max_depth > Expression::kMaxStack) throw ExpressionError(0, "expression nested too deeply");
    std::sort(out_.variables_.begin(), out_.variables_.end());
    out_.variables_.erase(std::unique(out_.variables_.begin(), out_.variables_.end()),
                          out_.variables_.end());
    out_.text_ = std::string(text);
    return std::move(out_);
  }

 private:
  using Op = Expression::Op;

  const Token& peek() const { return tokens_[pos_]; }
  bool accept(std::string_view op) {
    if (peek().kind == TokenKind::op && peek().text == op) {
      ++pos_;
      return true;
    }
    return false;
  }
  void emit(Op op) { out_.code_.push_back({op, 0, 0}); }

  void parse_or() {
    parse_and();
    while (accept("or") || accept("||")) {
      parse_and();
      emit(Op::logical_or);
    }
  }
  void parse_and() {
    parse_not();
    while (accept("and") || accept("&&")) {
      parse_not();
      emit(Op::logical_and);
    }
  }
  void parse_not() {
    if (accept("not") || accept("!")) {
      parse_not();
      emit(Op::logical_not);
      return;
    }
    parse_comparison();
  }
  void parse_comparison() {
    static constexpr std::pair<std::string_view, Op> kOps[] = {
        {"<=", Op::less_equal}, {">=", Op::greater_equal}, {"<", Op::less},
        {">", Op::greater},     {"==", Op::equal},         {"!=", Op::not_equal}};
    // A label comparison: name ==/!= "string" (either order).
    if (try_label_comparison()) return;
    parse_sum();
    for (const auto& [text, op] : kOps) {
      if (accept(text)) {
        parse_sum();
        emit(op);
        break;
      }
    }
    if (peek().kind == TokenKind::op) {
      for (const auto& [text, op] : kOps) {
        if (peek().text == text) {
          throw ExpressionError(peek().offset, "comparisons do not chain; join them with 'and'");
        }
      }
    }
  }
  bool try_label_comparison() {
    const std::size_t start = pos_;
    if (pos_ + 2 >= tokens_.size()) return false;
    const Token& a = tokens_[pos_];
    const Token& op = tokens_[pos_ + 1];
    const Token& b = tokens_[pos_ + 2];
    if (op.kind != TokenKind::op || (op.text != "==" && op.text != "!=")) return false;
    const Token* name = nullptr;
    const Token* label = nullptr;
    if (a.kind == TokenKind::name && b.kind == TokenKind::string) {
      name = &a;
      label = &b;
    } else if (a.kind == TokenKind::string && b.kind == TokenKind::name) {
      name = &b;
      label = &a;
    } else {
      return false;
    }
    const int variable = lookup(*name);
    std::vector<std::string> valid;
    std::optional<double> value;
    if (names_.label_value) value = names_.label_value(variable, label->text, valid);
    if (!value) {
      if (valid.empty()) {
        throw ExpressionError(
            label->offset,
            fmt::format("'{}' holds numbers, not labels like \"{}\"", name->text, label->text));
      }
      throw ExpressionError(
          label->offset, fmt::format("\"{}\" is not a value of '{}'; values are: {}", label->text,
                                     name->text, fmt::join(valid, ", ")));
    }
    out_.code_.push_back({Op::variable, variable, 0});
    out_.variables_.push_back(variable);
    out_.code_.push_back({Op::constant, 0, *value});
    emit(op.text == "==" ? Op::equal : Op::not_equal);
    pos_ = start + 3;
    return true;
  }
  void parse_sum() {
    parse_product();
    for (;;) {
      if (accept("+")) {
        parse_product();
        emit(Op::add);
      } else if (accept("-")) {
        parse_product();
        emit(Op::subtract);
      } else {
        return;
      }
    }
  }
  void parse_product() {
    parse_unary();
    for (;;) {
      if (accept("*")) {
        parse_unary();
        emit(Op::multiply);
      } else if (accept("/")) {
        parse_unary();
        emit(Op::divide);
      } else if (accept("%")) {
        parse_unary();
        emit(Op::modulo);
      } else {
        return;
      }
    }
  }
  void parse_unary() {
    if (accept("-")) {
      parse_unary();
      emit(Op::negate);
      return;
    }
    parse_primary();
  }
  void parse_primary() {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::number:
        out_.code_.push_back({Op::constant, 0, t.number});
        ++pos_;
        return;
      case TokenKind::name: {
        const int variable = lookup(t);
        out_.code_.push_back({Op::variable, variable, 0});
        out_.variables_.push_back(variable);
        ++pos_;
        return;
      }
      case TokenKind::string:
        throw ExpressionError(t.offset, fmt::format("a string like {} can only be compared with == "
                                                    "or != to a label axis such as gpu or model",
                                                    describe(t)));
      case TokenKind::op:
        if (accept("(")) {
          parse_or();
          if (!accept(")")) {
            throw ExpressionError(peek().offset,
                                  fmt::format("expected ')', got {}", describe(peek())));
          }
          return;
        }
        [[fallthrough]];
      case TokenKind::end:
        throw ExpressionError(t.offset,
                              fmt::format("expected a number, a name or '(', got {}", describe(t)));
    }
  }
  int lookup(const Token& t) const {
    const auto& names = names_.names;
    const auto it = std::find(names.begin(), names.end(), t.text);
    if (it != names.end()) return static_cast<int>(it - names.begin());
    const auto close = closest_names(t.text, names, 1);
    std::string message = fmt::format("unknown name '{}'", t.text);
    if (!close.empty()) message += fmt::format("; did you mean '{}'?", close.front());
    throw ExpressionError(t.offset, message);
  }

  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  const ExpressionNames& names_;
  Expression out_;
};

Expression Expression::compile(std::string_view text, const ExpressionNames& names) {
  return ExpressionParser(text, names).run(text);
}

double Expression::evaluate(const double* variables) const noexcept {
  std::array<double, kMaxStack> stack;
  int top = -1;
  for (const Instruction& ins : code_) {
    switch (ins.op) {
      case Op::constant:
        stack[++top] = ins.constant;
        continue;
      case Op::variable:
        stack[++top] = variables[ins.variable];
        continue;
      case Op::negate:
        stack[top] = -stack[top];
        continue;
      case Op::logical_not:
        stack[top] = stack[top] == 0 ? 1 : 0;
        continue;
      default:
        break;
    }
    const double b = stack[top--];
    double& a = stack[top];
    switch (ins.op) {
      case Op::add:
        a = a + b;
        break;
      case Op::subtract:
        a = a - b;
        break;
      case Op::multiply:
        a = a * b;
        break;
      case Op::divide:
        a = a / b;
        break;
      case Op::modulo:
        a = std::fmod(a, b);
        break;
      case Op::less:
        a = a < b;
        break;
      case Op::less_equal:
        a = a <= b;
        break;
      case Op::greater:
        a = a > b;
        break;
      case Op::greater_equal:
        a = a >= b;
        break;
      case Op::equal:
        a = a == b;
        break;
      case Op::not_equal:
        a = a != b;
        break;
      case Op::logical_and:
        a = (a != 0) && (b != 0);
        break;
      case Op::logical_or:
        a = (a != 0) || (b != 0);
        break;
      default:
        break;
    }
  }
  return top == 0 ? stack[0] : 0;
}

}  // namespace clustersweep::spaces
