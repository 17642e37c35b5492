// NVTX payload extension (nvToolsExtPayload.h): schema registration and the *Payload range/mark
// calls. NCCL registers static schemas here and attaches payloads to its ranges; we keep the
// schema and the raw payload bytes so the exporter can write NVTX_PAYLOAD_SCHEMAS/_ENTRIES.
//
// InitializeExtension runs on the application thread of an NVTX instance's first extension call.
#include <cstring>

#include "collector/schema_fields.h"
#include "collector/session.h"
#include "inject/nvtx/nvtx_hooks.h"
#include "inject/nvtx/nvtx_record.h"
#include "inject/nvtx/nvtx_registry.h"

namespace gt::nvtx {
namespace {

// One relaxed check while recording; the deferred start only before the first record.
inline bool On() { return IsEnabled(kSourceNvtx) || OnSlow(); }

uint64_t HookSchemaRegister(nvtxDomainHandle_t domain, const nvtxPayloadSchemaAttr_t* attr) {
  StartIfPending();  // the stream clock and the registry need the session
  if (attr == nullptr) return 0;
  uint64_t mask = attr->fieldMask;
  SchemaEntry entries[256];
  size_t n = 0;
  if ((mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES) && (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES) &&
      attr->entries != nullptr) {
    n = attr->numEntries < 256 ? attr->numEntries : 256;
    for (size_t i = 0; i < n; ++i) {
      const nvtxPayloadSchemaEntry_t& e = attr->entries[i];
      entries[i] = SchemaEntry{e.flags, e.type, e.name, e.description, e.arrayOrUnionDetail, e.offset};
    }
  }
  return RegisterSchema(DomainId(domain), (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME) ? attr->name : nullptr,
                        (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE) ? attr->type : NVTX_PAYLOAD_SCHEMA_TYPE_STATIC,
                        (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_FLAGS) ? attr->flags : 0,
                        (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE) ? attr->payloadStaticSize : 0,
                        (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ALIGNMENT) ? attr->packAlign : 0, attr->schemaId,
                        (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID) != 0, entries, n);
}

uint64_t HookEnumRegister(nvtxDomainHandle_t, const nvtxPayloadEnumAttr_t* attr) {
  // Enum schemas are not exported (no nsys table holds them); hand out a valid id.
  if (attr != nullptr && (attr->fieldMask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_SCHEMA_ID)) return attr->schemaId;
  return NewDynamicId();
}

void HookMarkPayload(nvtxDomainHandle_t domain, const nvtxPayloadData_t* data, size_t count) {
  if (!On()) return;
  EventArgs a;
  a.kind = field::enums::kNvtxMark;
  a.domain_id = DomainId(domain);
  a.ext = data;
  a.ext_count = data != nullptr ? count : 0;
  WriteRecord(a);
}

int HookRangePushPayload(nvtxDomainHandle_t domain, const nvtxPayloadData_t* data, size_t count) {
  if (!On()) return NVTX_NO_PUSH_POP_TRACKING;
  nvtxEventAttributes_t attr{};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.payloadType = NVTX_PAYLOAD_TYPE_EXT;
  attr.reserved0 = static_cast<int32_t>(data != nullptr ? count : 0);
  attr.payload.ullValue = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(data));
  return HookDomainRangePushEx(domain, &attr);
}

int HookRangePopPayload(nvtxDomainHandle_t domain, const nvtxPayloadData_t*, size_t) {
  // Payloads attached at pop time have no column in NVTX_EVENTS; the range still ends here.
  return HookDomainRangePop(domain);
}

nvtxRangeId_t HookRangeStartPayload(nvtxDomainHandle_t domain, const nvtxPayloadData_t* data, size_t count) {
  if (!On()) return 0;
  nvtxEventAttributes_t attr{};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.payloadType = NVTX_PAYLOAD_TYPE_EXT;
  attr.reserved0 = static_cast<int32_t>(data != nullptr ? count : 0);
  attr.payload.ullValue = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(data));
  return HookDomainRangeStartEx(domain, &attr);
}

void HookRangeEndPayload(nvtxDomainHandle_t domain, nvtxRangeId_t id, const nvtxPayloadData_t*, size_t) {
  HookDomainRangeEnd(domain, id);
}

// Enabled whenever NVTX is traced, also while a capture window is closed: callers such as the `nvtx`
// Python package ask once, when a domain is created, and keep a no-op domain for good when told no —
// a domain created before the window opened would then stay silent inside it.
// The first NVTX call may be this one (the default domain's handle is NULL: no DomainCreate came
// first): the session's configuration answers it, so the deferred start happens here.
uint8_t HookDomainIsEnabled(nvtxDomainHandle_t) {
  StartIfPending();
  return (ConfiguredSources() & kSourceNvtx) != 0 ? 1 : 0;
}

}  // namespace

int InitializeExtension(nvtxExtModuleInfo_t* info) {
  if (info == nullptr || info->structSize < sizeof(nvtxExtModuleInfo_t)) return 0;
  if (info->moduleId != NVTX_EXT_PAYLOAD_MODULEID || info->segmentsCount < 1 || info->segments == nullptr) {
    return 0;  // counters, memory and other extensions: not implemented, their calls stay no-ops
  }
  RegisterWithCollector();
  g_start_pending.store(true, std::memory_order_relaxed);  // started by the hooks (nvtx_hooks.h)
  nvtxExtModuleSegment_t& seg = info->segments[0];
  if (seg.functionSlots == nullptr) return 0;
  auto set = [&seg](size_t cbid, auto fn) {
    if (cbid < seg.slotCount) seg.functionSlots[cbid] = reinterpret_cast<intptr_t>(fn);
  };
  set(NVTX3EXT_CBID_nvtxPayloadSchemaRegister, &HookSchemaRegister);
  set(NVTX3EXT_CBID_nvtxPayloadEnumRegister, &HookEnumRegister);
  set(NVTX3EXT_CBID_nvtxMarkPayload, &HookMarkPayload);
  set(NVTX3EXT_CBID_nvtxRangePushPayload, &HookRangePushPayload);
  set(NVTX3EXT_CBID_nvtxRangePopPayload, &HookRangePopPayload);
  set(NVTX3EXT_CBID_nvtxRangeStartPayload, &HookRangeStartPayload);
  set(NVTX3EXT_CBID_nvtxRangeEndPayload, &HookRangeEndPayload);
  set(NVTX3EXT_CBID_nvtxDomainIsEnabled, &HookDomainIsEnabled);
  return 1;
}

}  // namespace gt::nvtx
