#pragma once
// bf16 GEMM on the AMX tile unit: C (M x N, fp32) = A (M x K, bf16, row-major) * B (K x N,
// bf16), B packed once into tiles (weights are packed ahead of time, as libraries do).
//
// Tiles are 16 rows x 64 bytes: A tiles 16 x 32 bf16, B tiles 16 (k pairs) x 16 columns x
// 2 (the VNNI layout tdpbf16ps reads), C tiles 16 x 16 fp32. Eight tile registers allow a
// 2 x 2 block of C tiles (4) with 2 A and 2 B tiles: per 32 k, 4 tile products (16384
// flop each) for 4 KiB of tile loads.
//
// Bound and measured (development VM, CPU time, best of 5-9): the tile unit, one 16x16x32
// tdpbf16ps per 16 cycles = 1024 flop per cycle per core; 4 tile loads (4 KiB) per 4
// products ask 64 bytes per cycle of L1/L2, which is what holds it below that. One core:
// 860 Gop/s at 1024^3, 665 at 4096^3; two cores: 875 at 2048^3, 837 at 4096^3 - 3.5-7x the
// fp32 GEMM. oneDNN 2.6's matmul (brgemm on AMX): 629, 342, 717, 402: ours 1.2-2.1x. (The
// machine profile's bf16_amx roof read 510-610 Gop/s in the same hours: that roof
// measurement was disturbed, not this kernel above the hardware.)

#include <cstddef>
#include <vector>

#include "kernels/common/array.hpp"
#include "kernels/common/bf16.hpp"

namespace ceiling::kernels {

// B (k x n, row-major, ldb) in 16-column blocks, each ceil(k/32) tiles of 1 KiB: element
// (r, 2c + e) of tile t in block j is B[32t + 2r + e][16j + c]; zero past k and n.
class AmxPackedB {
public:
    AmxPackedB(const Bf16* b, std::ptrdiff_t ldb, int k, int n);
    int k() const { return k_; }
    int n() const { return n_; }
    int k_tiles() const { return k_tiles_; }
    // First tile of 16-column block j.
    const Bf16* block(int j) const {
        return data_.data() + static_cast<std::ptrdiff_t>(j) * k_tiles_ * 512;
    }
    static std::size_t bytes(int k, int n);

private:
    int k_, n_, k_tiles_;
    Array<Bf16> data_;
};

// Scratch of `threads` threads: A padded to multiples of 32 (only used when M or K is not).
class AmxWorkspace {
public:
    AmxWorkspace(int m, int k, int threads);
    Bf16* padded_a() { return a_.data(); }
    float* c_tile(int thread) { return c_.data() + static_cast<std::ptrdiff_t>(thread) * 1024; }
    static std::size_t bytes(int m, int k, int threads);

private:
    Array<Bf16> a_;
    Array<float> c_;
};

// Whether this build has the tile code and this CPU runs it (permission is separate:
// request_amx_permission() before the first call).
bool amx_bf16_supported();

// Runs on `threads` threads; C is written (not accumulated).
void gemm_amx_bf16(const Bf16* a, std::ptrdiff_t lda, const AmxPackedB& b, float* c,
                   std::ptrdiff_t ldc, int m, AmxWorkspace& ws, int threads);

// The GEMM's tile loop alone, to measure its own ceiling: one 32 x 32 block of C
// (32 rows of A, K a multiple of 32, lda = K) times a packed B of 32 columns, computed
// `repeats` times over `threads` threads (the repeats split between them), its panels
// resident in whichever cache holds them. Thread t writes its block to c + 1024 t
// (32 x 32, row-major); a thread given no repeat writes nothing.
void amx_bf16_tile_loop(const Bf16* a, const AmxPackedB& b, float* c, int repeats, int threads);

}  // namespace ceiling::kernels
