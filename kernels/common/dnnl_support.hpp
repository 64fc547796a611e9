#pragma once
// The oneDNN CPU engine and stream shared by the library variants. Include only from
// files compiled under CEILING_HAVE_DNNL.

#include <dnnl.hpp>

namespace ceiling::kernels {

dnnl::engine& dnnl_cpu_engine();
dnnl::stream& dnnl_cpu_stream();

}  // namespace ceiling::kernels
