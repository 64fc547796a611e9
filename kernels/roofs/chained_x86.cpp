// Roof kernels with a dependent chain of scalar adds woven into their loop: the clock a
// roof really runs at. A roof kernel alone tells instructions per second, not cycles; the
// chain of `add reg, reg` (latency 1 on every x86-64 core, on integer ports that no vector
// or tile instruction needs on AMD, and that have a free port (p6) on Intel) counts cycles.
// With L adds per iteration an iteration takes max(L, roof instructions / ports) cycles:
// while the roof's instructions bind, the time stays the roof's; from the first L where
// the chain binds, time = L / clock at (nearly) the roof's own instruction density. The
// sweep over L (agent/machine/machine.cpp) so yields the clock heavy code of this kind
// really gets, and with the roof's rate, the instructions per cycle (the ports).
//
// The adds are spread evenly among the roof's instructions with assembler arithmetic
// (.rept), so the loop is the roof's loop plus adds and nothing else; a test reads the
// disassembly to check that.

#include <array>
#include <cstddef>
#include <utility>

#include "kernels/roofs/compute.hpp"
#include "kernels/roofs/roof_asm.hpp"

// After roof instruction K of N: the adds that bring the running total to L*(K+1)/N.
#define CHAIN_ADDS(K, N) \
    ".rept (%c[L]*((" K ")+1))/" #N "-(%c[L]*(" K "))/" #N "\n\tadd %[one], %[x]\n\t.endr\n\t"
#define APPLY_FIRST(i, INS, R) ROOF_APPLY(i, INS, R) CHAIN_ADDS(#i, 24)
#define APPLY_SECOND(i, INS, R) ROOF_APPLY(i, INS, R) CHAIN_ADDS(#i "+12", 24)
#define APPLY_EVEX(i, INS, R) ROOF_APPLY_EVEX(i, INS, R) CHAIN_ADDS(#i, 24)

namespace ceiling::kernels::chained {

// The vector roof's loop (24 instructions on 12 accumulators, as compute_x86.cpp) + L adds.
// The accumulators are not stored back: only the time matters here.
#define CHAINED_VECTOR(NAME, R, INS)                                                                   \
    template <int L>                                                                                   \
    struct NAME {                                                                                      \
        static void run(std::int64_t n, RoofOperands* o) {                                             \
            long x = 0;                                                                                \
            const long one = 1;                                                                        \
            asm volatile(ROOF_REP12(ROOF_LOAD_ACC, "vmovups", R) "vmovups 4096(%[p]), %%" R "14\n\t" \
                         "vmovups 5120(%[p]), %%" R "15\n\t"                                       \
                         ".p2align 5\n"                                                            \
                         "1:\n\t" ROOF_REP12(APPLY_FIRST, INS, R) ROOF_REP12(APPLY_SECOND, INS, R) \
                         "dec %[n]\n\t"                                                            \
                         "jnz 1b\n\t"                                                              \
                         "vzeroupper\n\t"                                                          \
                         : [n] "+r"(n), [x] "+r"(x)                                                \
                         : [p] "r"(o), [one] "r"(one), [L] "i"(L)                                  \
                         : "memory", "cc", ROOF_VEC_CLOBBERS); \
        }                                                                                              \
    };

// The 512-bit roof's loop (24 instructions on 24 accumulators, zmm0-23, as
// compute_x86.cpp's EVEX_ROOF) + L adds.
#define CHAINED_EVEX(NAME, INS)                                                                          \
    template <int L>                                                                                     \
    struct NAME {                                                                                        \
        __attribute__((target("avx512f"))) static void run(std::int64_t n, RoofOperands* o) {            \
            long x = 0;                                                                                  \
            const long one = 1;                                                                          \
            asm volatile(ROOF_REP24(ROOF_LOAD_ACC, "vmovups", "zmm") "vmovups 4096(%[p]), %%zmm30\n\t" \
                         "vmovups 5120(%[p]), %%zmm31\n\t"                                         \
                         ".p2align 5\n"                                                            \
                         "1:\n\t" ROOF_REP24(APPLY_EVEX, INS, "zmm")                               \
                         "dec %[n]\n\t"                                                            \
                         "jnz 1b\n\t"                                                              \
                         "vzeroupper\n\t"                                                          \
                         : [n] "+r"(n), [x] "+r"(x)                                                \
                         : [p] "r"(o), [one] "r"(one), [L] "i"(L)                                  \
                         : "memory", "cc", ROOF_VEC_CLOBBERS, ROOF_EVEX_CLOBBERS); \
        }                                                                                                \
    };

CHAINED_VECTOR(fp64_scalar, "xmm", "vfmadd231sd")
CHAINED_VECTOR(fp32_scalar, "xmm", "vfmadd231ss")
CHAINED_VECTOR(fp64_fma128, "xmm", "vfmadd231pd")
CHAINED_VECTOR(fp32_fma128, "xmm", "vfmadd231ps")
CHAINED_VECTOR(fp64_fma256, "ymm", "vfmadd231pd")
CHAINED_VECTOR(fp32_fma256, "ymm", "vfmadd231ps")
CHAINED_EVEX(fp64_fma512, "vfmadd231pd")
CHAINED_EVEX(fp32_fma512, "vfmadd231ps")
CHAINED_EVEX(fp16_fma512, "vfmadd231ph")
CHAINED_EVEX(bf16_dot512, "vdpbf16ps")
CHAINED_VECTOR(int8_dot256, "ymm", "%{vex%} vpdpbusd")
CHAINED_EVEX(int8_dot512, "vpdpbusd")

using roof_asm::tile_config;

// The tile roof's loop (8 products on 4 C tiles) + L adds.
#define TILE_STEP(K, INS, C, A, B) INS " %%" B ", %%" A ", %%" C "\n\t" CHAIN_ADDS(#K, 8)
#define CHAINED_TILE(NAME, INS)                                                                   \
    template <int L>                                                                              \
    struct NAME {                                                                                 \
        static void run(std::int64_t n, RoofOperands* o) {                                        \
            long x = 0;                                                                           \
            const long one = 1;                                                                   \
            asm volatile(ROOF_TILE_LOADS                                                        \
                         ".p2align 5\n"                                                            \
                         "1:\n\t" TILE_STEP(0, INS, "tmm0", "tmm4", "tmm6")                        \
                             TILE_STEP(1, INS, "tmm1", "tmm4", "tmm7")                             \
                                 TILE_STEP(2, INS, "tmm2", "tmm5", "tmm6")                         \
                                     TILE_STEP(3, INS, "tmm3", "tmm5", "tmm7")                     \
                                         TILE_STEP(4, INS, "tmm0", "tmm4", "tmm6")                 \
                                             TILE_STEP(5, INS, "tmm1", "tmm4", "tmm7")             \
                                                 TILE_STEP(6, INS, "tmm2", "tmm5", "tmm6")         \
                                                     TILE_STEP(7, INS, "tmm3", "tmm5", "tmm7")     \
                         "dec %[n]\n\t"                                                            \
                         "jnz 1b\n\t"                                                              \
                         "tilerelease\n\t"                                                         \
                         : [n] "+r"(n), [x] "+r"(x)                                                \
                         : [p] "r"(o), [cfg] "r"(&tile_config), [one] "r"(one), [L] "i"(L)         \
                         : "memory", "cc", "rax"); \
        }                                                                                         \
    };

CHAINED_TILE(bf16_amx, "tdpbf16ps")
CHAINED_TILE(int8_amx, "tdpbusd")

// Chain lengths tried, ascending. Vector loops hold 24 instructions: the chain binds past
// 24 / ports, so 6..96 covers 4 down to 1/4 instructions per cycle, in steps of at most
// 1/3 so the first chain-bound length sits close to the roof's own density. Tile loops
// hold 8 products at about 16 cycles each (AMX), 128 cycles an iteration.
constexpr std::array vector_ladder = {6, 8, 10, 12, 14, 16, 18, 20, 24, 28, 32, 36, 40, 48, 56, 64, 80, 96};
constexpr std::array tile_ladder = {64, 80, 96, 112, 128, 144, 160, 192, 224, 256, 320};

template <template <int> class K, const auto& Ladder, std::size_t... I>
constexpr std::array<ChainedRun, sizeof...(I)> ladder_of(std::index_sequence<I...>) {
    return {{{Ladder[I], &K<Ladder[I]>::run}...}};
}
template <template <int> class K>
constexpr auto vector_runs = ladder_of<K, vector_ladder>(std::make_index_sequence<vector_ladder.size()>());
template <template <int> class K>
constexpr auto tile_runs = ladder_of<K, tile_ladder>(std::make_index_sequence<tile_ladder.size()>());

struct Entry {
    std::string_view roof;
    std::span<const ChainedRun> runs;
};
const std::array<Entry, 14> entries = {{
    {"fp64_scalar", vector_runs<fp64_scalar>}, {"fp32_scalar", vector_runs<fp32_scalar>},
    {"fp64_fma128", vector_runs<fp64_fma128>}, {"fp32_fma128", vector_runs<fp32_fma128>},
    {"fp64_fma256", vector_runs<fp64_fma256>}, {"fp32_fma256", vector_runs<fp32_fma256>},
    {"fp64_fma512", vector_runs<fp64_fma512>}, {"fp32_fma512", vector_runs<fp32_fma512>},
    {"fp16_fma512", vector_runs<fp16_fma512>}, {"bf16_dot512", vector_runs<bf16_dot512>},
    {"int8_dot256", vector_runs<int8_dot256>}, {"int8_dot512", vector_runs<int8_dot512>},
    {"bf16_amx", tile_runs<bf16_amx>},         {"int8_amx", tile_runs<int8_amx>},
}};

}  // namespace ceiling::kernels::chained

namespace ceiling::kernels {

std::span<const ChainedRun> chained_runs(std::string_view roof) {
    for (const auto& e : chained::entries)
        if (e.roof == roof) return e.runs;
    return {};
}

}  // namespace ceiling::kernels
