#include "inject/nccl/nccl_config.h"

#include "inject/nccl/nccl_abi.h"

namespace gt::nccl {
namespace {

using namespace abi;

constexpr uint32_t kApi = kGroupApi | kCollApi | kP2pApi | kKernelLaunch;
constexpr uint32_t kCe = kCeColl | kCeSync | kCeBatch;
constexpr uint32_t kAll = (1u << kEventTypeCount) - 1;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool ParseNumber(std::string_view s, uint64_t* out) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty() || s.size() > 16) return false;
  uint64_t v = 0;
  for (char c : s) {
    int d = c >= '0' && c <= '9' ? c - '0' : base == 16 && c >= 'a' && c <= 'f' ? c - 'a' + 10
                                          : base == 16 && c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0 || d >= base) return false;
    v = v * base + static_cast<uint64_t>(d);
  }
  *out = v;
  return true;
}

}  // namespace

uint32_t DefaultTraceMask() { return kGroup | kColl | kP2p | kKernelCh | kApi | kCe; }

bool ParseNcclTrace(std::string_view text, uint32_t* mask, std::string* error) {
  uint32_t m = 0;
  bool none = false;
  int count = 0;
  while (true) {
    size_t comma = text.find(',');
    std::string_view item = Trim(text.substr(0, comma));
    ++count;
    uint64_t number = 0;
    if (item.empty()) {
      *error = "empty name in the NCCL event list";
      return false;
    } else if (item == "group") {
      m |= kGroup;
    } else if (item == "coll") {
      m |= kColl;
    } else if (item == "p2p") {
      m |= kP2p;
    } else if (item == "kernel") {
      m |= kKernelCh | kColl | kP2p;
    } else if (item == "api") {
      m |= kApi;
    } else if (item == "proxy") {
      m |= kProxyOp | kColl | kP2p;
    } else if (item == "proxy-step") {
      m |= kProxyStep | kProxyOp | kColl | kP2p;
    } else if (item == "proxy-ctrl") {
      m |= kProxyCtrl;
    } else if (item == "net") {
      m |= kNetPlugin | kProxyStep | kProxyOp | kColl | kP2p;
    } else if (item == "ce") {
      m |= kCe;
    } else if (item == "default") {
      m |= DefaultTraceMask();
    } else if (item == "all") {
      m |= kAll;
    } else if (item == "none") {
      none = true;
    } else if (ParseNumber(item, &number)) {
      if (number > kAll) {
        *error = "NCCL event mask " + std::string(item) + " has bits above ncclProfileCeBatch (0x4000)";
        return false;
      }
      m |= static_cast<uint32_t>(number);
    } else {
      *error = "unknown NCCL event '" + std::string(item) +
               "' (known: group, coll, p2p, kernel, api, proxy, proxy-step, proxy-ctrl, net, ce, default, all, none, "
               "or a number)";
      return false;
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  if (none && count > 1) {
    *error = "'none' cannot be combined with other NCCL events";
    return false;
  }
  *mask = m;
  return true;
}

bool ParsePoolEvents(std::string_view text, uint32_t* events, std::string* error) {
  text = Trim(text);
  uint64_t v = 0;
  bool ok = !text.empty() && text.size() <= 9;
  for (char c : text) {
    if (c < '0' || c > '9') ok = false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (!ok || v < kMinPoolEvents || v > kMaxPoolEvents) {
    *error = std::string(kPoolVariable) + "='" + std::string(text) + "' is not a whole number in [" +
             std::to_string(kMinPoolEvents) + ", " + std::to_string(kMaxPoolEvents) + "]";
    return false;
  }
  *events = static_cast<uint32_t>(v);
  return true;
}

const char* EventTypeName(uint32_t type_bit) {
  switch (type_bit) {
    case kGroup: return "Group";
    case kColl: return "Coll";
    case kP2p: return "P2p";
    case kProxyOp: return "ProxyOp";
    case kProxyStep: return "ProxyStep";
    case kProxyCtrl: return "ProxyCtrl";
    case kKernelCh: return "KernelCh";
    case kNetPlugin: return "NetPlugin";
    case kGroupApi: return "GroupApi";
    case kCollApi: return "CollApi";
    case kP2pApi: return "P2pApi";
    case kKernelLaunch: return "KernelLaunch";
    case kCeColl: return "CeColl";
    case kCeSync: return "CeSync";
    case kCeBatch: return "CeBatch";
    default: return "?";
  }
}

}  // namespace gt::nccl
