// Baseline x86-64 build: the passes one value at a time (bit-exact with the SIMD ones).
#include "kernels/resize/resize_impl.hpp"

namespace ceiling::kernels {
namespace {
struct ScalarOps {
    static void hrow(const ResizeView& t, const std::uint8_t* row, std::int16_t* d, int w) {
        hresize_scalar(t, row, d, 0, w);
    }
    static void vrow(const std::int16_t* d0, const std::int16_t* d1, int b0, int b1,
                     std::uint8_t* out, int w) {
        vresize_scalar(d0, d1, b0, b1, out, 0, w);
    }
};
bool supported(const CpuFeatures&) { return true; }
}  // namespace
extern const ResizeImpl resize_scalar{"scalar", supported, resize_rows<ScalarOps>};
}  // namespace ceiling::kernels
