// Compute-roof and clock kernels in inline assembly. Assembly, not intrinsics: a compiler
// may merge accumulator chains that start equal, reorder, or delete a result it proves
// unused; here each loop body is exactly the instructions written, which the disassembly
// test checks. No ISA compile flags are needed: the assembler knows every mnemonic, and
// the table's `supported` decides at run time which kernels may execute.

#include <cstddef>
#include <cstring>

#include "kernels/roofs/compute.hpp"
#include "kernels/roofs/roof_asm.hpp"

// Fixed offsets used by the assembly below.
static_assert(offsetof(ceiling::kernels::RoofOperands, acc) == 0);
static_assert(offsetof(ceiling::kernels::RoofOperands, a) == 4096);
static_assert(offsetof(ceiling::kernels::RoofOperands, b) == 5120);

// 24 instructions per iteration: every accumulator twice, so each chain sees a new
// instruction every 12 issue slots, more than latency (4-6) x ports (2) on current cores.
// VEX encodings reach only 16 registers, so 12 chains is as many as the 128- and 256-bit
// kernels can hold beside their two operands.
#define VECTOR_ROOF(NAME, MOV, R, INS)                                                               \
    extern "C" void NAME(std::int64_t n, ceiling::kernels::RoofOperands* o) {                        \
        asm volatile(ROOF_REP12(ROOF_LOAD_ACC, MOV, R) MOV " 4096(%[p]), %%" R "14\n\t" MOV        \
                     " 5120(%[p]), %%" R "15\n\t"                                                  \
                     ".p2align 5\n"                                                                \
                     "1:\n\t" ROOF_REP12(ROOF_APPLY, INS, R) ROOF_REP12(ROOF_APPLY, INS, R)        \
                     "dec %[n]\n\t"                                                                \
                     "jnz 1b\n\t" ROOF_REP12(ROOF_STORE_ACC, MOV, R) "vzeroupper\n\t"              \
                     : [n] "+r"(n)                                                                 \
                     : [p] "r"(o)                                                                  \
                     : "memory", "cc", ROOF_VEC_CLOBBERS); \
    }

// The 512-bit kernels (EVEX, 32 registers): the same 24 instructions on 24 accumulators,
// zmm0-23, operands in zmm30 and zmm31. 12 chains were too few for vdpbf16ps on Zen 5
// (2 per cycle; 12 chains at 1.84 per cycle mean ~6.5 cycles of latency, not measured
// alone): the roof ran at 1.84 instructions per cycle while the
// GEMM's 28-accumulator tile loop ran at 1.97-2.0, "above the roof"; 16 and 24 chains
// ran at 2.0 (fp32 FMA was at 2.0 with either). The target attribute only lets the
// clobber list name zmm16-31; the table's `supported` still decides what runs.
#define EVEX_ROOF(NAME, INS)                                                                         \
    extern "C" __attribute__((target("avx512f"))) void NAME(std::int64_t n,                          \
                                                            ceiling::kernels::RoofOperands* o) {     \
        asm volatile(ROOF_REP24(ROOF_LOAD_ACC, "vmovups", "zmm") "vmovups 4096(%[p]), %%zmm30\n\t" \
                     "vmovups 5120(%[p]), %%zmm31\n\t"                                             \
                     ".p2align 5\n"                                                                \
                     "1:\n\t" ROOF_REP24(ROOF_APPLY_EVEX, INS, "zmm")                              \
                     "dec %[n]\n\t"                                                                \
                     "jnz 1b\n\t" ROOF_REP24(ROOF_STORE_ACC, "vmovups", "zmm") "vzeroupper\n\t"    \
                     : [n] "+r"(n)                                                                 \
                     : [p] "r"(o)                                                                  \
                     : "memory", "cc", ROOF_VEC_CLOBBERS, ROOF_EVEX_CLOBBERS); \
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

using ceiling::kernels::roof_asm::tile_config;

// C tiles 0-3, A tiles 4-5, B tiles 6-7: four independent products, twice per iteration,
// keep the single TMUL unit busy (one tile product per 16 cycles, latency well under 64).
#define TILE_ROOF(NAME, INS)                                                             \
    extern "C" void NAME(std::int64_t n, ceiling::kernels::RoofOperands* o) {            \
        asm volatile(ROOF_TILE_LOADS                                                     \
                     ".p2align 5\n"                                                      \
                     "1:\n\t" INS " %%tmm6, %%tmm4, %%tmm0\n\t" INS                      \
                     " %%tmm7, %%tmm4, %%tmm1\n\t" INS " %%tmm6, %%tmm5, %%tmm2\n\t" INS \
                     " %%tmm7, %%tmm5, %%tmm3\n\t" INS " %%tmm6, %%tmm4, %%tmm0\n\t" INS \
                     " %%tmm7, %%tmm4, %%tmm1\n\t" INS " %%tmm6, %%tmm5, %%tmm2\n\t" INS \
                     " %%tmm7, %%tmm5, %%tmm3\n\t"                                       \
                     "dec %[n]\n\t"                                                      \
                     "jnz 1b\n\t"                                                        \
                     "tilestored %%tmm0, 0(%[p],%%rax,1)\n\t"                            \
                     "tilestored %%tmm1, 1024(%[p],%%rax,1)\n\t"                         \
                     "tilestored %%tmm2, 2048(%[p],%%rax,1)\n\t"                         \
                     "tilestored %%tmm3, 3072(%[p],%%rax,1)\n\t"                         \
                     "tilerelease\n\t"                                                   \
                     : [n] "+r"(n)                                                       \
                     : [p] "r"(o), [cfg] "r"(&tile_config)                               \
                     : "memory", "cc", "rax");                                           \
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
