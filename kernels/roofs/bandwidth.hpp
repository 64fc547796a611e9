#pragma once
// Bandwidth-roof kernels over float arrays (STREAM-like), in one implementation per
// vector ISA, chosen at run time. Bytes are counted as the kernel's explicit loads and
// stores; write-allocate traffic of ordinary stores is not counted, and no non-temporal
// stores are used (the profile's `method` says so).

#include <cstddef>
#include <span>
#include <string_view>

#include "kernels/cpu_features.hpp"

namespace ceiling::kernels {

// Every array length must be a multiple of this many floats (8 registers of 16 lanes; the
// read kernel's 8 segments each a whole number of vectors).
inline constexpr std::size_t bandwidth_block_floats = 128;

struct BandwidthImpl {
    std::string_view isa;  // "avx512", "avx2", "sse2"
    bool (*supported)(const CpuFeatures&);
    // Each repeats its loop `passes` times; the compiler cannot skip a pass (a compiler
    // barrier separates them) and read returns its sum so the loads stay live.
    double (*read)(const float* a, std::size_t n, int passes);
    void (*write)(float* a, std::size_t n, int passes);
    void (*copy)(float* dst, const float* src, std::size_t n, int passes);
    void (*triad)(float* a, const float* b, const float* c, float s, std::size_t n, int passes);
    // In place, a = 0.5 a + 1: each line read once and written back, with no read for
    // ownership (the load brought it). An in-place ReLU, a residual add or an optimiser step
    // moves its bytes this way: on a Zen 4 VM one thread updated 39-42 GB/s (bytes counted
    // as load + store) where copy moved 23 (its store's line read first, uncounted).
    void (*update)(float* a, std::size_t n, int passes);
};

// The widest implementation this CPU supports.
const BandwidthImpl& best_bandwidth_impl();
std::span<const BandwidthImpl* const> bandwidth_impls();

// Kernel names, how many arrays (of equal length) each touches, and how many explicit
// accesses (loads and stores, the bytes counted) it makes per element: update loads and
// stores its one array.
struct BandwidthKernelInfo {
    std::string_view name;
    int arrays;
    int accesses;
};
inline constexpr BandwidthKernelInfo bandwidth_kernels[] = {
    {"read", 1, 1}, {"write", 1, 1}, {"copy", 2, 2}, {"triad", 3, 3}, {"update", 1, 2}};

// Arrays of one kernel are separated by n + this many floats (1088 bytes): an offset that
// is not a multiple of 4 KiB, so loads never alias the stores of another array in the
// 4 KiB store-forwarding check, while every array stays 64-byte aligned.
inline constexpr std::size_t bandwidth_array_pad_floats = 272;

// Floats one thread's arrays span for kernel arrays of n floats.
inline std::size_t bandwidth_footprint_floats(std::size_t n, int arrays) {
    return static_cast<std::size_t>(arrays) * (n + bandwidth_array_pad_floats);
}

// Runs kernel `name` on `arrays` arrays of n floats starting at base (array j at
// base + j * (n + pad)). Returns the read kernel's sum (0 for the others).
double run_bandwidth_kernel(const BandwidthImpl& impl, std::string_view name, float* base,
                            std::size_t n, int passes);

}  // namespace ceiling::kernels
