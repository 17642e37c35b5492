#include "tools/export/mangled_params.h"

#include <cctype>
#include <cstring>

namespace gt::exporter {
namespace {

// A cursor over a mangled name; every Skip* returns false (and the parse gives up) on what it does
// not know. Depth-limited against hostile input.
class Parser {
 public:
  explicit Parser(std::string_view m) : m_(m) {}
  size_t pos() const { return p_; }
  bool AtEnd() const { return p_ >= m_.size(); }
  char Peek(size_t ahead = 0) const { return p_ + ahead < m_.size() ? m_[p_ + ahead] : '\0'; }

  // <encoding> after "_Z" (or after "Z" of a local name): name, then the function's types.
  // *template_fn: the name ended in template arguments (then the first type is the return type).
  bool SkipName(bool* template_fn) {
    if (++depth_ > 64)
      return false;
    bool ok = SkipNameInner(template_fn);
    --depth_;
    return ok;
  }

  bool SkipType() {
    if (++depth_ > 64)
      return false;
    bool ok = SkipTypeInner();
    --depth_;
    return ok;
  }

 private:
  bool SourceName() {
    size_t n = 0;
    if (!std::isdigit(static_cast<unsigned char>(Peek())))
      return false;
    while (std::isdigit(static_cast<unsigned char>(Peek()))) {
      n = n * 10 + static_cast<size_t>(m_[p_++] - '0');
      if (n > m_.size())
        return false;  // longer than the name: not a source name (and no overflow)
    }
    if (n == 0 || p_ + n > m_.size())
      return false;
    p_ += n;
    return true;
  }

  bool Substitution() {  // at 'S'
    ++p_;
    char c = Peek();
    if (c != '\0' && std::strchr("absiod", c) != nullptr) {
      ++p_;
      return true;
    }
    while (std::isalnum(static_cast<unsigned char>(Peek())) && Peek() != '_')
      ++p_;
    if (Peek() != '_')
      return false;
    ++p_;
    return true;
  }

  bool TemplateArgs() {  // at 'I' or 'J'
    ++p_;
    while (Peek() != 'E') {
      if (AtEnd())
        return false;
      char c = Peek();
      if (c == 'L') {  // literal: L <type> <value> E, or L _Z <encoding> E
        ++p_;
        if (Peek() == '_' && Peek(1) == 'Z') {
          p_ += 2;
          bool t = false;
          if (!SkipName(&t) || !SkipParams(t))
            return false;
        } else {
          if (!SkipType())
            return false;
          while (!AtEnd() && Peek() != 'E')
            ++p_;
        }
        if (Peek() != 'E')
          return false;
        ++p_;
      } else if (c == 'X') {  // expression: not needed for kernel names seen so far
        return false;
      } else if (c == 'J') {
        if (!TemplateArgs())
          return false;
      } else if (!SkipType()) {
        return false;
      }
    }
    ++p_;
    return true;
  }

  // One component of a nested name or an unqualified name. *templ: it was template arguments.
  bool Component(bool* templ) {
    *templ = false;
    char c = Peek();
    if (std::isdigit(static_cast<unsigned char>(c)))
      return SourceName();
    if (c == 'S')
      return Substitution();
    if (c == 'I') {
      *templ = true;
      return TemplateArgs();
    }
    if (c == 'C' || c == 'D') {  // constructor / destructor
      if (c == 'D' && (Peek(1) == 't' || Peek(1) == 'T'))
        return false;
      p_ += 2;
      return true;
    }
    if (c == 'U' && Peek(1) == 'l') {  // lambda: Ul <types> E [n] _
      p_ += 2;
      while (Peek() != 'E') {
        if (AtEnd() || !SkipType())
          return false;
      }
      ++p_;
      while (std::isdigit(static_cast<unsigned char>(Peek())))
        ++p_;
      if (Peek() != '_')
        return false;
      ++p_;
      return true;
    }
    if (c == 'U' && Peek(1) == 't') {  // unnamed type: Ut [n] _
      p_ += 2;
      while (std::isdigit(static_cast<unsigned char>(Peek())))
        ++p_;
      if (Peek() != '_')
        return false;
      ++p_;
      return true;
    }
    if (std::islower(static_cast<unsigned char>(c)) && std::islower(static_cast<unsigned char>(Peek(1)))) {
      bool conversion = c == 'c' && Peek(1) == 'v';  // operator names; cv <type> converts
      p_ += 2;
      return conversion ? SkipType() : true;
    }
    return false;
  }

  bool Nested(bool* template_fn) {  // at 'N'
    ++p_;
    while (Peek() == 'r' || Peek() == 'V' || Peek() == 'K')
      ++p_;
    if (Peek() == 'R' || Peek() == 'O')
      ++p_;
    bool templ = false;
    while (Peek() != 'E') {
      if (AtEnd() || !Component(&templ))
        return false;
    }
    ++p_;
    *template_fn = templ;
    return true;
  }

  bool Local(bool* template_fn) {  // at 'Z': Z <encoding> E <entity> [_ <n>]
    ++p_;
    bool t = false;
    if (!SkipName(&t) || !SkipParams(t))
      return false;
    if (Peek() != 'E')
      return false;
    ++p_;
    if (Peek() == 's') {
      ++p_;
    } else if (!SkipName(template_fn)) {
      return false;
    }
    if (Peek() == '_') {
      ++p_;
      while (std::isdigit(static_cast<unsigned char>(Peek())))
        ++p_;
    }
    return true;
  }

  bool SkipNameInner(bool* template_fn) {
    *template_fn = false;
    char c = Peek();
    if (c == 'N')
      return Nested(template_fn);
    if (c == 'Z')
      return Local(template_fn);
    if (c == 'S' && Peek(1) == 't') {
      p_ += 2;
      bool templ = false;
      if (!Component(&templ))
        return false;
    } else {
      bool templ = false;
      if (!Component(&templ))
        return false;
    }
    if (Peek() == 'I') {
      *template_fn = true;
      return TemplateArgs();
    }
    return true;
  }

  bool SkipTypeInner() {
    char c = Peek();
    if (c == 'r' || c == 'V' || c == 'K' || c == 'P' || c == 'R' || c == 'O') {
      ++p_;
      return SkipType();
    }
    if (c != '\0' && std::strchr("vwbcahstijlmxynofdegz", c) != nullptr) {
      ++p_;
      return true;
    }
    if (c == 'D') {
      char d = Peek(1);
      if (d == 'p') {
        p_ += 2;
        return SkipType();
      }
      if (d == 'F') {  // DF<n>_ : _FloatN
        p_ += 2;
        while (std::isdigit(static_cast<unsigned char>(Peek())))
          ++p_;
        if (Peek() != '_')
          return false;
        ++p_;
        return true;
      }
      if (d != '\0' && std::strchr("hfdeisacn", d) != nullptr) {
        p_ += 2;
        return true;
      }
      return false;
    }
    if (c == 'T') {
      ++p_;
      while (std::isdigit(static_cast<unsigned char>(Peek())))
        ++p_;
      if (Peek() != '_')
        return false;
      ++p_;
      return Peek() == 'I' ? TemplateArgs() : true;
    }
    if (c == 'S') {
      bool templ = false;
      if (Peek(1) == 't') {
        p_ += 2;
        if (!Component(&templ))
          return false;
      } else if (!Substitution()) {
        return false;
      }
      return Peek() == 'I' ? TemplateArgs() : true;
    }
    if (c == 'N' || c == 'Z') {
      bool t = false;
      return SkipName(&t);
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (!SourceName())
        return false;
      return Peek() == 'I' ? TemplateArgs() : true;
    }
    if (c == 'F') {  // F [Y] <return> <params> [R|O] E
      ++p_;
      if (Peek() == 'Y')
        ++p_;
      while (Peek() != 'E') {
        if (AtEnd())
          return false;
        if ((Peek() == 'R' || Peek() == 'O') && Peek(1) == 'E') {
          ++p_;
          continue;
        }
        if (!SkipType())
          return false;
      }
      ++p_;
      return true;
    }
    if (c == 'A') {  // A [n] _ <type>
      ++p_;
      while (std::isdigit(static_cast<unsigned char>(Peek())))
        ++p_;
      if (Peek() != '_')
        return false;
      ++p_;
      return SkipType();
    }
    if (c == 'M') {
      ++p_;
      return SkipType() && SkipType();
    }
    return false;
  }

 public:
  // The types after a function's name: return type first for a template, then the parameters,
  // up to the end or an 'E' (the end of a local name's encoding). Parameters go to *params.
  bool SkipParams(bool template_fn, std::vector<std::string_view>* params = nullptr) {
    if (template_fn && !SkipType())
      return false;
    while (!AtEnd() && Peek() != 'E' && Peek() != '.') {
      size_t start = p_;
      if (!SkipType())
        return false;
      if (params != nullptr)
        params->push_back(m_.substr(start, p_ - start));
    }
    return true;
  }

 private:
  std::string_view m_;
  size_t p_ = 0;
  int depth_ = 0;
};

}  // namespace

std::optional<std::vector<std::string>> TemplateParameterRefs(std::string_view mangled) {
  if (mangled.size() < 3 || mangled.substr(0, 2) != "_Z")
    return std::nullopt;
  Parser p(mangled.substr(2));
  bool template_fn = false;
  std::vector<std::string_view> params;
  if (!p.SkipName(&template_fn) || !p.SkipParams(template_fn, &params))
    return std::nullopt;
  if (!p.AtEnd() && p.Peek() != '.')
    return std::nullopt;
  std::vector<std::string> out;
  if (params.size() == 1 && params[0] == "v")
    return out;
  for (std::string_view t : params) {
    std::string ref;
    if (t.size() >= 2 && t.front() == 'T' && t.back() == '_') {
      std::string_view digits = t.substr(1, t.size() - 2);
      bool numeric = true;
      for (char ch : digits)
        numeric &= std::isdigit(static_cast<unsigned char>(ch)) != 0;
      if (numeric && digits.size() <= 6) {  // T_ is the first parameter, T0_ the second, ...
        size_t index = 0;
        for (char ch : digits)
          index = index * 10 + static_cast<size_t>(ch - '0');
        ref = "T" + std::to_string(digits.empty() ? 1 : index + 2);
      }
    }
    out.push_back(ref);
  }
  return out;
}

}  // namespace gt::exporter
