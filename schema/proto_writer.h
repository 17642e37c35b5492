// ProtoWriter: a minimal protobuf wire-format encoder. libgtrace.so writes its stream with it
// (house style: no libprotobuf in the host process); tools/ writes other protobuf formats with it
// (Perfetto traces). Output is checked against protoc-generated decoders in tests.
//
// Used by one thread at a time (the drain thread); not thread-safe. Owns its byte buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace gt {

class ProtoWriter {
 public:
  ProtoWriter() = default;
  ProtoWriter(const ProtoWriter&) = delete;
  ProtoWriter& operator=(const ProtoWriter&) = delete;

  void Clear() {
    buf_.clear();
    open_.clear();
  }
  void Reserve(size_t bytes) { buf_.reserve(bytes); }
  const std::string& bytes() const { return buf_; }
  std::string* mutable_bytes() { return &buf_; }
  size_t size() const { return buf_.size(); }
  size_t nesting_depth() const { return open_.size(); }

  // Scalar fields. Zero values are written too; callers skip defaults where the proto3 default
  // should stay implicit (use the *IfNonZero helpers).
  void Varint(uint32_t field, uint64_t value) {
    Tag(field, 0);
    RawVarint(value);
  }
  void VarintIfNonZero(uint32_t field, uint64_t value) {
    if (value != 0) Varint(field, value);
  }
  void Bool(uint32_t field, bool value) { Varint(field, value ? 1 : 0); }
  void SInt(uint32_t field, int64_t value) {  // sint32/sint64: zigzag
    Tag(field, 0);
    RawVarint((static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63));
  }
  void Int(uint32_t field, int64_t value) {  // int32/int64: two's complement varint
    Tag(field, 0);
    RawVarint(static_cast<uint64_t>(value));
  }
  void Fixed32(uint32_t field, uint32_t value) {
    Tag(field, 5);
    RawLittleEndian(&value, 4);
  }
  void Fixed64(uint32_t field, uint64_t value) {
    Tag(field, 1);
    RawLittleEndian(&value, 8);
  }
  void Double(uint32_t field, double value) {
    Tag(field, 1);
    RawLittleEndian(&value, 8);
  }
  void Float(uint32_t field, float value) {
    Tag(field, 5);
    RawLittleEndian(&value, 4);
  }
  void Bytes(uint32_t field, const void* data, size_t size) {
    Tag(field, 2);
    RawVarint(size);
    buf_.append(static_cast<const char*>(data), size);
  }
  void String(uint32_t field, std::string_view text) { Bytes(field, text.data(), text.size()); }
  void StringIfNonEmpty(uint32_t field, std::string_view text) {
    if (!text.empty()) String(field, text);
  }

  // Nested message: Begin reserves one byte for the length (most messages are < 128 bytes), End
  // writes it and, for a longer message, makes room for the longer varint by moving the body up.
  // Nesting depth is bounded only by memory; Begin/End must pair.
  void BeginNested(uint32_t field) {
    Tag(field, 2);
    open_.push_back(buf_.size());
    buf_.push_back('\0');
  }
  void EndNested();

  // Raw pieces, for framing code that builds envelopes itself.
  void Tag(uint32_t field, uint32_t wire_type) { RawVarint((static_cast<uint64_t>(field) << 3) | wire_type); }
  void RawVarint(uint64_t value) {
    if (value < 0x80) {  // tags and small values: one byte, no memcpy call (drain-thread hot spot)
      buf_.push_back(static_cast<char>(value));
      return;
    }
    char tmp[10];
    size_t n = EncodeVarint(value, tmp);
    buf_.append(tmp, n);
  }
  void RawBytes(const void* data, size_t size) { buf_.append(static_cast<const char*>(data), size); }

  static size_t EncodeVarint(uint64_t value, char* out) {
    size_t n = 0;
    while (value >= 0x80) {
      out[n++] = static_cast<char>((value & 0x7f) | 0x80);
      value >>= 7;
    }
    out[n++] = static_cast<char>(value);
    return n;
  }

 private:
  void RawLittleEndian(const void* value, size_t size) {
    // x86-64 and aarch64 Linux are little-endian; a static_assert in proto_writer.cc guards it.
    buf_.append(static_cast<const char*>(value), size);
  }

  std::string buf_;
  std::vector<size_t> open_;  // offsets of reserved length fields of open nested messages
};

}  // namespace gt
