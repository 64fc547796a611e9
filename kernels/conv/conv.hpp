#pragma once
// 3x3 convolutions, stride 1, padding 1, NHWC fp32, as in a MobileNet block: the
// depthwise one (each channel its own 3x3 filter: 9 multiply-adds per output, so it moves
// as many bytes as it does flops and is bandwidth bound), the dense one with the same
// channels (9 x C multiply-adds per output: compute bound), and the depthwise-separable
// pair (depthwise, then a 1x1 convolution, i.e. a GEMM of (N H W) x C by C x C) that
// replaces the dense one with 9C / (9 + C) times fewer flops (8.4x at C = 128), though
// not that much less time.
//
// Layouts: input and output [n][h][w][c]; depthwise weights [kh][kw][c]; dense weights
// [kh][kw][ci][co] (HWIO); pointwise weights [ci][co].
//
// Bound and measured (development VM, CPU time, best of 5; oneDNN 2.6 picks brdgmm_dw,
// brgconv and brgconv_1x1 on avx512_core):
// - Depthwise 8x112x112x128: DRAM bound (231 MFLOP over 98 MiB, 2.25 flop/byte). With
//   non-temporal output stores the traffic is the compulsory 98 MiB (ordinary stores add a
//   read-for-ownership of the 49 MiB output). One core 9.8 ms = 10.5 GB/s (oneDNN 10.9 ms:
//   1.11x); two 5.9 ms = 17.6 GB/s (oneDNN 7.0 ms: 1.2x). 1x56x56x256 (in cache): 0.45 ms
//   vs 0.48 ms. On Zen 4 (one 512-bit load per cycle) the one-pixel loop ran that case at
//   0.65-0.72x oneDNN; strips of pixels (depthwise_impl.hpp) brought it to 0.76-1.0x in the
//   suite (2 threads, ~150 us a call, noisy).
// - Dense 3x3: compute bound (9C multiply-adds per output); 206-213 GFLOP/s on two cores
//   against oneDNN's 259-277 (0.77-0.82x): each tap repacks its shifted A and updates the
//   C row again; an implicit-GEMM packer over the 9C-long k would cut both.
// - Separable pair: 142-164 GFLOP/s vs oneDNN 169-184 (0.85-0.89x) - and 5.8x faster than
//   the dense convolution for 8.4x fewer flops: the depthwise half is bandwidth bound.

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "kernels/cpu_features.hpp"
#include "kernels/gemm/gemm.hpp"

namespace ceiling::kernels {

struct ConvShape {
    int n, h, w, c;
    std::size_t pixels() const { return static_cast<std::size_t>(n) * h * w; }
    std::size_t elements() const { return pixels() * static_cast<std::size_t>(c); }
};

// Output rows [row0, row1) of the flattened (n, h) rows. stream: write the output with
// non-temporal stores (it bypasses the caches: for outputs too big to stay there, it
// saves the read-for-ownership of every output line; only when c is a multiple of the
// vector width, else ordinary stores). zero_row: w x c zeros (the padding rows).
struct DepthwiseImpl {
    std::string_view isa;
    bool (*supported)(const CpuFeatures&);
    void (*rows)(const float* in, const float* wt, float* out, ConvShape s, int row0, int row1,
                 bool stream, const float* zero_row);
};

std::span<const DepthwiseImpl* const> depthwise_impls();  // widest first
const DepthwiseImpl& best_depthwise_impl();

// The seven loops with bounds checks; one thread.
void depthwise_naive(const float* in, const float* wt, float* out, ConvShape s);
void dense_naive(const float* in, const float* wt, float* out, ConvShape s);

void depthwise_optimized(const DepthwiseImpl& impl, const float* in, const float* wt, float* out,
                         ConvShape s, int threads, bool stream);

// Dense 3x3 as nine GEMMs per output row: out_row (W x C) += in_row(h + kh - 1) shifted by
// kw - 1 pixels (W x C) times the tap's C x C weights, packed once at construction.
class DenseConv {
public:
    DenseConv(const GemmImpl& impl, const float* wt, int c, int threads);
    void run(const float* in, float* out, ConvShape s, int threads);
    static std::size_t bytes(const GemmImpl& impl, int c, int threads);

private:
    const GemmImpl& impl_;
    std::vector<std::unique_ptr<PackedB>> taps_;
    GemmWorkspace ws_;
};

// 1x1 convolution: out (P x C) = in (P x C) x wt (C x C), a GEMM split over pixels.
void pointwise_optimized(const GemmImpl& impl, const float* in, const float* wt, float* out,
                         ConvShape s, GemmWorkspace& ws, int threads);

}  // namespace ceiling::kernels
