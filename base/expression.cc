#include "base/expression.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "base/names.h"

namespace clustersweep {

std::string ExpressionError::caret(std::string_view text) const {
  // Tabs and newlines would shift the caret; show them as spaces.
  std::string shown(text);
  for (char& c : shown)
    if (std::isspace(static_cast<unsigned char>(c))) c = ' ';
  std::size_t at = std::min(column_ - 1, shown.size());
  std::size_t wide = std::max<std::size_t>(1, std::min(width_, shown.size() - at));
  // A long expression is shown as a window around the culprit, so that the message stays a few
  // lines of a terminal's width.
  constexpr std::size_t kBefore = 50, kAfter = 40;
  if (shown.size() > kBefore + kAfter) {
    const std::size_t from = at > kBefore ? at - kBefore : 0;
    const std::size_t to = std::min(shown.size(), at + std::min(wide, kAfter) + kAfter);
    std::string window = shown.substr(from, to - from);
    if (from > 0) window = "..." + window;
    if (to < shown.size()) window += "...";
    at = at - from + (from > 0 ? 3 : 0);
    wide = std::min(wide, kAfter);
    shown = std::move(window);
  }
  return fmt::format("\n    {}\n    {}^{}", shown, std::string(at, ' '),
                     std::string(wide - 1, '~'));
}

// Named, not anonymous: ExpressionCompiler is Expression's friend, so its name is known outside
// this file, and in a unity build a class with a member of a type from an anonymous namespace is
// an error (-Wsubobject-linkage).
namespace expression_syntax {

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

struct Token {
  enum class Kind : std::uint8_t { number, name, string, op, end };
  Kind kind = Kind::end;
  std::string text;  // the name, the operator, or a string's content
  double number = 0;
  std::size_t column = 0;  // 1-based
  std::size_t width = 1;   // characters of the source text, quotes included

  bool is(std::string_view op) const { return kind == Kind::op && text == op; }
};

std::string describe(const Token& t) {
  switch (t.kind) {
    case Token::Kind::end:
      return "the end of the expression";
    default:
      return fmt::format("'{}'", t.text);
  }
}

[[noreturn]] void fail(std::size_t column, std::size_t width, const std::string& message) {
  throw ExpressionError(column, width, message);
}

std::vector<Token> tokenize(std::string_view s) {
  static constexpr std::string_view kKeywords[] = {"and", "or", "not"};
  static constexpr std::string_view kTwo[] = {"<=", ">=", "==", "!=", "&&", "||"};
  std::vector<Token> tokens;
  std::size_t i = 0;
  for (;;) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    Token t;
    t.column = i + 1;
    if (i == s.size()) {
      tokens.push_back(t);
      return tokens;
    }
    const char c = s[i];
    if (is_digit(c) || (c == '.' && i + 1 < s.size() && is_digit(s[i + 1]))) {
      // Decimal only (strtod alone would also take hex, "inf" and "nan").
      std::size_t j = i;
      while (j < s.size() && is_digit(s[j])) ++j;
      if (j < s.size() && s[j] == '.') ++j;
      while (j < s.size() && is_digit(s[j])) ++j;
      if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
        std::size_t k = j + 1;
        if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
        if (k < s.size() && is_digit(s[k])) {
          while (k < s.size() && is_digit(s[k])) ++k;
          j = k;
        }
      }
      t.kind = Token::Kind::number;
      t.text = std::string(s.substr(i, j - i));
      t.number = std::strtod(t.text.c_str(), nullptr);
      t.width = j - i;
      if (!std::isfinite(t.number))
        fail(t.column, t.width, fmt::format("{} is out of range", t.text));
      if (j < s.size() && (is_name_char(s[j]) || s[j] == '.'))
        fail(j + 1, 1, fmt::format("unexpected '{}' after the number {}", s[j], t.text));
      i = j;
    } else if (is_name_start(c)) {
      std::size_t j = i;
      while (j < s.size() && is_name_char(s[j])) ++j;
      t.text = std::string(s.substr(i, j - i));
      t.width = j - i;
      t.kind = std::find(std::begin(kKeywords), std::end(kKeywords), t.text) != std::end(kKeywords)
                   ? Token::Kind::op
                   : Token::Kind::name;
      i = j;
    } else if (c == '"' || c == '\'') {
      const std::size_t close = s.find(c, i + 1);
      if (close == std::string_view::npos)
        fail(t.column, s.size() - i, fmt::format("unterminated string; add the closing {}", c));
      t.kind = Token::Kind::string;
      t.text = std::string(s.substr(i + 1, close - i - 1));
      t.width = close + 1 - i;
      i = close + 1;
    } else {
      t.kind = Token::Kind::op;
      for (auto op : kTwo)
        if (s.substr(i, 2) == op) t.text = std::string(op);
      if (t.text.empty()) {
        if (c == '=') fail(t.column, 1, "'=' is not a comparison; use '=='");
        if (std::string_view("+-*/%<>()!").find(c) == std::string_view::npos)
          fail(t.column, 1, fmt::format("unexpected character '{}'", c));
        t.text = std::string(1, c);
      }
      t.width = t.text.size();
      i += t.width;
    }
    tokens.push_back(std::move(t));
  }
}

// Recursive descent, one function per precedence level, emitting postfix code and checking the
// type of each operand as it goes.
class ExpressionCompiler {
 public:
  ExpressionCompiler(std::string_view text, const ExpressionNames& names)
      : tokens_(tokenize(text)), names_(names) {}

  Expression run(std::string_view text) {
    if (peek().kind == Token::Kind::end)
      fail(1, 1, fmt::format("empty expression; expected a condition such as {}", names_.example));
    number(parse_or());
    if (peek().kind != Token::Kind::end)
      fail(peek().column, peek().width,
           fmt::format("expected an operator or the end of the expression, got {}",
                       describe(peek())));
    out_.max_stack_ = std::max(1, max_stack_);
    std::sort(out_.names_read_.begin(), out_.names_read_.end());
    out_.names_read_.erase(std::unique(out_.names_read_.begin(), out_.names_read_.end()),
                           out_.names_read_.end());
    out_.text_ = std::string(text);
    return std::move(out_);
  }

 private:
  using Op = Expression::Op;

  // What an operand is: its type and the source text it spans. A string is not emitted until the
  // comparison that gives it a meaning (the index of a label) is parsed.
  struct Operand {
    enum class Type : std::uint8_t { number, label, string };
    Type type = Type::number;
    std::size_t begin = 1, end = 2;        // columns, end exclusive
    const ExpressionName* name = nullptr;  // a label operand's name
    std::string text;                      // a string's content
    std::size_t width() const { return end - begin; }
  };
  using Type = Operand::Type;

  // Counts nesting so hostile input ("((((…" or "!!!!…") is an error, not a stack overflow.
  class Nest {
   public:
    Nest(ExpressionCompiler& c, const Token& at) : c_(c) {
      if (++c_.depth_ > Expression::kMaxDepth)
        fail(at.column, at.width,
             fmt::format("nested more than {} deep; simplify the expression",
                         Expression::kMaxDepth));
    }
    ~Nest() { --c_.depth_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;

   private:
    ExpressionCompiler& c_;
  };

  const Token& peek() const { return tokens_[pos_]; }
  const Token& take() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  bool accept(std::string_view a, std::string_view b = {}) {
    if (peek().is(a) || (!b.empty() && peek().is(b))) {
      ++pos_;
      return true;
    }
    return false;
  }

  void push(Expression::Instruction ins) {
    out_.code_.push_back(ins);
    if (ins.op == Op::constant || ins.op == Op::variable) {
      max_stack_ = std::max(max_stack_, ++stack_);
      if (max_stack_ > Expression::kMaxStack)
        fail(peek().column, peek().width, "too many pending operands; simplify the expression");
    } else if (ins.op != Op::negate && ins.op != Op::logical_not) {
      --stack_;
    }
  }
  void emit(Op op) { push({op, 0, 0}); }

  std::string label_example(const ExpressionName& n) const {
    return fmt::format("{} == '{}'", n.name, n.labels.empty() ? "" : n.labels.front());
  }
  [[noreturn]] void not_a_number(const Operand& o) const {
    if (o.type == Type::label)
      fail(o.begin, o.width(),
           fmt::format("'{}' holds labels; compare it with a quoted label, e.g. {}", o.name->name,
                       label_example(*o.name)));
    std::string example;
    for (const auto& n : names_.names)
      if (!n.labels.empty()) {
        example = fmt::format(" such as {}", n.name);
        break;
      }
    fail(o.begin, o.width(),
         fmt::format("the string '{}' can only be compared with == or != to a label {}{}", o.text,
                     names_.noun, example));
  }
  // An operand of arithmetic, ordering, and/or/not, or the whole expression: a number.
  const Operand& number(const Operand& o) const {
    if (o.type != Type::number) not_a_number(o);
    return o;
  }

  static Operand span(const Operand& a, const Operand& b) {
    Operand o;
    o.begin = std::min(a.begin, b.begin);
    o.end = std::max(a.end, b.end);
    return o;
  }
  static Operand from(const Token& t) {
    Operand o;
    o.begin = t.column;
    o.end = t.column + t.width;
    return o;
  }

  Operand parse_or() {
    Operand left = parse_and();
    while (accept("or", "||")) {
      number(left);
      const Operand right = number(parse_and());
      emit(Op::logical_or);
      left = span(left, right);
    }
    return left;
  }
  Operand parse_and() {
    Operand left = parse_not();
    while (accept("and", "&&")) {
      number(left);
      const Operand right = number(parse_not());
      emit(Op::logical_and);
      left = span(left, right);
    }
    return left;
  }
  Operand parse_not() {
    const Token& t = peek();
    if (t.is("not") || t.is("!")) {
      Nest nest(*this, t);
      const Operand op = from(take());
      const Operand inner = number(parse_not());
      emit(Op::logical_not);
      return span(op, inner);
    }
    return parse_comparison();
  }

  static bool is_comparison(const Token& t) {
    static constexpr std::string_view kOps[] = {"<", "<=", ">", ">=", "==", "!="};
    return t.kind == Token::Kind::op &&
           std::find(std::begin(kOps), std::end(kOps), t.text) != std::end(kOps);
  }
  static Op comparison_op(std::string_view text) {
    if (text == "<") return Op::less;
    if (text == "<=") return Op::less_equal;
    if (text == ">") return Op::greater;
    if (text == ">=") return Op::greater_equal;
    if (text == "==") return Op::equal;
    return Op::not_equal;
  }

  Operand parse_comparison() {
    Operand left = parse_sum();
    if (!is_comparison(peek())) return left;
    const Token op = take();
    Operand right = parse_sum();
    const bool equality = op.text == "==" || op.text == "!=";
    if (left.type == Type::label || right.type == Type::label) {
      const Operand& label = left.type == Type::label ? left : right;
      const Operand& other = left.type == Type::label ? right : left;
      if (!equality)
        fail(op.column, op.width,
             fmt::format("'{}' cannot order the labels of '{}'; use == or !=", op.text,
                         label.name->name));
      if (other.type == Type::number) not_a_number(label);
      if (other.type == Type::label && other.name->labels != label.name->labels)
        fail(
            op.column, op.width,
            fmt::format("'{}' and '{}' have different labels", label.name->name, other.name->name));
      if (other.type == Type::string) push({Op::constant, 0, label_index(*label.name, other)});
    } else {
      number(left);
      number(right);
    }
    emit(comparison_op(op.text));
    if (is_comparison(peek()))
      fail(peek().column, peek().width, "comparisons do not chain; join them with 'and'");
    return span(left, right);
  }

  double label_index(const ExpressionName& name, const Operand& s) const {
    const auto& labels = name.labels;
    const auto it = std::find(labels.begin(), labels.end(), s.text);
    if (it != labels.end()) return static_cast<double>(it - labels.begin());
    const auto close = closest_names(s.text, labels, 1);
    if (!close.empty())
      fail(s.begin, s.width(),
           fmt::format("'{}' is not a value of '{}'; did you mean '{}'?", s.text, name.name,
                       close.front()));
    fail(s.begin, s.width(),
         fmt::format("'{}' is not a value of '{}'; values are: {}", s.text, name.name,
                     fmt::join(labels, ", ")));
  }

  Operand parse_sum() {
    Operand left = parse_product();
    for (;;) {
      Op op;
      if (accept("+"))
        op = Op::add;
      else if (accept("-"))
        op = Op::subtract;
      else
        return left;
      number(left);
      const Operand right = number(parse_product());
      emit(op);
      left = span(left, right);
    }
  }
  Operand parse_product() {
    Operand left = parse_unary();
    for (;;) {
      Op op;
      if (accept("*"))
        op = Op::multiply;
      else if (accept("/"))
        op = Op::divide;
      else if (accept("%"))
        op = Op::modulo;
      else
        return left;
      number(left);
      const std::size_t before = out_.code_.size();
      const Operand right = number(parse_unary());
      // A literal zero divisor can only be a mistake; a computed one gives inf or NaN.
      if (op != Op::multiply && out_.code_.size() == before + 1 &&
          out_.code_.back().op == Op::constant && out_.code_.back().constant == 0)
        fail(right.begin, right.width(), "division by zero");
      emit(op);
      left = span(left, right);
    }
  }
  Operand parse_unary() {
    const Token& t = peek();
    if (t.is("-")) {
      Nest nest(*this, t);
      const Operand op = from(take());
      const Operand inner = number(parse_unary());
      emit(Op::negate);
      return span(op, inner);
    }
    return parse_primary();
  }
  Operand parse_primary() {
    const Token& t = take();
    Operand o = from(t);
    switch (t.kind) {
      case Token::Kind::number:
        push({Op::constant, 0, t.number});
        return o;
      case Token::Kind::string:
        o.type = Type::string;
        o.text = t.text;
        return o;
      case Token::Kind::name:
        if (t.text == "true" || t.text == "false") {
          push({Op::constant, 0, t.text == "true" ? 1.0 : 0.0});
          return o;
        }
        return name(t);
      case Token::Kind::op:
        if (t.is("(")) {
          Nest nest(*this, t);
          Operand inner = parse_or();
          if (!accept(")"))
            fail(peek().column, peek().width,
                 fmt::format("expected ')' to close the '(' at column {}, got {}", t.column,
                             describe(peek())));
          inner.begin = o.begin;
          inner.end = tokens_[pos_ - 1].column + 1;
          return inner;
        }
        [[fallthrough]];
      case Token::Kind::end:
        break;
    }
    fail(t.column, t.width,
         fmt::format("expected a number, a {} or '(', got {}", names_.noun, describe(t)));
  }
  Operand name(const Token& t) {
    const auto& names = names_.names;
    const auto it = std::find_if(names.begin(), names.end(),
                                 [&](const ExpressionName& n) { return n.name == t.text; });
    if (it == names.end()) {
      std::vector<std::string> all;
      for (const auto& n : names) all.push_back(n.name);
      const auto close = closest_names(t.text, all, 1);
      fail(t.column, t.width,
           close.empty() ? fmt::format("unknown {} '{}'; {}s are: {}", names_.noun, t.text,
                                       names_.noun, fmt::join(all, ", "))
                         : fmt::format("unknown {} '{}'; did you mean '{}'?", names_.noun, t.text,
                                       close.front()));
    }
    const int index = static_cast<int>(it - names.begin());
    push({Op::variable, index, 0});
    out_.names_read_.push_back(index);
    Operand o = from(t);
    if (!it->labels.empty()) {
      o.type = Type::label;
      o.name = &*it;
    }
    return o;
  }

  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  const ExpressionNames& names_;
  Expression out_;
  int depth_ = 0;
  int stack_ = 0;
  int max_stack_ = 0;
};

}  // namespace expression_syntax

Expression Expression::compile(std::string_view text, const ExpressionNames& names) {
  return expression_syntax::ExpressionCompiler(text, names).run(text);
}

namespace {

// The operators applied to one value (unary) or one pair (binary); shared by both evaluators so
// one point and a block of rows can never disagree.
inline double apply(Expression::Op op, double a) noexcept {
  return op == Expression::Op::negate ? -a : (Expression::is_true(a) ? 0.0 : 1.0);
}
inline double apply(Expression::Op op, double a, double b) noexcept {
  using Op = Expression::Op;
  switch (op) {
    case Op::add:
      return a + b;
    case Op::subtract:
      return a - b;
    case Op::multiply:
      return a * b;
    case Op::divide:
      return a / b;
    case Op::modulo:
      return std::fmod(a, b);
    case Op::less:
      return a < b;
    case Op::less_equal:
      return a <= b;
    case Op::greater:
      return a > b;
    case Op::greater_equal:
      return a >= b;
    case Op::equal:
      return a == b;
    case Op::not_equal:
      return a != b;
    case Op::logical_and:
      return Expression::is_true(a) && Expression::is_true(b);
    case Op::logical_or:
      return Expression::is_true(a) || Expression::is_true(b);
    default:
      return 0;
  }
}

}  // namespace

double Expression::evaluate(const double* values) const noexcept {
  std::array<double, kMaxStack> stack;
  int top = -1;
  for (const Instruction& ins : code_) {
    switch (ins.op) {
      case Op::constant:
        stack[++top] = ins.constant;
        break;
      case Op::variable:
        stack[++top] = values[ins.variable];
        break;
      case Op::negate:
      case Op::logical_not:
        stack[top] = apply(ins.op, stack[top]);
        break;
      default:
        --top;
        stack[top] = apply(ins.op, stack[top], stack[top + 1]);
        break;
    }
  }
  return stack[0];
}

void Expression::evaluate(const double* const* columns, std::size_t n, double* out,
                          double* stack) const noexcept {
  for (std::size_t first = 0; first < n; first += kBlockRows) {
    const std::size_t rows = std::min(kBlockRows, n - first);
    double* top = stack - kBlockRows;  // the block on top of the stack
    for (const Instruction& ins : code_) {
      switch (ins.op) {
        case Op::constant:
          top += kBlockRows;
          std::fill(top, top + rows, ins.constant);
          break;
        case Op::variable:
          top += kBlockRows;
          std::copy(columns[ins.variable] + first, columns[ins.variable] + first + rows, top);
          break;
        case Op::negate:
        case Op::logical_not:
          for (std::size_t i = 0; i < rows; ++i) top[i] = apply(ins.op, top[i]);
          break;
        default: {
          double* a = top - kBlockRows;
          for (std::size_t i = 0; i < rows; ++i) a[i] = apply(ins.op, a[i], top[i]);
          top = a;
          break;
        }
      }
    }
    std::copy(stack, stack + rows, out + first);
  }
}

}  // namespace clustersweep
