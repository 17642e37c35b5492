// nsys's spelling of demangled kernel names. nsys (like cu++filt, NVIDIA's EDG-based demangler)
// spells a demangled name differently from the GNU demangler (abi::__cxa_demangle, c++filt) that
// gtrace uses; readers group and match kernels by demangledName, so gtrace respells the GNU text.
// Differences handled, each seen in the real exports of shared/reference (GNU -> nsys):
//   float const*            -> const float *       (cv-qualifier first, space before * and &)
//   <4, 1ul>                -> <(int)4, (unsigned long)1>   (integer template arguments with their type)
//   > >                     -> >>
//   operator()              -> operator ()
//   {lambda(float, float)#1} -> [lambda(float, float) (instance 1)]
// Not handled: nsys writes a function parameter whose type is a template parameter as T1, T2, ...
// (its position in the template) where the GNU text substitutes the argument; that needs the
// mangled name parsed (docs/cuda-tracing.md "Kernel names").
// Pure function, any thread.
#pragma once

#include <string>
#include <string_view>

namespace gt::exporter {

std::string NsysDemangledSpelling(std::string_view gnu_demangled);

}  // namespace gt::exporter
