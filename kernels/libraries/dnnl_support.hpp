#pragma once
// The oneDNN CPU engine and stream shared by the library variants (inside
// libceiling_libraries.so, built with oneDNN only).

#include <dnnl.hpp>

namespace ceiling::kernels::libraries {

dnnl::engine& dnnl_cpu_engine();
dnnl::stream& dnnl_cpu_stream();

}  // namespace ceiling::kernels::libraries
