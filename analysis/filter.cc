#include "analysis/filter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "analysis/dataset.h"
#include "base/error.h"
#include "base/names.h"

namespace clustersweep::analysis {

enum class Type : std::uint8_t { number, boolean, label, string };

struct Filter::Node {
  enum class Kind : std::uint8_t {
    constant,
    column,
    compare,
    logic_and,
    logic_or,
    logic_not,
    add,
    subtract,
    multiply,
    divide,
    negate,
    truthy
  };
  Kind kind = Kind::constant;
  Type type = Type::number;
  std::size_t position = 0;  // 1-based character of the token that starts the node
  double value = 0;          // constant
  std::string text;          // string literal, or the operator of a comparison
  std::size_t column = 0;    // index into Filter::columns_
  const Column* info = nullptr;
  std::unique_ptr<Node> left, right;
};

namespace {

using Node = Filter::Node;
using Kind = Node::Kind;

struct Token {
  enum class Kind : std::uint8_t { identifier, number, string, op, end };
  Kind kind = Kind::end;
  std::string text;
  double number = 0;
  std::size_t position = 0;  // 1-based
};

std::string describe(const Token& t) {
  switch (t.kind) {
    case Token::Kind::end:
      return "end of filter";
    case Token::Kind::string:
      return fmt::format("'{}'", t.text);
    default:
      return fmt::format("'{}'", t.text);
  }
}

class Parser {
 public:
  Parser(std::string_view text, const Dataset& data, std::string_view what,
         std::vector<std::string>& columns)
      : text_(text), data_(data), what_(what), columns_(columns) {
    tokenize();
  }

  std::unique_ptr<Node> parse() {
    if (tokens_.front().kind == Token::Kind::end)
      fail(1, "empty filter; expected an expression such as feasible and num_gpus <= 1024");
    auto root = parse_or();
    if (peek().kind != Token::Kind::end)
      fail(peek().position,
           fmt::format("expected 'and', 'or' or end of filter, got {}", describe(peek())));
    return as_condition(std::move(root));
  }

 private:
  [[noreturn]] void fail(std::size_t position, const std::string& message) const {
    throw InputError(fmt::format("{}:1:{}: {}", what_, position, message));
  }

  void tokenize() {
    std::size_t i = 0;
    while (true) {
      while (i < text_.size() && std::isspace(static_cast<unsigned char>(text_[i]))) ++i;
      Token t;
      t.position = i + 1;
      if (i >= text_.size()) {
        tokens_.push_back(t);
        return;
      }
      const char c = text_[i];
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        std::size_t j = i;
        while (j < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[j])) || text_[j] == '_'))
          ++j;
        t.kind = Token::Kind::identifier;
        t.text = text_.substr(i, j - i);
        i = j;
      } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
        const std::string rest(text_.substr(i));
        char* end = nullptr;
        t.number = std::strtod(rest.c_str(), &end);
        const std::size_t length = static_cast<std::size_t>(end - rest.c_str());
        if (length == 0) fail(t.position, fmt::format("unexpected '{}'", c));
        t.kind = Token::Kind::number;
        t.text = rest.substr(0, length);
        i += length;
        if (i < text_.size() &&
            (std::isalpha(static_cast<unsigned char>(text_[i])) || text_[i] == '_'))
          fail(i + 1, fmt::format("unexpected '{}' after the number {}", text_[i], t.text));
      } else if (c == '\'' || c == '"') {
        const std::size_t close = text_.find(c, i + 1);
        if (close == std::string_view::npos)
          fail(t.position, fmt::format("unterminated string; add the closing {}", c));
        t.kind = Token::Kind::string;
        t.text = text_.substr(i + 1, close - i - 1);
        i = close + 1;
      } else {
        static const char* const two[] = {"==", "!=", "<=", ">=", "&&", "||"};
        t.kind = Token::Kind::op;
        for (const char* op : two)
          if (text_.substr(i, 2) == op) t.text = op;
        if (t.text.empty()) {
          if (std::string_view("<>()+-*/!=").find(c) == std::string_view::npos)
            fail(t.position, fmt::format("unexpected '{}'", c));
          t.text = std::string(1, c);
          if (c == '=') fail(t.position, "'=' is not a comparison; use '=='");
        }
        i += t.text.size();
      }
      tokens_.push_back(t);
    }
  }

  const Token& peek() const { return tokens_[next_]; }
  Token take() { return tokens_[next_ < tokens_.size() - 1 ? next_++ : next_]; }
  bool accept(std::string_view a, std::string_view b = {}) {
    const Token& t = peek();
    if ((t.kind == Token::Kind::op || t.kind == Token::Kind::identifier) &&
        (t.text == a || (!b.empty() && t.text == b))) {
      ++next_;
      return true;
    }
    return false;
  }

  static std::unique_ptr<Node> make(Kind kind, Type type, std::size_t position) {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->type = type;
    n->position = position;
    return n;
  }

  // Operands of and/or/not: conditions, or numbers meaning "is not zero".
  std::unique_ptr<Node> as_condition(std::unique_ptr<Node> n) {
    if (n->type == Type::boolean) return n;
    if (n->type == Type::number) {
      auto t = make(Kind::truthy, Type::boolean, n->position);
      t->left = std::move(n);
      return t;
    }
    if (n->type == Type::label)
      fail(n->position,
           fmt::format("column '{}' holds labels; compare it with a quoted label, e.g. "
                       "{} == '{}'",
                       n->info->name, n->info->name,
                       n->info->labels.empty() ? "" : n->info->labels.front()));
    fail(
        n->position,
        fmt::format("a string ('{}') is not a condition; compare a label column with it", n->text));
  }

  std::unique_ptr<Node> parse_or() {
    auto left = parse_and();
    while (true) {
      const std::size_t position = peek().position;
      if (!accept("or", "||")) return left;
      auto n = make(Kind::logic_or, Type::boolean, position);
      n->left = as_condition(std::move(left));
      n->right = as_condition(parse_and());
      left = std::move(n);
    }
  }

  std::unique_ptr<Node> parse_and() {
    auto left = parse_not();
    while (true) {
      const std::size_t position = peek().position;
      if (!accept("and", "&&")) return left;
      auto n = make(Kind::logic_and, Type::boolean, position);
      n->left = as_condition(std::move(left));
      n->right = as_condition(parse_not());
      left = std::move(n);
    }
  }

  std::unique_ptr<Node> parse_not() {
    const std::size_t position = peek().position;
    if (accept("not", "!")) {
      auto n = make(Kind::logic_not, Type::boolean, position);
      n->left = as_condition(parse_not());
      return n;
    }
    return parse_comparison();
  }

  std::unique_ptr<Node> parse_comparison() {
    auto left = parse_sum();
    const Token& t = peek();
    static const std::vector<std::string_view> ops = {"==", "!=", "<", "<=", ">", ">="};
    if (t.kind != Token::Kind::op || std::find(ops.begin(), ops.end(), t.text) == ops.end())
      return left;
    const Token op = take();
    auto right = parse_sum();
    auto n = make(Kind::compare, Type::boolean, op.position);
    n->text = op.text;
    const bool equality = op.text == "==" || op.text == "!=";
    if (left->type == Type::string && right->type == Type::label) std::swap(left, right);
    if (left->type == Type::label || right->type == Type::label) {
      Node& label = left->type == Type::label ? *left : *right;
      Node& other = left->type == Type::label ? *right : *left;
      if (!equality)
        fail(op.position, fmt::format("'{}' cannot order the labels of column '{}'; use == or !=",
                                      op.text, label.info->name));
      if (other.type == Type::label && other.info->labels != label.info->labels)
        fail(op.position, fmt::format("columns '{}' and '{}' have different labels",
                                      label.info->name, other.info->name));
      if (other.type == Type::number || other.type == Type::boolean)
        fail(other.position,
             fmt::format("column '{}' holds labels; compare it with a quoted label, "
                         "e.g. {} == '{}'",
                         label.info->name, label.info->name,
                         label.info->labels.empty() ? "" : label.info->labels.front()));
      if (other.type == Type::string) resolve_label(other, *label.info);
    } else if (left->type == Type::string || right->type == Type::string) {
      const Node& s = left->type == Type::string ? *left : *right;
      fail(s.position,
           fmt::format("the string '{}' can only be compared with a label column", s.text));
    }
    n->left = std::move(left);
    n->right = std::move(right);
    if (peek().kind == Token::Kind::op &&
        std::find(ops.begin(), ops.end(), peek().text) != ops.end())
      fail(peek().position, "comparisons do not chain; join them with 'and'");
    return n;
  }

  void resolve_label(Node& s, const Column& column) {
    const auto it = std::find(column.labels.begin(), column.labels.end(), s.text);
    if (it == column.labels.end()) {
      const auto close = closest_names(s.text, column.labels, 1);
      if (!close.empty())
        fail(s.position, fmt::format("'{}' is not a value of column '{}'; did you mean '{}'?",
                                     s.text, column.name, close[0]));
      fail(s.position, fmt::format("'{}' is not a value of column '{}'; values are: {}", s.text,
                                   column.name, fmt::join(column.labels, ", ")));
    }
    s.kind = Kind::constant;
    s.type = Type::label;
    s.info = &column;
    s.value = static_cast<double>(it - column.labels.begin());
  }

  std::unique_ptr<Node> parse_sum() {
    auto left = parse_product();
    while (true) {
      const std::size_t position = peek().position;
      Kind kind;
      if (accept("+"))
        kind = Kind::add;
      else if (accept("-"))
        kind = Kind::subtract;
      else
        return left;
      left = arithmetic(kind, position, std::move(left), parse_product());
    }
  }

  std::unique_ptr<Node> parse_product() {
    auto left = parse_factor();
    while (true) {
      const std::size_t position = peek().position;
      Kind kind;
      if (accept("*"))
        kind = Kind::multiply;
      else if (accept("/"))
        kind = Kind::divide;
      else
        return left;
      left = arithmetic(kind, position, std::move(left), parse_factor());
    }
  }

  std::unique_ptr<Node> arithmetic(Kind kind, std::size_t position, std::unique_ptr<Node> left,
                                   std::unique_ptr<Node> right) {
    for (const Node* side : {left.get(), right.get()})
      if (side->type != Type::number)
        fail(side->position, "arithmetic needs numbers on both sides");
    auto n = make(kind, Type::number, position);
    n->left = std::move(left);
    n->right = std::move(right);
    return n;
  }

  std::unique_ptr<Node> parse_factor() {
    const Token t = take();
    switch (t.kind) {
      case Token::Kind::end:
        fail(t.position, "expected a column, number or string, got end of filter");
      case Token::Kind::number: {
        auto n = make(Kind::constant, Type::number, t.position);
        n->value = t.number;
        return n;
      }
      case Token::Kind::string: {
        auto n = make(Kind::constant, Type::string, t.position);
        n->text = t.text;
        return n;
      }
      case Token::Kind::op:
        if (t.text == "(") {
          auto inner = parse_or();
          if (!accept(")"))
            fail(peek().position, fmt::format("expected ')' to close the '(' at column {}, got {}",
                                              t.position, describe(peek())));
          return inner;
        }
        if (t.text == "-") {
          auto n = make(Kind::negate, Type::number, t.position);
          n->left = parse_factor();
          if (n->left->type != Type::number) fail(n->left->position, "'-' needs a number");
          return n;
        }
        fail(t.position, fmt::format("expected a column, number or string, got {}", describe(t)));
      case Token::Kind::identifier:
        break;
    }
    if (t.text == "true" || t.text == "false") {
      auto n = make(Kind::constant, Type::boolean, t.position);
      n->value = t.text == "true" ? 1 : 0;
      return n;
    }
    if (t.text == "and" || t.text == "or" || t.text == "not")
      fail(t.position, fmt::format("expected a column, number or string, got '{}'", t.text));
    const Column* column = data_.find(t.text);
    if (!column) {
      std::vector<std::string> names;
      for (const auto& c : data_.columns()) names.push_back(c.name);
      const auto close = closest_names(t.text, names, 1);
      fail(t.position,
           close.empty()
               ? fmt::format("unknown column '{}'; columns are: {}", t.text, fmt::join(names, ", "))
               : fmt::format("unknown column '{}'; did you mean '{}'?", t.text, close[0]));
    }
    auto n = make(Kind::column, column->is_label ? Type::label : Type::number, t.position);
    n->info = column;
    const auto it = std::find(columns_.begin(), columns_.end(), column->name);
    n->column = static_cast<std::size_t>(it - columns_.begin());
    if (it == columns_.end()) columns_.push_back(column->name);
    return n;
  }

  std::string_view text_;
  const Dataset& data_;
  std::string_view what_;
  std::vector<std::string>& columns_;
  std::vector<Token> tokens_;
  std::size_t next_ = 0;
};

void evaluate(const Node& n, const std::vector<const double*>& columns, std::size_t size,
              std::vector<double>& out) {
  out.resize(size);
  if (n.kind == Kind::constant) {
    std::fill(out.begin(), out.end(), n.value);
    return;
  }
  if (n.kind == Kind::column) {
    std::copy(columns[n.column], columns[n.column] + size, out.begin());
    return;
  }
  evaluate(*n.left, columns, size, out);
  if (n.kind == Kind::negate) {
    for (double& v : out) v = -v;
    return;
  }
  if (n.kind == Kind::truthy || n.kind == Kind::logic_not) {
    const bool negate = n.kind == Kind::logic_not;
    for (double& v : out) v = ((v != 0 && !std::isnan(v)) != negate) ? 1 : 0;
    return;
  }
  std::vector<double> right;
  evaluate(*n.right, columns, size, right);
  const auto each = [&](auto f) {
    for (std::size_t i = 0; i < size; ++i) out[i] = f(out[i], right[i]);
  };
  switch (n.kind) {
    case Kind::logic_and:
      each([](double a, double b) { return a != 0 && b != 0 ? 1.0 : 0.0; });
      break;
    case Kind::logic_or:
      each([](double a, double b) { return a != 0 || b != 0 ? 1.0 : 0.0; });
      break;
    case Kind::add:
      each([](double a, double b) { return a + b; });
      break;
    case Kind::subtract:
      each([](double a, double b) { return a - b; });
      break;
    case Kind::multiply:
      each([](double a, double b) { return a * b; });
      break;
    case Kind::divide:
      each([](double a, double b) { return a / b; });
      break;
    case Kind::compare:
      if (n.text == "==")
        each([](double a, double b) { return a == b ? 1.0 : 0.0; });
      else if (n.text == "!=")
        each([](double a, double b) { return a != b ? 1.0 : 0.0; });
      else if (n.text == "<")
        each([](double a, double b) { return a < b ? 1.0 : 0.0; });
      else if (n.text == "<=")
        each([](double a, double b) { return a <= b ? 1.0 : 0.0; });
      else if (n.text == ">")
        each([](double a, double b) { return a > b ? 1.0 : 0.0; });
      else
        each([](double a, double b) { return a >= b ? 1.0 : 0.0; });
      break;
    default:
      break;
  }
}

}  // namespace

Filter Filter::parse(std::string_view text, const Dataset& data, std::string_view what) {
  Filter f;
  f.text_ = std::string(text);
  Parser parser(f.text_, data, what, f.columns_);
  f.root_ = parser.parse();
  return f;
}

Filter::Filter(Filter&&) noexcept = default;
Filter& Filter::operator=(Filter&&) noexcept = default;
Filter::~Filter() = default;

void Filter::apply(const std::vector<const double*>& columns, std::size_t n,
                   std::vector<std::uint8_t>& keep) const {
  std::vector<double> result;
  evaluate(*root_, columns, n, result);
  for (std::size_t i = 0; i < n; ++i)
    if (result[i] == 0) keep[i] = 0;
}

}  // namespace clustersweep::analysis
