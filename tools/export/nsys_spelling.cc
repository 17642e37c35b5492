#include "tools/export/nsys_spelling.h"

#include <cctype>
#include <regex>
#include <vector>

#include "tools/export/mangled_params.h"

namespace gt::exporter {
namespace {

bool IdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// {lambda(ARGS)#N} -> [lambda(ARGS) (instance N)]
std::string Lambdas(std::string s) {
  const std::string open = "{lambda(";
  size_t pos = 0;
  while ((pos = s.find(open, pos)) != std::string::npos) {
    size_t i = pos + open.size();
    int depth = 1;
    while (i < s.size() && depth > 0) {
      if (s[i] == '(')
        ++depth;
      if (s[i] == ')')
        --depth;
      ++i;
    }
    // s[i - 1] is the closing ')'; then '#', digits, '}'.
    size_t j = i;
    if (j >= s.size() || s[j] != '#') {
      pos = i;
      continue;
    }
    ++j;
    size_t digits = j;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])) != 0)
      ++j;
    if (j == digits || j >= s.size() || s[j] != '}') {
      pos = i;
      continue;
    }
    std::string args = s.substr(pos + open.size(), i - 1 - (pos + open.size()));
    std::string repl = "[lambda(" + args + ") (instance " + s.substr(digits, j - digits) + ")]";
    s.replace(pos, j + 1 - pos, repl);
    pos += repl.size();
  }
  return s;
}

// Start of the type name that ends just before `end` (an identifier with scopes and template
// arguments, or a run of builtin words such as "unsigned long").
size_t TypeStart(const std::string& s, size_t end) {
  size_t i = end;
  while (i > 0) {
    char c = s[i - 1];
    if (c == '>') {
      int depth = 0;
      while (i > 0) {
        char d = s[i - 1];
        if (d == '>')
          ++depth;
        if (d == '<')
          --depth;
        --i;
        if (depth == 0)
          break;
      }
      continue;
    }
    if (IdentChar(c) || c == ':') {
      --i;
      continue;
    }
    // "unsigned long": builtin words separated by one space.
    if (c == ' ' && i >= 2 && IdentChar(s[i - 2])) {
      size_t w = i - 1;
      size_t k = w;
      while (k > 0 && IdentChar(s[k - 1]))
        --k;
      std::string word = s.substr(k, w - k);
      static const char* const kWords[] = {"unsigned", "signed", "long", "short"};
      bool builtin = false;
      for (const char* b : kWords)
        builtin |= word == b;
      if (builtin) {
        i = k;
        continue;
      }
    }
    break;
  }
  return i;
}

// "T const" before *, &, ',', ')' or '>' -> "const T".
std::string ConstFirst(std::string s) {
  const std::string kc = " const";
  size_t pos = 0;
  while ((pos = s.find(kc, pos)) != std::string::npos) {
    size_t after = pos + kc.size();
    char next = after < s.size() ? s[after] : '\0';
    bool ends = next == '\0' || next == '*' || next == '&' || next == ',' || next == ')' || next == '>';
    if (!ends || pos == 0 || s[pos - 1] == '*' || s[pos - 1] == '&' || s[pos - 1] == ')') {
      pos = after;
      continue;
    }
    size_t start = TypeStart(s, pos);
    if (start == pos) {
      pos = after;
      continue;
    }
    std::string type = s.substr(start, pos - start);
    s.replace(start, after - start, "const " + type);
    pos = start + 6 + type.size();
  }
  return s;
}

// A space before each run of * and & that follows a type; "* const" -> "*const".
std::string PointerSpacing(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if ((c == '*' || c == '&') && i > 0 && s[i - 1] != '*' && s[i - 1] != '&' &&
        (IdentChar(s[i - 1]) || s[i - 1] == '>' || s[i - 1] == ']')) {
      out += ' ';
    }
    out += c;
  }
  size_t p = 0;
  while ((p = out.find("* const", p)) != std::string::npos)
    out.erase(p + 1, 1);
  p = 0;
  while ((p = out.find("& const", p)) != std::string::npos)
    out.erase(p + 1, 1);
  return out;
}

std::string IntegerArguments(const std::string& s) {
  static const std::regex kLiteral(R"(([<,] ?)(-?[0-9]+)(ull|ul|ll|u|l)?(?=[,>]))");
  std::string out;
  auto begin = std::sregex_iterator(s.begin(), s.end(), kLiteral);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    std::string suffix = m[3].str();
    const char* type = suffix.empty()   ? "int"
                       : suffix == "u"  ? "unsigned int"
                       : suffix == "l"  ? "long"
                       : suffix == "ul" ? "unsigned long"
                       : suffix == "ll" ? "long long"
                                        : "unsigned long long";
    out += s.substr(last, static_cast<size_t>(m.position(0)) - last);
    out += m[1].str() + "(" + type + ")" + m[2].str();
    last = static_cast<size_t>(m.position(0) + m.length(0));
  }
  out += s.substr(last);
  return out;
}

// The parameters of the final "(...)" that are bare template parameters in the mangled name,
// replaced by nsys's T<k>; the text is unchanged when the two parameter lists do not line up.
std::string TemplateParameters(const std::string& s, std::string_view mangled) {
  if (mangled.empty() || s.empty() || s.back() != ')')
    return s;
  std::optional<std::vector<std::string>> refs = TemplateParameterRefs(mangled);
  if (!refs || refs->empty())
    return s;
  bool any = false;
  for (const std::string& r : *refs)
    any |= !r.empty();
  if (!any)
    return s;
  // The opening parenthesis of the final parameter list, and its top-level commas.
  int depth = 0;
  size_t open = std::string::npos;
  for (size_t i = s.size(); i-- > 0;) {
    char c = s[i];
    if (c == ')' || c == '>' || c == ']')
      ++depth;
    if (c == '(' || c == '<' || c == '[') {
      if (--depth == 0) {
        open = i;
        break;
      }
    }
  }
  if (open == std::string::npos)
    return s;
  std::vector<std::string> params;
  std::string cur;
  depth = 0;
  for (size_t i = open + 1; i + 1 < s.size(); ++i) {
    char c = s[i];
    if (c == '(' || c == '<' || c == '[')
      ++depth;
    if (c == ')' || c == '>' || c == ']')
      --depth;
    if (c == ',' && depth == 0) {
      params.push_back(cur);
      cur.clear();
      if (i + 1 < s.size() && s[i + 1] == ' ')
        ++i;
      continue;
    }
    cur += c;
  }
  params.push_back(cur);
  if (params.size() != refs->size())
    return s;
  std::string out = s.substr(0, open + 1);
  for (size_t i = 0; i < params.size(); ++i)
    out += (i == 0 ? "" : ", ") + ((*refs)[i].empty() ? params[i] : (*refs)[i]);
  return out + ")";
}

}  // namespace

std::string NsysDemangledSpelling(std::string_view gnu_demangled, std::string_view mangled) {
  std::string s = Lambdas(TemplateParameters(std::string(gnu_demangled), mangled));
  size_t p = 0;
  while ((p = s.find("operator()", p)) != std::string::npos) {
    s.insert(p + 8, " ");
    p += 10;
  }
  s = IntegerArguments(PointerSpacing(ConstFirst(s)));
  while ((p = s.find("> >")) != std::string::npos)
    s.erase(p + 1, 1);
  return s;
}

}  // namespace gt::exporter
