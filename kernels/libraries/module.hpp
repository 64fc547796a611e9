#pragma once
// Inside libceiling_libraries.so: the factories each library file defines for the table
// (module.cpp). Each is declared only when its library was built in.

#include "kernels/common/library_module.hpp"

namespace ceiling::kernels::libraries {

#ifdef CEILING_HAVE_DNNL
std::unique_ptr<DnnlMatmulBf16::Impl> make_dnnl_matmul_bf16(int m, int n, int k, const Bf16* b,
                                                            int threads);
std::unique_ptr<DnnlConv::Impl> make_dnnl_conv(DnnlConvKind kind, ConvShape s,
                                               const float* weights, int threads);
// oneDNN (Debian's build uses the OpenMP runtime) takes its thread count from the team size
// of the next parallel region.
void dnnl_set_threads(int threads);
#endif
#ifdef CEILING_HAVE_OPENCV
std::unique_ptr<OpenCvNms::Impl> make_opencv_nms(std::span<const Box> boxes,
                                                 std::span<const float> scores,
                                                 float score_threshold);
std::unique_ptr<OpenCvResize::Impl> make_opencv_resize(ResizeShape s);
#endif

}  // namespace ceiling::kernels::libraries
