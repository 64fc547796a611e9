#include "kernels/common/random.hpp"

#include <algorithm>
#include <cstring>

#include "kernels/parallel.hpp"

namespace ceiling::kernels {
namespace {

// Splits [0, n) into one contiguous range per thread and calls fn(begin, end).
template <typename Fn>
void parallel_ranges(std::size_t n, int threads, Fn fn) {
    const auto t = static_cast<std::size_t>(std::max(1, threads));
    if (t == 1 || n < (std::size_t{1} << 16)) {
        fn(std::size_t{0}, n);
        return;
    }
    run_on_threads(static_cast<int>(t), [&](int i) {
        const auto k = static_cast<std::size_t>(i);
        fn(n * k / t, n * (k + 1) / t);
    });
}

}  // namespace

void fill_uniform(float* p, std::size_t n, std::uint64_t seed, float lo, float hi, int threads) {
    parallel_ranges(n, threads, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) p[i] = random_float(seed, i, lo, hi);
    });
}

void fill_uniform_bf16(Bf16* p, std::size_t n, std::uint64_t seed, float lo, float hi,
                       int threads) {
    parallel_ranges(n, threads, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) p[i] = float_to_bf16(random_float(seed, i, lo, hi));
    });
}

void fill_uniform_int8(std::int8_t* p, std::size_t n, std::uint64_t seed, int lo, int hi,
                       int threads) {
    const auto span = static_cast<std::uint64_t>(hi - lo + 1);
    parallel_ranges(n, threads, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i)
            p[i] = static_cast<std::int8_t>(lo + static_cast<int>(random_bits(seed, i) % span));
    });
}

void fill_uniform_uint8(std::uint8_t* p, std::size_t n, std::uint64_t seed, int threads) {
    parallel_ranges(n, threads, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) p[i] = static_cast<std::uint8_t>(random_bits(seed, i));
    });
}

void fill_float(float* p, std::size_t n, float value, int threads) {
    parallel_ranges(n, threads, [&](std::size_t b, std::size_t e) { std::fill(p + b, p + e, value); });
}

void fill_zero(void* p, std::size_t bytes, int threads) {
    auto* c = static_cast<unsigned char*>(p);
    parallel_ranges(bytes, threads, [&](std::size_t b, std::size_t e) {
        std::memset(c + b, 0, e - b);
    });
}

void parallel_copy(void* dst, const void* src, std::size_t bytes, int threads) {
    auto* d = static_cast<unsigned char*>(dst);
    const auto* s = static_cast<const unsigned char*>(src);
    parallel_ranges(bytes, threads, [&](std::size_t b, std::size_t e) {
        std::memcpy(d + b, s + b, e - b);
    });
}

}  // namespace ceiling::kernels
