// Baseline x86-64 build: one box at a time.
#include <algorithm>

#include "kernels/nms/nms_impl.hpp"

namespace ceiling::kernels {
namespace {
struct Scalar {
    using reg = std::int32_t;
    static constexpr int lanes = 1;
    static constexpr unsigned all = 1;
    static reg zero() { return 0; }
    static reg set1(std::int32_t v) { return v; }
    static reg load(const std::int32_t* p) { return *p; }
    static reg max(reg a, reg b) { return std::max(a, b); }
    static reg min(reg a, reg b) { return std::min(a, b); }
    static reg sub(reg a, reg b) { return a - b; }
    static reg add(reg a, reg b) { return a + b; }
    static reg mullo(reg a, reg b) { return a * b; }
    static unsigned gt(reg a, reg b) { return a > b ? 1u : 0u; }
    static unsigned eq(reg a, reg b) { return a == b ? 1u : 0u; }
};
bool supported(const CpuFeatures&) { return true; }
}  // namespace
extern const NmsImpl nms_scalar{"scalar", supported, detail::any_overlap<Scalar>};
}  // namespace ceiling::kernels
