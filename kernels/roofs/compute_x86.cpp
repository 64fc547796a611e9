// Compute-roof and clock kernels in inline assembly. Assembly, not intrinsics: a compiler
// may merge accumulator chains that start equal, reorder, or delete a result it proves
// unused; here each loop body is exactly the instructions written, which the disassembly
// test checks. No ISA compile flags are needed: the assembler knows every mnemonic, and
// the table's `supported` decides at run time which kernels may execute.

#include <cstddef>
#include <cstring>

#include "kernels/roofs/compute.hpp"

// Fixed offsets used by the assembly below.
static_assert(offsetof(ceiling::kernels::RoofOperands, acc) == 0);
static_assert(offsetof(ceiling::kernels::RoofOperands, a) == 4096);
static_assert(offsetof(ceiling::kernels::RoofOperands, b) == 5120);

#define REP12(M, A, B) \
    M(0, A, B) M(1, A, B) M(2, A, B) M(3, A, B) M(4, A, B) M(5, A, B) \
    M(6, A, B) M(7, A, B) M(8, A, B) M(9, A, B) M(10, A, B) M(11, A, B)
#define REP24(M, A, B)                                                                  \
    REP12(M, A, B)                                                                      \
    M(12, A, B) M(13, A, B) M(14, A, B) M(15, A, B) M(16, A, B) M(17, A, B) M(18, A, B) \
        M(19, A, B) M(20, A, B) M(21, A, B) M(22, A, B) M(23, A, B)

// Accumulator i lives in register i; operand a in register 14, b in register 15.
#define LOAD_ACC(i, MOV, R) MOV " " #i "*64(%[p]), %%" R #i "\n\t"
#define STORE_ACC(i, MOV, R) MOV " %%" R #i ", " #i "*64(%[p])\n\t"
#define APPLY(i, INS, R) INS " %%" R "15, %%" R "14, %%" R #i "\n\t"
#define APPLY_EVEX(i, INS, R) INS " %%" R "31, %%" R "30, %%" R #i "\n\t"

#define VEC_CLOBBERS                                                                    \
    "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", \
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"
#define EVEX_CLOBBERS \
    "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm30", "xmm31"

// 24 instructions per iteration: every accumulator twice, so each chain sees a new
// instruction every 12 issue slots, more than latency (4-6) x ports (2) on current cores.
// VEX encodings reach only 16 registers, so 12 chains is as many as the 128- and 256-bit
// kernels can hold beside their two operands.
#define VECTOR_ROOF(NAME, MOV, R, INS)                                                      \
    extern "C" void NAME(std::int64_t n, ceiling::kernels::RoofOperands* o) {               \
        asm volatile(REP12(LOAD_ACC, MOV, R) MOV " 4096(%[p]), %%" R "14\n\t" MOV         \
                     " 5120(%[p]), %%" R "15\n\t"                                       \
                     ".p2align 5\n"                                                     \
                     "1:\n\t" REP12(APPLY, INS, R) REP12(APPLY, INS, R)                 \
                     "dec %[n]\n\t"                                                    \
                     "jnz 1b\n\t" REP12(STORE_ACC, MOV, R) "vzeroupper\n\t"             \
                     : [n] "+r"(n)                                                      \
                     : [p] "r"(o)                                                       \
                     : "memory", "cc", VEC_CLOBBERS); \
    }

// The 512-bit kernels (EVEX, 32 registers): the same 24 instructions on 24 accumulators,
// zmm0-23, operands in zmm30 and zmm31. 12 chains were too few for vdpbf16ps on Zen 5
// (2 per cycle; 12 chains at 1.84 per cycle mean ~6.5 cycles of latency, not measured
// alone): the roof ran at 1.84 instructions per cycle while the
// GEMM's 28-accumulator tile loop ran at 1.97-2.0, "above the roof"; 16 and 24 chains
// ran at 2.0 (fp32 FMA was at 2.0 with either). The target attribute only lets the
// clobber list name zmm16-31; the table's `supported` still decides what runs.
#define EVEX_ROOF(NAME, INS)                                                                     \
    extern "C" __attribute__((target("avx512f"))) void NAME(std::int64_t n,                      \
                                                            ceiling::kernels::RoofOperands* o) { \
        asm volatile(REP24(LOAD_ACC, "vmovups", "zmm") "vmovups 4096(%[p]), %%zmm30\n\t"  \
                     "vmovups 5120(%[p]), %%zmm31\n\t"                                   \
                     ".p2align 5\n"                                                     \
                     "1:\n\t" REP24(APPLY_EVEX, INS, "zmm")                              \
                     "dec %[n]\n\t"                                                    \
                     "jnz 1b\n\t" REP24(STORE_ACC, "vmovups", "zmm") "vzeroupper\n\t"    \
                     : [n] "+r"(n)                                                      \
                     : [p] "r"(o)                                                       \
                     : "memory", "cc", VEC_CLOBBERS, EVEX_CLOBBERS);      \
    }

VECTOR_ROOF(ceiling_roof_fp64_scalar, "vmovups", "xmm", "vfmadd231sd")
VECTOR_ROOF(ceiling_roof_fp32_scalar, "vmovups", "xmm", "vfmadd231ss")
VECTOR_ROOF(ceiling_roof_fp64_fma128, "vmovups", "xmm", "vfmadd231pd")
VECTOR_ROOF(ceiling_roof_fp32_fma128, "vmovups", "xmm", "vfmadd231ps")
VECTOR_ROOF(ceiling_roof_fp64_fma256, "vmovups", "ymm", "vfmadd231pd")
VECTOR_ROOF(ceiling_roof_fp32_fma256, "vmovups", "ymm", "vfmadd231ps")
EVEX_ROOF(ceiling_roof_fp64_fma512, "vfmadd231pd")
EVEX_ROOF(ceiling_roof_fp32_fma512, "vfmadd231ps")
EVEX_ROOF(ceiling_roof_fp16_fma512, "vfmadd231ph")
EVEX_ROOF(ceiling_roof_bf16_dot512, "vdpbf16ps")
VECTOR_ROOF(ceiling_roof_int8_dot256, "vmovups", "ymm", "%{vex%} vpdpbusd")
EVEX_ROOF(ceiling_roof_int8_dot512, "vpdpbusd")

namespace {

// Palette 1, tiles 0-7 each 16 rows x 64 bytes (the largest tile), as the SDM lays out
// the 64-byte TILECFG: byte 0 palette, bytes 16-31 colsb[8] (u16), bytes 48-55 rows[8].
struct alignas(64) TileConfig {
    unsigned char palette = 1;
    unsigned char start_row = 0;
    unsigned char reserved[14] = {};
    unsigned short colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
    unsigned char rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};
static_assert(sizeof(TileConfig) == 64);
const TileConfig tile_config{};

}  // namespace

// C tiles 0-3, A tiles 4-5, B tiles 6-7: four independent products, twice per iteration,
// keep the single TMUL unit busy (one tile product per 16 cycles, latency well under 64).
#define TILE_ROOF(NAME, INS)                                                              \
    extern "C" void NAME(std::int64_t n, ceiling::kernels::RoofOperands* o) {            \
        asm volatile("ldtilecfg (%[cfg])\n\t"                                             \
                     "mov $64, %%rax\n\t"                                                 \
                     "tileloadd 0(%[p],%%rax,1), %%tmm0\n\t"                              \
                     "tileloadd 1024(%[p],%%rax,1), %%tmm1\n\t"                           \
                     "tileloadd 2048(%[p],%%rax,1), %%tmm2\n\t"                           \
                     "tileloadd 3072(%[p],%%rax,1), %%tmm3\n\t"                           \
                     "tileloadd 4096(%[p],%%rax,1), %%tmm4\n\t"                           \
                     "tileloadd 4096(%[p],%%rax,1), %%tmm5\n\t"                           \
                     "tileloadd 5120(%[p],%%rax,1), %%tmm6\n\t"                           \
                     "tileloadd 5120(%[p],%%rax,1), %%tmm7\n\t"                           \
                     ".p2align 5\n"                                                       \
                     "1:\n\t" INS " %%tmm6, %%tmm4, %%tmm0\n\t" INS                       \
                     " %%tmm7, %%tmm4, %%tmm1\n\t" INS " %%tmm6, %%tmm5, %%tmm2\n\t" INS  \
                     " %%tmm7, %%tmm5, %%tmm3\n\t" INS " %%tmm6, %%tmm4, %%tmm0\n\t" INS  \
                     " %%tmm7, %%tmm4, %%tmm1\n\t" INS " %%tmm6, %%tmm5, %%tmm2\n\t" INS  \
                     " %%tmm7, %%tmm5, %%tmm3\n\t"                                        \
                     "dec %[n]\n\t"                                                       \
                     "jnz 1b\n\t"                                                         \
                     "tilestored %%tmm0, 0(%[p],%%rax,1)\n\t"                             \
                     "tilestored %%tmm1, 1024(%[p],%%rax,1)\n\t"                          \
                     "tilestored %%tmm2, 2048(%[p],%%rax,1)\n\t"                          \
                     "tilestored %%tmm3, 3072(%[p],%%rax,1)\n\t"                          \
                     "tilerelease\n\t"                                                    \
                     : [n] "+r"(n)                                                        \
                     : [p] "r"(o), [cfg] "r"(&tile_config)                                \
                     : "memory", "cc", "rax");                                            \
    }

TILE_ROOF(ceiling_roof_bf16_amx, "tdpbf16ps")
TILE_ROOF(ceiling_roof_int8_amx, "tdpbusd")

// ---- clock kernels: 48 dependent 1-cycle scalar adds per iteration ----------------------

#define REP4(X) X X X X
#define REP48(X) REP4(REP4(X)) REP4(REP4(X)) REP4(REP4(X))

// Scalar: `add reg, reg` (an immediate add may be folded at rename on newer cores).
extern "C" void ceiling_clock_scalar(std::int64_t n, ceiling::kernels::RoofOperands*) {
    long x = 0;
    const long one = 1;
    asm volatile(".p2align 5\n"
                 "1:\n\t" REP48("add %[one], %[x]\n\t") "dec %[n]\n\t"
                 "jnz 1b\n\t"
                 : [n] "+r"(n), [x] "+r"(x)
                 : [one] "r"(one)
                 : "cc");
}

// Vector widths: fp32 FMAs with the same scalar chain woven in (chained_x86.cpp, 48 adds
// per 24 FMAs). A vpaddd chain in the vector register file used to run here; on Zen 4 a
// 512-bit vpaddd chain advances every 2 cycles, not 1, and read the clock at half.

// AMX: the scalar add chain (integer ports, which tile instructions do not use) beside
// two tile products per 48 cycles (32 of them keep the TMUL unit busy). A vpaddd chain
// here reads ~20% slow: it competes with the tile instructions for ports 0 and 5.
extern "C" void ceiling_clock_amx(std::int64_t n, ceiling::kernels::RoofOperands* o) {
    long x = 0;
    const long one = 1;
    asm volatile("ldtilecfg (%[cfg])\n\t"
                 "mov $64, %%rax\n\t"
                 "tileloadd 0(%[p],%%rax,1), %%tmm0\n\t"
                 "tileloadd 1024(%[p],%%rax,1), %%tmm1\n\t"
                 "tileloadd 4096(%[p],%%rax,1), %%tmm4\n\t"
                 "tileloadd 5120(%[p],%%rax,1), %%tmm6\n\t"
                 ".p2align 5\n"
                 "1:\n\t"
                 "tdpbf16ps %%tmm6, %%tmm4, %%tmm0\n\t"
                 REP4(REP4("add %[one], %[x]\n\t")) REP4(REP4("add %[one], %[x]\n\t"))
                 "tdpbf16ps %%tmm6, %%tmm4, %%tmm1\n\t"
                 REP4(REP4("add %[one], %[x]\n\t"))
                 "dec %[n]\n\t"
                 "jnz 1b\n\t"
                 "tilerelease\n\t"
                 : [n] "+r"(n), [x] "+r"(x)
                 : [p] "r"(o), [cfg] "r"(&tile_config), [one] "r"(one)
                 : "memory", "cc", "rax");
}
