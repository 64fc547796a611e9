#pragma once
// Matrix-vector product y = W x, the batch-1 decode step of a transformer layer: every
// weight is read once and used for one multiply-add, so the kernel can only stream W at
// the memory's read bandwidth (2 flop per 4 bytes in fp32: 0.5 flop/byte, far left of any
// ridge point). Weight-only quantisation (bf16: 2 bytes, int8 with a per-row fp32 scale:
// 1 byte) moves fewer bytes for the same fp32 arithmetic: the lever it shows.
//
// Bound and measured (development VM, M = K = 16384, CPU time, best of 7; the read roof is
// kernels/roofs' read kernel over the same 1 GiB in the same run): DRAM read bandwidth.
// fp32: one core 11.9-13.6 GB/s = 0.86-0.95 of the read roof (OpenBLAS 10.4-12.2, ratio
// 0.9-1.2); two cores 21.5-25.3 GB/s = 0.84-1.02 of 24-27 (OpenBLAS 21-25). bf16 runs
// 1.6-1.9x and int8 3.1-4.0x faster than fp32 (ideal 2x and ~4x: the bytes ratio). On a
// Zen 4 VM (2026-12-03) bf16 ran only 1.3-1.5x on one thread (13-17 GB/s against fp32's
// 22-26) until it split each line of weights into even and odd halves instead of widening
// them (gemv_impl.hpp): 1.75-2.0x on one thread, 1.75-1.95x on two, in the same harness.
// int8 there: 12-16 GB/s on one thread, 2.4-2.8x fp32 (the same shortfall) until whole
// lines per step and a prefetch into L2 (gemv_impl.hpp): 3.1-3.8x in the same harness.
// Where AVX512-BF16 exists, bf16 runs vdpbf16ps against x split into two bf16 parts
// (gemv_avx512.cpp, impl "avx512_bf16"): on a Zen 5 VM 1.92-1.98x fp32 on one thread, where
// the halves ran 1.5-1.68x beside it. Where AVX512-VNNI exists, int8 runs vpdpbusd against x
// split into three 8-bit parts (gemv_avx512.cpp, impls "avx512_vnni" and "avx512_bf16"): on
// the Zen 5 VM 0.90-0.92 of fp32's bytes/s on one and two threads (3.6-3.7x), where the
// widening kernel beside it ran 0.76-0.78 (3.0-3.1x).
// Zen 4 VM, one process, interleaved: a plain read of the same 1 GiB ran 27.7 / 31.7 GB/s
// on one / two threads, fp32 (8 x 1) 24.8 / 29.2 (0.90 / 0.92 of it), OpenBLAS 19.8 / 16.9.
// The host's DRAM is shared: `ceiling machine` read 63 GB/s on two threads the day before, so
// a fraction of a roof measured at another time moves with the neighbours.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "kernels/common/bf16.hpp"
#include "kernels/cpu_features.hpp"

namespace ceiling::kernels {

// How a kernel takes bf16 weights: each widened to fp32; each line split into even and odd
// fp32 halves (shift, mask) against a deinterleaved x; or each line by vdpbf16ps against x
// split into two bf16 parts (AVX512-BF16).
enum class Bf16Method { widened, halves, dot };
// How a kernel takes int8 weights: each widened to fp32; or each line by vpdpbusd against x
// split into three 8-bit parts (AVX512-VNNI).
enum class Int8Method { widened, vnni };

// Rows [0, m) of y = W x (W row-major, m x k); int8: y[i] = scale[i] * sum_k w[i,k] x[k].
struct GemvImpl {
    std::string_view isa;  // "avx512", "avx2", "scalar"
    bool (*supported)(const CpuFeatures&);
    void (*fp32)(const float* w, const float* x, float* y, int m, int k);
    void (*bf16)(const Bf16* w, const float* x, float* y, int m, int k);
    void (*int8)(const std::int8_t* w, const float* scale, const float* x, float* y, int m, int k);
    int fp32_rows = 0, fp32_vecs = 0;  // the fp32 kernel's rows x vectors per step, for labels
    int bf16_rows = 0;                 // the bf16 kernel's rows per step, for labels
    Bf16Method bf16_method = Bf16Method::widened;
    int int8_rows = 0, int8_vecs = 0;  // the int8 kernel's rows x vectors per step
    int prefetch_bytes = 0;            // bf16 and int8: how far ahead W is prefetched into L2
    Int8Method int8_method = Int8Method::widened;
};

std::span<const GemvImpl* const> gemv_impls();  // widest first
const GemvImpl& best_gemv_impl();

// One accumulator per row, k in order: the textbook loop (latency bound: each FMA waits
// for the previous one).
void gemv_naive_fp32(const float* w, const float* x, float* y, int m, int k);
void gemv_naive_bf16(const Bf16* w, const float* x, float* y, int m, int k);
void gemv_naive_int8(const std::int8_t* w, const float* scale, const float* x, float* y, int m,
                     int k);

// The impl's kernel on `threads` threads, each a contiguous block of rows.
void gemv_fp32(const GemvImpl& impl, const float* w, const float* x, float* y, int m, int k,
               int threads);
void gemv_bf16(const GemvImpl& impl, const Bf16* w, const float* x, float* y, int m, int k,
               int threads);
void gemv_int8(const GemvImpl& impl, const std::int8_t* w, const float* scale, const float* x,
               float* y, int m, int k, int threads);

}  // namespace ceiling::kernels
