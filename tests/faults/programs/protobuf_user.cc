// protobuf_user: a program that uses libprotobuf itself (any version the system has) and prints a
// round-tripped message. Under LD_PRELOAD=libgtrace.so its output must not change: gtrace brings no
// protobuf (or C++ runtime) symbols into the host.
#include <google/protobuf/stubs/common.h>

#include <cstdio>

#include "gtrace.pb.h"

int main() {
  gt::schema::StreamHeader h;
  h.set_host_name("protobuf-user");
  h.set_pid(42);
  h.add_command_line("a");
  std::string bytes = h.SerializeAsString();
  gt::schema::StreamHeader back;
  if (!back.ParseFromString(bytes)) return 1;
  std::printf("protobuf %d: %s %u %d bytes\n", GOOGLE_PROTOBUF_VERSION, back.host_name().c_str(), back.pid(),
              static_cast<int>(bytes.size()));
  return 0;
}
