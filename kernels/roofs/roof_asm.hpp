#pragma once
// What the compute-roof kernels (compute_x86.cpp) and their chained copies (chained_x86.cpp)
// share: the register layout of their loops, as assembler text, and the AMX tile
// configuration. One definition, so a chained loop is the roof's loop by construction.

// Fixed offsets of RoofOperands (compute.hpp) used by the assembly: accumulators from 0,
// operand a at 4096, b at 5120.
#define ROOF_REP12(M, A, B)                                                                 \
    M(0, A, B)                                                                              \
    M(1, A, B)                                                                              \
    M(2, A, B) M(3, A, B) M(4, A, B) M(5, A, B) M(6, A, B) M(7, A, B) M(8, A, B) M(9, A, B) \
        M(10, A, B) M(11, A, B)
#define ROOF_REP24(M, A, B)                                                             \
    ROOF_REP12(M, A, B)                                                                 \
    M(12, A, B)                                                                         \
    M(13, A, B)                                                                         \
    M(14, A, B) M(15, A, B) M(16, A, B) M(17, A, B) M(18, A, B) M(19, A, B) M(20, A, B) \
        M(21, A, B) M(22, A, B) M(23, A, B)

// Accumulator i lives in register i. VEX kernels (16 registers): operand a in register 14,
// b in 15, 12 accumulators. EVEX (512-bit, 32 registers): a in 30, b in 31, 24.
#define ROOF_LOAD_ACC(i, MOV, R) MOV " " #i "*64(%[p]), %%" R #i "\n\t"
#define ROOF_STORE_ACC(i, MOV, R) MOV " %%" R #i ", " #i "*64(%[p])\n\t"
#define ROOF_APPLY(i, INS, R) INS " %%" R "15, %%" R "14, %%" R #i "\n\t"
#define ROOF_APPLY_EVEX(i, INS, R) INS " %%" R "31, %%" R "30, %%" R #i "\n\t"

#define ROOF_VEC_CLOBBERS                                                                    \
    "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", \
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"
// Named only in functions compiled with target("avx512f"): GCC knows zmm16-31 there alone.
#define ROOF_EVEX_CLOBBERS \
    "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm30", "xmm31"

// The tile roofs' start: the configuration (tile_config, below, as %[cfg]), then C tiles
// 0-3 from the accumulators, A tiles 4-5 from operand a and B tiles 6-7 from b, 64-byte rows.
#define ROOF_TILE_LOADS                        \
    "ldtilecfg (%[cfg])\n\t"                   \
    "mov $64, %%rax\n\t"                       \
    "tileloadd 0(%[p],%%rax,1), %%tmm0\n\t"    \
    "tileloadd 1024(%[p],%%rax,1), %%tmm1\n\t" \
    "tileloadd 2048(%[p],%%rax,1), %%tmm2\n\t" \
    "tileloadd 3072(%[p],%%rax,1), %%tmm3\n\t" \
    "tileloadd 4096(%[p],%%rax,1), %%tmm4\n\t" \
    "tileloadd 4096(%[p],%%rax,1), %%tmm5\n\t" \
    "tileloadd 5120(%[p],%%rax,1), %%tmm6\n\t" \
    "tileloadd 5120(%[p],%%rax,1), %%tmm7\n\t"

namespace ceiling::kernels::roof_asm {

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
inline const TileConfig tile_config{};

}  // namespace ceiling::kernels::roof_asm
