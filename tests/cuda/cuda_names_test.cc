// Kernel names (demangled, short) and CUPTI -> nsys enum translations of the CUDA exporter; the
// export field map covers every field of cuda.proto.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gtrace.pb.h"
#include "tests/common/test_util.h"
#include "tools/export/cuda_field_map.h"
#include "tools/export/cuda_names.h"
#include "tools/export/mangled_params.h"
#include "tools/export/nsys_spelling.h"

namespace gt::exporter {
namespace {

TEST(KernelNames, DemanglesCppAndKeepsCNames) {
  KernelNames a = MakeKernelNames("_Z7add_onePKfPfi");
  EXPECT_EQ(a.mangled, "_Z7add_onePKfPfi");
  EXPECT_EQ(a.demangled, "add_one(const float *, float *, int)");
  EXPECT_EQ(a.short_name, "add_one");
  KernelNames c = MakeKernelNames("matmul_kernel");
  EXPECT_EQ(c.mangled, "matmul_kernel");
  EXPECT_EQ(c.demangled, "matmul_kernel");
  EXPECT_EQ(c.short_name, "matmul_kernel");
  KernelNames t = MakeKernelNames(
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_");
  EXPECT_EQ(t.demangled,
            "void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, std::array<char *, "
            "(unsigned long)1>>(int, T2, T3)");
  EXPECT_EQ(t.short_name, "vectorized_elementwise_kernel");
  // A name that looks mangled but is not stays as it is.
  EXPECT_EQ(MakeKernelNames("_Zbogus").demangled, "_Zbogus");
}

// nsys's spelling of the GNU demangler's text (tools/export/nsys_spelling.h).
TEST(KernelNames, NsysSpellingOfGnuDemangledText) {
  EXPECT_EQ(NsysDemangledSpelling("add_one(float const*, float*, int)"), "add_one(const float *, float *, int)");
  EXPECT_EQ(NsysDemangledSpelling("k(unsigned long const&, char const* const*, int&&, double**)"),
            "k(const unsigned long &, const char *const *, int &&, double **)");
  EXPECT_EQ(NsysDemangledSpelling("void f<4, -2, 1ul, 3u, 5l, 6ll, 7ull, float>(float*)"),
            "void f<(int)4, (int)-2, (unsigned long)1, (unsigned int)3, (long)5, (long long)6, "
            "(unsigned long long)7, float>(float *)");
  EXPECT_EQ(NsysDemangledSpelling("void g<a::B<c::D<int> > >(a::B<c::D<int> > const&)"),
            "void g<a::B<c::D<int>>>(const a::B<c::D<int>> &)");
  EXPECT_EQ(NsysDemangledSpelling("S::operator()(T&)::{lambda(float, float)#12}"),
            "S::operator ()(T &)::[lambda(float, float) (instance 12)]");
  EXPECT_EQ(NsysDemangledSpelling("plain_c_kernel"), "plain_c_kernel");
  EXPECT_EQ(NsysDemangledSpelling("void h<v2>(v2)"), "void h<v2>(v2)");
}

// Against nsys's own demangled names in the real exports: every kernel spelled as nsys does.
TEST(KernelNames, DemangledNamesMatchRealNsysExports) {
  std::string dir = test::ReferenceDir();
  if (dir.empty()) GTEST_SKIP() << "no ../shared/reference";
  int checked = 0;
  for (const char* file : {"flameox-nsys-2025.5.2.sqlite", "nsysai-mock-nsys-2026.1.1.sqlite"}) {
    test::Db db(dir + "/" + file);
    if (!db.ok()) continue;
    for (const std::string& row :
         db.Rows("SELECT DISTINCT m.value || char(1) || d.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds d ON "
                 "d.id = k.demangledName JOIN StringIds m ON m.id = k.mangledName")) {
      size_t sep = row.find('\x01');
      ASSERT_NE(sep, std::string::npos) << row;
      EXPECT_EQ(MakeKernelNames(row.substr(0, sep)).demangled, row.substr(sep + 1));
      ++checked;
    }
  }
  if (checked == 0) GTEST_SKIP() << "reference exports absent";
  EXPECT_EQ(checked, 3);  // add_one, vectorized_elementwise_kernel, reduce_kernel (with a lambda)
}

// Parameters that are bare template parameters, from the mangled name (mangled_params.h).
TEST(KernelNames, TemplateParameterReferencesFromTheMangledName) {
  using V = std::vector<std::string>;
  EXPECT_EQ(TemplateParameterRefs(
                "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"),
            (V{"", "T2", "T3"}));
  EXPECT_EQ(TemplateParameterRefs("_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_14func_wrapper_tIfZNS0_11"
                                  "sum_functorIfffEclERNS_14TensorIteratorEEUlffE_EEjfLi4EEEEEvT1_"),
            (V{"T3"}));
  EXPECT_EQ(TemplateParameterRefs("_Z7add_onePKfPfi"), (V{"", "", ""}));
  EXPECT_EQ(TemplateParameterRefs("_Z6kernelIfLi256EEvPT_S1_i"), (V{"", "", ""}));  // T_* stays GNU's
  EXPECT_EQ(TemplateParameterRefs("_Z1fIiEvT_"), (V{"T1"}));
  EXPECT_EQ(TemplateParameterRefs("_Z4stepv"), (V{}));
  EXPECT_EQ(TemplateParameterRefs("_Zbogus"), std::nullopt);
  EXPECT_EQ(TemplateParameterRefs("matmul_kernel"), std::nullopt);
  EXPECT_EQ(MakeKernelNames("_Z1fIiEvT_").demangled, "void f<int>(T1)");
  EXPECT_EQ(TemplateParameterRefs("_Z1fIiEvT99999999999999999999999_"), (V{""}));
}

// Kernel names come from the recorded stream: every prefix and many byte mutations of real names
// must give some name without crashing (run under ASan by scripts/sanitize.sh).
TEST(KernelNames, DamagedMangledNamesNeverCrash) {
  const std::string names[] = {
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_",
      "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_14func_wrapper_tIfZNS0_11sum_functorIfffEclERNS_"
      "14TensorIteratorEEUlffE_EEjfLi4EEEEEvT1_",
      "_Z6kernelIfLi256EEvPT_S1_i", "_Z7add_onePKfPfi"};
  uint32_t seed = 12345;
  size_t made = 0;
  for (const std::string& n : names) {
    for (size_t len = 0; len <= n.size(); ++len) made += MakeKernelNames(n.substr(0, len)).demangled.empty() ? 0 : 1;
    for (int i = 0; i < 500; ++i) {
      std::string m = n;
      for (int k = 0; k < 3; ++k) {
        seed = seed * 1664525u + 1013904223u;
        m[2 + (seed >> 8) % (m.size() - 2)] = "0123456789EINSTZLXJDFAMPRKVUlvfidcT_"[(seed >> 20) % 36];
      }
      made += MakeKernelNames(m).demangled.empty() ? 0 : 1;
    }
  }
  EXPECT_GT(made, 2000u);
}

TEST(KernelNames, ShortNameDropsReturnTypeScopeTemplatesAndParameters) {
  EXPECT_EQ(ShortKernelName("add_one(const float *, float *, int)"), "add_one");
  EXPECT_EQ(ShortKernelName("void ns::inner::scale<float, (int)4>(float *, int)"), "scale");
  EXPECT_EQ(ShortKernelName("void at::native::(anonymous namespace)::kern<int>(int)"), "kern");
  EXPECT_EQ(ShortKernelName("void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float, "
                            "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator "
                            "()(at::TensorIterator &)::[lambda(float, float) (instance 1)]>, unsigned int, float, "
                            "(int)4>>(T3)"),
            "reduce_kernel");
  EXPECT_EQ(ShortKernelName("ns::Foo<int>::bar(int) const"), "bar");
  EXPECT_EQ(ShortKernelName("plain"), "plain");
}

// nsys's own demangled names in the real exports -> the shortName nsys stored.
TEST(KernelNames, ShortNamesMatchRealNsysExports) {
  std::string dir = test::ReferenceDir();
  if (dir.empty()) GTEST_SKIP() << "no ../shared/reference";
  int checked = 0;
  for (const char* file : {"flameox-nsys-2025.5.2.sqlite", "nsysai-mock-nsys-2026.1.1.sqlite"}) {
    test::Db db(dir + "/" + file);
    if (!db.ok()) continue;
    for (const std::string& row :
         db.Rows("SELECT d.value || char(1) || s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds d ON "
                 "d.id = k.demangledName JOIN StringIds s ON s.id = k.shortName")) {
      size_t sep = row.find('\x01');
      ASSERT_NE(sep, std::string::npos) << row;
      EXPECT_EQ(ShortKernelName(row.substr(0, sep)), row.substr(sep + 1)) << row.substr(0, sep);
      ++checked;
    }
  }
  if (checked == 0) GTEST_SKIP() << "reference exports absent";
  EXPECT_EQ(checked, 5);
}

TEST(CudaEnums, MemoryKindsFollowNsysNumbering) {
  EXPECT_EQ(NsysMemKind(0), 7);  // unknown
  EXPECT_EQ(NsysMemKind(1), 0);  // pageable
  EXPECT_EQ(NsysMemKind(2), 1);  // pinned
  EXPECT_EQ(NsysMemKind(3), 2);  // device
  EXPECT_EQ(NsysMemKind(7), 6);  // managed static
  EXPECT_EQ(NsysMemKind(99), 7);
  EXPECT_EQ(NsysLaunchType(0), 1);  // regular
  EXPECT_EQ(NsysLaunchType(2), 3);  // cooperative multi-device
  EXPECT_EQ(NsysMemoryOperation(1), 0);
  EXPECT_EQ(NsysMemoryOperation(2), 1);
}

TEST(CudaEnums, OverheadKindsMapByName) {
  EXPECT_EQ(NsysOverhead(4u << 16).type, 6);
  EXPECT_STREQ(NsysOverhead(4u << 16).name, "Runtime Triggered Module Loading");
  EXPECT_EQ(NsysOverhead(5u << 16).type, 7);
  EXPECT_STREQ(NsysOverhead(5u << 16).name, "Lazy Function Loading");
  EXPECT_EQ(NsysOverhead(1).type, 2);
  EXPECT_EQ(NsysOverhead(1u << 16).type, 3);
  EXPECT_EQ(NsysOverhead(2u << 16).type, 4);
  EXPECT_EQ(NsysOverhead(3u << 16).type, 5);
  EXPECT_EQ(NsysOverhead(6u << 16).type, 8);
  EXPECT_EQ(NsysOverhead(8u << 16).type, 1);
  EXPECT_EQ(NsysOverhead(0).type, 1);
}

TEST(CudaEnums, UuidText) {
  std::string bytes = "\xb1\x5c\x2a\x57\x42\xed\x1d\x24\x2c\x84\x06\x70\x81\x69\x86\x45";
  EXPECT_EQ(FormatUuid(bytes), "b15c2a57-42ed-1d24-2c84-067081698645");
  EXPECT_EQ(FormatUuid("short"), "");
}

TEST(CudaExportMap, EveryCudaProtoFieldIsMappedOrListedAsNotExported) {
  std::set<std::pair<std::string, std::string>> listed;
  for (const CudaFieldDestination& d : kCudaFieldMap) {
    EXPECT_TRUE(listed.insert({d.message, d.field}).second) << d.message << "." << d.field << " listed twice";
    EXPECT_NE(std::string(d.destination), "") << d.message << "." << d.field;
  }
  const google::protobuf::FileDescriptor* file = schema::CudaKernel::descriptor()->file();
  size_t fields = 0;
  for (int m = 0; m < file->message_type_count(); ++m) {
    const google::protobuf::Descriptor* d = file->message_type(m);
    for (int i = 0; i < d->field_count(); ++i) {
      ++fields;
      EXPECT_TRUE(listed.count({d->name(), d->field(i)->name()}))
          << d->name() << "." << d->field(i)->name() << " is neither exported nor listed as not exported";
    }
  }
  EXPECT_EQ(fields, listed.size()) << "the map names fields cuda.proto does not have";
}

}  // namespace
}  // namespace gt::exporter
