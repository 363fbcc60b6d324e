#include "explore/sweep_filter.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <string_view>

#include "core/parse.h"
#include "extern/json_util.h"

namespace orrery::sweep {

namespace {

enum class Tok { kNumber, kString, kName, kOp, kEnd };

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;
  double number = 0;
  int column = 0;  // 1-based
};

std::string Describe(const Token& t) {
  if (t.kind == Tok::kEnd) return "the end of the filter";
  if (t.kind == Tok::kString) return "the string '" + t.text + "'";
  return "'" + t.text + "'";
}

// A value while evaluating.
struct V {
  enum Type { kNumber, kString, kBool } type = kNumber;
  double n = 0;
  std::string s;
  bool b = false;
};

// Every finite double.
constexpr DoubleRange kAnyDouble{std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max(), false};

std::string_view Trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

const char* TypeName(V::Type t) { return t == V::kNumber ? "a number" : t == V::kString ? "a string" : "a boolean"; }

V FromValue(const Value& v) {
  V out;
  if (!v.is_string && (v.text == "true" || v.text == "false")) {
    out.type = V::kBool;
    out.b = v.text == "true";
    return out;
  }
  const char c = v.text.empty() ? '\0' : v.text[0];
  if (!v.is_string && (std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+') &&
      v.text.find_first_of("xXnN") == std::string::npos) {  // no hex, inf or nan
    // A number as written (a leading '+' allowed), finite; else the value is text.
    const std::string_view t = c == '+' ? std::string_view(v.text).substr(1) : std::string_view(v.text);
    static const Where kValue{"", 0, "value"};
    auto d = ParseDouble(t, kValue, kAnyDouble);
    if (d.ok() && t == Trimmed(t)) {
      out.n = d.value();
      return out;
    }
  }
  out.type = V::kString;
  out.s = v.text;
  return out;
}

struct Node {
  enum Kind { kConst, kVar, kNeg, kNot, kBinary } kind = kConst;
  V value;         // kConst
  int var = -1;    // kVar: index into the filter's names
  std::string op;  // kBinary
  int a = -1, b = -1;
  int column = 0;
  int depth = 1;
};

class Parser {
 public:
  Parser(const std::string& text, std::string where) : text_(text), where_(std::move(where)) {}

  Status Parse() {
    ORRERY_RETURN_IF_ERROR(Lex());
    auto root = Or();
    if (!root.ok()) return root.status();
    if (Peek().kind != Tok::kEnd) return Expected("an operator (or, and, ==, <, +, * ...) or the end");
    if (too_deep_) {
      return Error(too_deep_, "the expression nests more than " + std::to_string(kMaxDepth) +
                                  " levels (operators and parentheses); split it into several filters");
    }
    root_ = root.value();
    return Status::Ok();
  }

  std::vector<Node> nodes;
  std::vector<std::pair<std::string, int>> names;  // as written, and the column of the first use
  int root() const { return root_; }

 private:
  Status Lex() {
    size_t i = 0;
    while (true) {
      while (i < text_.size() && std::isspace(static_cast<unsigned char>(text_[i]))) ++i;
      Token t;
      t.column = static_cast<int>(i) + 1;
      if (i >= text_.size()) {
        toks_.push_back(t);
        return Status::Ok();
      }
      const char c = text_[i];
      if (std::isdigit(static_cast<unsigned char>(c)) ||
          (c == '.' && i + 1 < text_.size() && std::isdigit(static_cast<unsigned char>(text_[i + 1])))) {
        ORRERY_RETURN_IF_ERROR(LexNumber(&i, &t));
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        ORRERY_RETURN_IF_ERROR(LexName(&i, &t));
      } else if (c == '\'' || c == '"') {
        ORRERY_RETURN_IF_ERROR(LexString(&i, &t));
      } else {
        ORRERY_RETURN_IF_ERROR(LexOperator(&i, &t));
      }
      toks_.push_back(t);
    }
  }

  // Each reads the token that starts at *i into *t and moves *i past it.
  Status LexNumber(size_t* i, Token* t) const {
    const char* begin = text_.data() + *i;
    double ignored = 0;
    const size_t len = static_cast<size_t>(std::from_chars(begin, text_.data() + text_.size(), ignored).ptr - begin);
    t->kind = Tok::kNumber;
    t->text = text_.substr(*i, len);
    // The literal through core/parse.h: 1e999 is not infinity, it is refused.
    auto number = ParseDouble(t->text, Where{"", 0, "the number"}, kAnyDouble);
    if (!number.ok()) {
      return Error(static_cast<int>(*i) + 1,
                   "the number " + t->text + " is beyond a double; allowed: a finite number within about 1.8e308");
    }
    t->number = number.value();
    *i += len;
    if (*i < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[*i])) || text_[*i] == '_')) {
      return Error(static_cast<int>(*i) + 1, "expected an operator after the number " + t->text + ", found '" +
                                                 std::string(1, text_[*i]) +
                                                 "' (units are not allowed: write 50, not 50GB)");
    }
    return Status::Ok();
  }

  Status LexName(size_t* i, Token* t) const {
    size_t j = *i + 1;
    while (j < text_.size()) {
      const char d = text_[j];
      const bool joins = d == '-' && std::isalpha(static_cast<unsigned char>(text_[j - 1])) && j + 1 < text_.size() &&
                         std::isalpha(static_cast<unsigned char>(text_[j + 1]));
      if (!(std::isalnum(static_cast<unsigned char>(d)) || d == '_' || d == '.' || joins)) break;
      ++j;
    }
    t->text = text_.substr(*i, j - *i);
    t->kind = (t->text == "and" || t->text == "or" || t->text == "not") ? Tok::kOp : Tok::kName;
    if (t->text.back() == '.')
      return Error(static_cast<int>(j),
                   "expected a name after '.', found " +
                       std::string(j < text_.size() ? "'" + std::string(1, text_[j]) + "'" : "the end of the filter"));
    *i = j;
    return Status::Ok();
  }

  Status LexString(size_t* i, Token* t) const {
    const char quote = text_[*i];
    const size_t close = text_.find(quote, *i + 1);
    if (close == std::string::npos)
      return Error(t->column, std::string("the string opened here has no closing ") + quote);
    t->kind = Tok::kString;
    t->text = text_.substr(*i + 1, close - *i - 1);
    *i = close + 1;
    return Status::Ok();
  }

  Status LexOperator(size_t* i, Token* t) const {
    static const char* const kOps[] = {"==", "!=", "<=", ">=", "&&", "||", "<", ">", "+", "-", "*", "/", "(", ")", "!"};
    for (const char* op : kOps) {
      const std::string o = op;
      if (text_.compare(*i, o.size(), o) == 0) {
        t->kind = Tok::kOp;
        t->text = o;
        *i += o.size();
        return Status::Ok();
      }
    }
    const char c = text_[*i];
    return Error(t->column, std::string("unexpected character '") + c +
                                "'; allowed: numbers, 'strings', names, + - * / == != < <= > >= and or not ( )" +
                                (c == '=' ? " (compare with ==)" : ""));
  }

  const Token& Peek() const { return toks_[pos_]; }
  bool Accept(std::initializer_list<const char*> ops, std::string* which = nullptr, int* column = nullptr) {
    const Token& t = Peek();
    if (t.kind != Tok::kOp) return false;
    for (const char* op : ops) {
      if (t.text == op) {
        if (which) *which = t.text;
        if (column) *column = t.column;
        ++pos_;
        return true;
      }
    }
    return false;
  }

  Status Error(int column, const std::string& what) const {
    return Status::Invalid(where_ + " at column " + std::to_string(column) + ": " + what);
  }
  Status Expected(const std::string& what) const {
    return Error(Peek().column, "expected " + what + ", found " + Describe(Peek()));
  }

  // Nodes know their depth; evaluation recurses that deep, so it is bounded.
  static constexpr int kMaxDepth = 200;
  int Add(Node n) {
    n.depth = 1 + std::max(n.a >= 0 ? nodes[n.a].depth : 0, n.b >= 0 ? nodes[n.b].depth : 0);
    if (n.depth > kMaxDepth && !too_deep_) too_deep_ = n.column;
    nodes.push_back(std::move(n));
    return static_cast<int>(nodes.size()) - 1;
  }
  int too_deep_ = 0;  // the column where the expression got too deep
  int open_ = 0;      // parentheses and prefix operators open while parsing

  Result<int> Binary(Result<int> (Parser::*next)(), std::initializer_list<const char*> ops) {
    auto left = (this->*next)();
    if (!left.ok()) return left;
    std::string op;
    int column = 0;
    while (Accept(ops, &op, &column)) {
      auto right = (this->*next)();
      if (!right.ok()) return right;
      Node n;
      n.kind = Node::kBinary;
      n.op = op == "||" ? "or" : op == "&&" ? "and" : op;
      n.a = left.value();
      n.b = right.value();
      n.column = column;
      left = Add(std::move(n));
    }
    return left;
  }

  Result<int> Or() { return Binary(&Parser::And, {"or", "||"}); }
  Result<int> And() { return Binary(&Parser::Not, {"and", "&&"}); }
  Result<int> Not() {
    int column = 0;
    if (Accept({"not", "!"}, nullptr, &column)) {
      if (++open_ > kMaxDepth) return Error(column, "more than " + std::to_string(kMaxDepth) + " nested operators");
      auto inner = Not();
      --open_;
      if (!inner.ok()) return inner;
      Node n;
      n.kind = Node::kNot;
      n.a = inner.value();
      n.column = column;
      return Add(std::move(n));
    }
    return Cmp();
  }
  Result<int> Cmp() {
    auto left = Sum();
    if (!left.ok()) return left;
    std::string op;
    int column = 0;
    if (!Accept({"==", "!=", "<=", ">=", "<", ">"}, &op, &column)) return left;
    auto right = Sum();
    if (!right.ok()) return right;
    if (Peek().kind == Tok::kOp && (Peek().text == "==" || Peek().text == "!=" || Peek().text == "<" ||
                                    Peek().text == "<=" || Peek().text == ">" || Peek().text == ">=")) {
      return Error(Peek().column, "comparisons do not chain: write 'a < b and b < c'");
    }
    Node n;
    n.kind = Node::kBinary;
    n.op = op;
    n.a = left.value();
    n.b = right.value();
    n.column = column;
    return Add(std::move(n));
  }
  Result<int> Sum() { return Binary(&Parser::Prod, {"+", "-"}); }
  Result<int> Prod() { return Binary(&Parser::Unary, {"*", "/"}); }
  Result<int> Unary() {
    int column = 0;
    if (Accept({"-"}, nullptr, &column)) {
      if (++open_ > kMaxDepth) return Error(column, "more than " + std::to_string(kMaxDepth) + " nested operators");
      auto inner = Unary();
      --open_;
      if (!inner.ok()) return inner;
      Node n;
      n.kind = Node::kNeg;
      n.a = inner.value();
      n.column = column;
      return Add(std::move(n));
    }
    return Primary();
  }
  Result<int> Primary() {
    const Token t = Peek();
    Node n;
    n.column = t.column;
    if (t.kind == Tok::kNumber) {
      ++pos_;
      n.value.n = t.number;
      return Add(std::move(n));
    }
    if (t.kind == Tok::kString) {
      ++pos_;
      n.value.type = V::kString;
      n.value.s = t.text;
      return Add(std::move(n));
    }
    if (t.kind == Tok::kName) {
      ++pos_;
      if (t.text == "true" || t.text == "false") {
        n.value.type = V::kBool;
        n.value.b = t.text == "true";
        return Add(std::move(n));
      }
      n.kind = Node::kVar;
      auto it = std::find_if(names.begin(), names.end(), [&](const auto& x) { return x.first == t.text; });
      if (it == names.end()) {
        names.push_back({t.text, t.column});
        it = names.end() - 1;
      }
      n.var = static_cast<int>(it - names.begin());
      return Add(std::move(n));
    }
    if (Accept({"("})) {
      if (++open_ > kMaxDepth) {
        return Error(t.column, "more than " + std::to_string(kMaxDepth) + " nested parentheses");
      }
      auto inner = Or();
      --open_;
      if (!inner.ok()) return inner;
      if (!Accept({")"})) return Expected("')'");
      return inner;
    }
    return Expected("a number, a 'string', true, false, a name or '('");
  }

  const std::string& text_;
  std::string where_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  int root_ = -1;
};

Result<V> Eval(const std::vector<Node>& nodes, int i, const std::vector<V>& vars);

Status TypeError(const Node& n, const std::string& what, const V& got) {
  return Status::Invalid("'" + n.op + "' at column " + std::to_string(n.column) + " " + what + ", got " +
                         TypeName(got.type));
}

// '-' and 'not'.
Result<V> EvalPrefix(const std::vector<Node>& nodes, const Node& n, const std::vector<V>& vars) {
  auto a = Eval(nodes, n.a, vars);
  if (!a.ok()) return a;
  if (n.kind == Node::kNeg) {
    if (a->type != V::kNumber) {
      return Status::Invalid("'-' at column " + std::to_string(n.column) + " takes a number, got " + TypeName(a->type));
    }
    a->n = -a->n;
    return a;
  }
  if (a->type != V::kBool) {
    return Status::Invalid("'not' at column " + std::to_string(n.column) + " takes true or false, got " +
                           TypeName(a->type));
  }
  a->b = !a->b;
  return a;
}

// 'and' and 'or', given the left side's value: the right side only when it decides.
Result<V> EvalLogic(const std::vector<Node>& nodes, const Node& n, const V& a, const std::vector<V>& vars) {
  if (a.type != V::kBool) return TypeError(n, "takes true or false", a);
  if (n.op == "and" ? !a.b : a.b) return a;  // short-circuit
  auto b = Eval(nodes, n.b, vars);
  if (b.ok() && b->type != V::kBool) return TypeError(n, "takes true or false", b.value());
  return b;
}

// '==' and '!=': two values of one type.
Result<V> EvalEquality(const Node& n, const V& a, const V& b) {
  if (a.type != b.type) {
    return Status::Invalid("'" + n.op + "' at column " + std::to_string(n.column) + " compares " + TypeName(a.type) +
                           " with " + TypeName(b.type));
  }
  V out;
  out.type = V::kBool;
  const bool eq = a.type == V::kNumber ? a.n == b.n : a.type == V::kString ? a.s == b.s : a.b == b.b;
  out.b = n.op == "==" ? eq : !eq;
  return out;
}

// < <= > >= + - * /: two numbers.
Result<V> EvalNumeric(const Node& n, const V& a, const V& b) {
  if (a.type != V::kNumber) return TypeError(n, "takes numbers", a);
  if (b.type != V::kNumber) return TypeError(n, "takes numbers", b);
  const double x = a.n, y = b.n;
  V out;
  out.type = V::kBool;
  if (n.op == "<") out.b = x < y;
  if (n.op == "<=") out.b = x <= y;
  if (n.op == ">") out.b = x > y;
  if (n.op == ">=") out.b = x >= y;
  if (n.op[0] == '<' || n.op[0] == '>') return out;
  out.type = V::kNumber;
  if (n.op == "+") out.n = x + y;
  if (n.op == "-") out.n = x - y;
  if (n.op == "*") out.n = x * y;
  if (n.op == "/") {
    if (y == 0) return Status::Invalid("'/' at column " + std::to_string(n.column) + " divides by zero");
    out.n = x / y;
  }
  return out;
}

// Evaluates node `i`; `vars` are the values of the filter's names at this point.
Result<V> Eval(const std::vector<Node>& nodes, int i, const std::vector<V>& vars) {
  const Node& n = nodes[i];
  switch (n.kind) {
    case Node::kConst: return n.value;
    case Node::kVar: return vars[n.var];
    case Node::kNeg:
    case Node::kNot: return EvalPrefix(nodes, n, vars);
    case Node::kBinary: break;
  }
  auto a = Eval(nodes, n.a, vars);
  if (!a.ok()) return a;
  if (n.op == "and" || n.op == "or") return EvalLogic(nodes, n, a.value(), vars);
  auto b = Eval(nodes, n.b, vars);
  if (!b.ok()) return b;
  if (n.op == "==" || n.op == "!=") return EvalEquality(n, a.value(), b.value());
  return EvalNumeric(n, a.value(), b.value());
}

std::string PointText(const std::vector<Assignment>& point) {
  std::string s;
  for (const Assignment& a : point) s += (s.empty() ? "" : ", ") + a.path + "=" + a.value.text;
  return s;
}

// What a filter's names may stand for.
struct NameScope {
  const std::vector<std::string>& valid_paths;
  const std::set<std::string>& axes;  // paths that have a value at some point
  const std::map<std::string, Value>& base;
};

// A filter as messages name it: `spec.yml:7: filters[0] 'tp <= 4'`.
std::string FilterWhere(const std::string& file, const FilterText& filter, size_t index) {
  const std::string& text = filter.text;  // a long one is shown by its start
  return file + ":" + std::to_string(filter.line) + ": filters[" + std::to_string(index) + "] '" +
         (text.size() > 120 ? text.substr(0, 100) + "...' (" + std::to_string(text.size()) + " characters)"
                            : text + "'");
}

// `at`: where the name is written. Names the closest name with a value and the axes.
Status UnknownName(const std::string& at, const std::string& name, const NameScope& scope) {
  std::vector<std::string> known;  // the names with a value, full and short
  for (const std::string& p : scope.valid_paths) {
    if (!scope.axes.count(p) && !scope.base.count(p)) continue;
    known.push_back(p);
    for (size_t dot = p.find('.'); dot != std::string::npos; dot = p.find('.', dot + 1))
      known.push_back(p.substr(dot + 1));
  }
  std::string close = ClosestMatch(name, known);
  for (const std::string& k : known) {
    if (close.empty() && k.rfind(name, 0) == 0) close = k;  // a name cut short: dim1.bandwidth
  }
  std::vector<std::string> axes(scope.axes.begin(), scope.axes.end());
  return Status::Invalid(
      at + "unknown name '" + name + "'" + (close.empty() ? "" : " (did you mean '" + close + "'?)") +
      (name.find('-') != std::string::npos ? " ('-' between letters is part of a name; write subtraction with spaces)"
                                           : "") +
      (close.empty() && name.find('.') == std::string::npos ? " (a text value is quoted: '" + name + "')" : "") +
      "; a name is a path of the spec or a dotted tail of one (tp for gen.tp); the axes: " +
      (axes.empty() ? std::string("none") : JoinStrings(axes, ", ")));
}

// The path `name` stands for: itself, or the one path it is a dotted tail of.
Result<std::string> ResolveName(const std::string& at, const std::string& name, const NameScope& scope) {
  std::vector<std::string> matches;
  for (const std::string& p : scope.valid_paths) {
    if (p == name) {
      matches = {p};
      break;
    }
    if (p.size() > name.size() && p.compare(p.size() - name.size(), name.size(), name) == 0 &&
        p[p.size() - name.size() - 1] == '.') {
      matches.push_back(p);
    }
  }
  if (matches.empty()) return UnknownName(at, name, scope);
  if (matches.size() > 1) {
    return Status::Invalid(at + "'" + name + "' names several paths (" + JoinStrings(matches, ", ") +
                           "); write more of the path");
  }
  return matches[0];
}

struct Compiled {
  Parser parser;
  std::vector<std::string> paths;  // per name
  std::string where;
};

Result<std::unique_ptr<Compiled>> Compile(const std::string& file, const FilterText& filter, size_t index,
                                          const NameScope& scope) {
  const std::string where = FilterWhere(file, filter, index);
  auto c = std::make_unique<Compiled>(Compiled{Parser(filter.text, where), {}, where});
  ORRERY_RETURN_IF_ERROR(c->parser.Parse());
  for (const auto& [name, column] : c->parser.names) {
    std::string path;
    ORRERY_PARSE_OR_RETURN(path, ResolveName(where + " at column " + std::to_string(column) + ": ", name, scope));
    c->paths.push_back(std::move(path));
  }
  return c;
}

// Whether filter `c` holds at point `i`; `vars` is scratch space.
Result<bool> Holds(const Compiled& c, const std::vector<Assignment>& point, uint64_t i,
                   const std::map<std::string, Value>& base, std::vector<V>* vars) {
  vars->clear();
  for (size_t v = 0; v < c.paths.size(); ++v) {
    const std::string& path = c.paths[v];
    const Value* value = nullptr;
    for (const Assignment& a : point) {
      if (a.path == path) value = &a.value;
    }
    if (!value) {
      auto it = base.find(path);
      if (it == base.end()) {
        const std::string& name = c.parser.names[v].first;
        return Status::Invalid(c.where + ": '" + name + "'" + (name == path ? "" : " (" + path + ")") +
                               " has no value at point " + std::to_string(i) + " (" + PointText(point) +
                               "): it is not on an axis there and the base does not set it");
      }
      value = &it->second;
    }
    vars->push_back(FromValue(*value));
  }
  auto r = Eval(c.parser.nodes, c.parser.root(), *vars);
  if (!r.ok()) {
    return Status::Invalid(c.where + ": at point " + std::to_string(i) + " (" + PointText(point) +
                           "): " + r.status().message());
  }
  if (r->type != V::kBool) {
    return Status::Invalid(c.where + ": gives " + std::string(TypeName(r->type)) + ", not true or false (at point " +
                           std::to_string(i) + "); a filter is a condition, e.g. 'tp * pp <= 64'");
  }
  return r->b;
}

}  // namespace

struct PointFilters::Impl {
  std::map<std::string, Value> base;
  std::vector<std::unique_ptr<Compiled>> compiled;
  std::vector<V> vars;  // scratch space
};

PointFilters::PointFilters(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PointFilters::~PointFilters() = default;

Result<std::unique_ptr<PointFilters>> PointFilters::Compile(const std::string& file,
                                                            const std::vector<FilterText>& filters,
                                                            const std::vector<std::string>& axis_paths,
                                                            std::map<std::string, Value> base,
                                                            const std::vector<std::string>& valid_paths) {
  auto impl = std::make_unique<Impl>();
  impl->base = std::move(base);
  // Paths that have a value somewhere: the points' and the base's.
  const std::set<std::string> axis_set(axis_paths.begin(), axis_paths.end());
  const NameScope scope{valid_paths, axis_set, impl->base};
  for (size_t f = 0; f < filters.size(); ++f) {
    impl->compiled.emplace_back();
    ORRERY_PARSE_OR_RETURN(impl->compiled.back(), orrery::sweep::Compile(file, filters[f], f, scope));
  }
  return std::unique_ptr<PointFilters>(new PointFilters(std::move(impl)));
}

Result<bool> PointFilters::Holds(const std::vector<Assignment>& point, uint64_t index) {
  for (const auto& c : impl_->compiled) {
    bool keep = true;
    ORRERY_PARSE_OR_RETURN(keep, orrery::sweep::Holds(*c, point, index, impl_->base, &impl_->vars));
    if (!keep) return false;
  }
  return true;
}

Result<std::vector<uint64_t>> FilterPoints(const std::string& file, const std::vector<FilterText>& filters,
                                           const std::vector<std::vector<Assignment>>& points,
                                           const std::map<std::string, Value>& base,
                                           const std::vector<std::string>& valid_paths) {
  std::vector<std::string> axis_paths;
  for (const auto& p : points) {
    for (const Assignment& a : p) axis_paths.push_back(a.path);
  }
  ORRERY_PARSE_OR_RETURN(std::unique_ptr<PointFilters> compiled,
                         PointFilters::Compile(file, filters, axis_paths, base, valid_paths));
  std::vector<uint64_t> kept;
  for (uint64_t i = 0; i < points.size(); ++i) {
    bool keep = true;
    ORRERY_PARSE_OR_RETURN(keep, compiled->Holds(points[i], i));
    if (keep) kept.push_back(i);
  }
  return kept;
}

}  // namespace orrery::sweep
