#include "kernels/roofs/bandwidth.hpp"

#include <array>
#include <stdexcept>
#include <string>

namespace ceiling::kernels {

extern const BandwidthImpl bandwidth_avx512;
extern const BandwidthImpl bandwidth_avx2;
extern const BandwidthImpl bandwidth_sse2;

namespace {
const std::array<const BandwidthImpl*, 3> impls = {&bandwidth_avx512, &bandwidth_avx2,
                                                   &bandwidth_sse2};
}

std::span<const BandwidthImpl* const> bandwidth_impls() { return impls; }

const BandwidthImpl& best_bandwidth_impl() {
    for (const auto* impl : impls)
        if (impl->supported(cpu_features())) return *impl;
    return bandwidth_sse2;
}

double run_bandwidth_kernel(const BandwidthImpl& impl, std::string_view name, float* base,
                            std::size_t n, int passes) {
    if (n % bandwidth_block_floats != 0)
        throw std::invalid_argument("bandwidth kernel length not a multiple of the block");
    const std::size_t stride = n + bandwidth_array_pad_floats;
    if (name == "read") return impl.read(base, n, passes);
    if (name == "write") {
        impl.write(base, n, passes);
        return 0;
    }
    if (name == "copy") {
        impl.copy(base + stride, base, n, passes);
        return 0;
    }
    if (name == "update") {
        impl.update(base, n, passes);
        return 0;
    }
    if (name == "triad") {
        impl.triad(base, base + stride, base + 2 * stride, 0.5f, n, passes);
        return 0;
    }
    throw std::invalid_argument("unknown bandwidth kernel '" + std::string(name) + "'");
}

}  // namespace ceiling::kernels
