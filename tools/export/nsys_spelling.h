// nsys's spelling of demangled kernel names. nsys (like cu++filt, NVIDIA's EDG-based demangler)
// spells a demangled name differently from the GNU demangler (abi::__cxa_demangle, c++filt) that
// gtrace uses; readers group and match kernels by demangledName, so gtrace respells the GNU text.
// Differences handled, each seen in the real exports of shared/reference (GNU -> nsys):
//   float const*            -> const float *       (cv-qualifier first, space before * and &)
//   <4, 1ul>                -> <(int)4, (unsigned long)1>   (integer template arguments with their type)
//   > >                     -> >>
//   operator()              -> operator ()
//   {lambda(float, float)#1} -> [lambda(float, float) (instance 1)]
//   (int, FillFunctor<float>)  -> (int, T2)  a parameter whose mangled type is a bare template
//                              parameter (T0_) is written by its position in the template, T1, T2, ...
//                              (needs the mangled name: mangled_params.h; compound ones such as
//                              T_* keep the GNU text — no real export shows how nsys spells them)
// Pure function, any thread.
#pragma once

#include <string>
#include <string_view>

namespace gt::exporter {

// `mangled`: the name `gnu_demangled` came from ("" when unknown: parameters stay as they are).
std::string NsysDemangledSpelling(std::string_view gnu_demangled, std::string_view mangled = "");

}  // namespace gt::exporter
