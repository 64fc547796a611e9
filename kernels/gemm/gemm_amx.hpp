#pragma once
// bf16 GEMM on the AMX tile unit: C (M x N, fp32) = A (M x K, bf16, row-major) * B (K x N,
// bf16), B packed once into tiles (weights are packed ahead of time, as libraries do).
//
// Tiles are 16 rows x 64 bytes: A tiles 16 x 32 bf16, B tiles 16 (k pairs) x 16 columns x
// 2 (the VNNI layout tdpbf16ps reads), C tiles 16 x 16 fp32. Eight tile registers allow a
// 2 x 2 block of C tiles (4) with 2 A and 2 B tiles: per 32 k, 4 tile products (16384
// flop each) for 4 KiB of tile loads.
//
// Bound and measured (2-vCPU AMX VM, 48 KiB L1d and 2 MiB L2 per core, 2026-12-02): the
// tile unit does one 16x16x32 tdpbf16ps per 16 cycles, 1024 flop per cycle per core (the
// profile's bf16_amx roof: 2.79 Top/s on one core, 5.57 on two). The suite's bf16-tiles
// cases time this loop alone on resident panels: 83 % of that roof with A and packed B in
// L1 (32x32x256), 53 % with them in L2 (32x32x4096, A's rows 8 KiB apart as in the 4096
// GEMM). In L1 the loop loses to its own tile loads (4 per 4 products; in a throwaway
// harness the loads alone took half the products' time, and the loop reached 0.65-0.7 of a
// bare product loop timed beside it, itself at 2.8-3.3 Top/s, above the profile's roof, with
// all four loads, 0.75-0.8 with the B loads dropped, 0.9-0.98 with none; reordering loads
// and products, or unrolling by two, changed nothing). The GEMMs:
// 33-37 % of the roof on one core, 37-45 % on two; oneDNN 2.6's matmul 19-26 % and 21-35 %,
// so ours is 1.25-1.7x oneDNN's.
// Tried in that harness and not kept (one thread, 2048^3 and 4096^3, all at 0.8-1.2 Top/s,
// like this loop order, within the host's noise): A packed into tiles with K blocked to
// 256-512 so that A's panel stays in L1 (C then reloaded from memory per K block); A packed
// per 128-256-row block in L2 with B's 256-deep panel reused from L1 and C kept in an L2
// buffer until the last K block; A packed once per call. Reaching the L1 figure would need
// one operand in L1 without C leaving the tiles for memory at every K block.

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
