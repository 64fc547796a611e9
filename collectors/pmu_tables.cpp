#include "collectors/pmu_tables.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <stdexcept>

namespace ceiling::collectors {

namespace {

// ---- Intel: FP_ARITH_INST_RETIRED (Broadwell and later) ----------------------------------
// One count per retired FP arithmetic instruction of that width and precision; FMA
// instructions count twice (Intel SDM vol. 3B, event 0xC7; libpfm4's description: "some
// instructions will count twice as noted below ... FM(N)ADD/SUB ... count twice"). So
// FLOPs = count x lanes: scalar 1, 128-bit 2 doubles / 4 singles, 256-bit 4 / 8,
// 512-bit 8 / 16 -- the same weights perf's FLOPc metric uses.
constexpr FlopTerm intel_avx2_flops[] = {
    {"FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", 1, "fp64", group_flops},
    {"FP_ARITH_INST_RETIRED:SCALAR_SINGLE", 1, "fp32", group_flops},
    {"FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE", 2, "fp64", group_flops},
    {"FP_ARITH_INST_RETIRED:128B_PACKED_SINGLE", 4, "fp32", group_flops},
    {"FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE", 4, "fp64", group_flops},
    {"FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE", 8, "fp32", group_flops},
};
constexpr FlopTerm intel_avx512_flops[] = {
    {"FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", 1, "fp64", group_flops},
    {"FP_ARITH_INST_RETIRED:SCALAR_SINGLE", 1, "fp32", group_flops},
    {"FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE", 2, "fp64", group_flops},
    {"FP_ARITH_INST_RETIRED:128B_PACKED_SINGLE", 4, "fp32", group_flops},
    {"FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE", 4, "fp64", group_flops},
    {"FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE", 8, "fp32", group_flops},
    {"FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE", 8, "fp64", group_flops},
    {"FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE", 16, "fp32", group_flops},
};
// Sapphire Rapids adds AVX512-FP16 (FP_ARITH_INST_RETIRED2, event 0xCF: 8/16/32 halves per
// 128/256/512-bit instruction; a complex scalar op is 2) and AMX. Weights as in perf's
// tma_info_core_flopc for sapphirerapids, which also uses 4 x AMX_OPS_RETIRED.BF16
// (Intel: "SW to use operation multiplier of 4"). Intel dropped the AMX events from its
// event list in perfmon 1.02, so they are counted but marked low-confidence.
constexpr FlopTerm intel_spr_flops[] = {
    {"FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", 1, "fp64", group_flops},
    {"FP_ARITH_INST_RETIRED:SCALAR_SINGLE", 1, "fp32", group_flops},
    {"FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE", 2, "fp64", group_flops},
    {"FP_ARITH_INST_RETIRED:128B_PACKED_SINGLE", 4, "fp32", group_flops},
    {"FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE", 4, "fp64", group_flops},
    {"FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE", 8, "fp32", group_flops},
    {"FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE", 8, "fp64", group_flops},
    {"FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE", 16, "fp32", group_flops},
    {"FP_ARITH_INST_RETIRED2:SCALAR_HALF", 1, "fp16", group_flops_half},
    {"FP_ARITH_INST_RETIRED2:COMPLEX_SCALAR_HALF", 2, "fp16", group_flops_half},
    {"FP_ARITH_INST_RETIRED2:128B_PACKED_HALF", 8, "fp16", group_flops_half},
    {"FP_ARITH_INST_RETIRED2:256B_PACKED_HALF", 16, "fp16", group_flops_half},
    {"FP_ARITH_INST_RETIRED2:512B_PACKED_HALF", 32, "fp16", group_flops_half},
    {"AMX_OPS_RETIRED:BF16", 4, "bf16", group_flops_matrix, true,
     "Intel removed AMX_OPS_RETIRED from its event list (perfmon 1.02)"},
};

// ---- AMD: RETIRED_SSE_AVX_FLOPS (Zen 2 and later, event 0x03) ------------------------------
// Counts FLOPs directly, a multiply-accumulate as 2 (AMD PPR; libpfm4: "Each MAC operation
// is counted as 2 FLOPS"), all precisions together. It can exceed 15 per cycle and needs
// a merged counter pair, which Linux sets up itself since 5.7 ("large increment per cycle").
// Zen 4's ANY (0x1f) also includes bfloat16 MACs.
constexpr FlopTerm amd_flops[] = {
    {"RETIRED_SSE_AVX_FLOPS:ANY", 1, "mixed", group_flops},
};

// ---- DRAM traffic --------------------------------------------------------------------------
// Memory-controller CAS commands move one 64-byte line each (Intel uncore guides; the
// kernel's own scale for cas_count_* is 6.103515625e-5 MiB = 64 B). CPU-wide: they include
// every process on the socket.
constexpr ByteTerm intel_server_cas[] = {
    {"cas_count_read", 64, "read"},
    {"cas_count_write", 64, "write"},
};
// Client parts expose free-running IMC counters, one count per 64-byte line.
constexpr ByteTerm intel_client_imc[] = {
    {"data_reads", 64, "read"},
    {"data_writes", 64, "write"},
};
// Core-side proxy: demand and L2-prefetch requests that missed L3, x 64-byte line. Misses
// L3 hardware prefetches and write-backs, so it undercounts streaming writes.
constexpr ByteTerm intel_llc_misses[] = {
    {"LONGEST_LAT_CACHE:MISS", 64, "read"},
};
constexpr ByteRecipe intel_bytes[] = {
    {"memory-controller CAS (uncore_imc)", "uncore_imc", intel_server_cas, false,
     "CPU-wide: includes other processes on the socket"},
    {"memory-controller data counters (uncore_imc)", "uncore_imc", intel_client_imc, false,
     "CPU-wide: includes other processes"},
    {"last-level-cache misses x 64 B", "", intel_llc_misses, true,
     "estimate: L3 misses x line size; ignores prefetches into L3 and write-backs"},
};
// AMD: the kernel names no DRAM events for the data fabric, so only a core-side proxy:
// data-cache fills served from DRAM (local or remote), x 64-byte line.
constexpr ByteTerm zen2_dram_fills[] = {
    {"DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_LCL_DRAM:LS_MABRESP_RMT_DRAM", 64, "read"},
};
constexpr ByteTerm zen3_dram_fills[] = {
    {"ANY_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL:MEM_IO_RMT", 64, "read"},
};
constexpr ByteTerm zen4_dram_fills[] = {
    {"ANY_DATA_CACHE_FILLS_FROM_SYSTEM:DRAM_IO_NEAR:DRAM_IO_FAR", 64, "read"},
};
constexpr ByteRecipe zen2_bytes[] = {
    {"demand data-cache fills from DRAM x 64 B", "", zen2_dram_fills, true,
     "estimate: demand fills only; prefetches and write-backs not counted"},
};
constexpr ByteRecipe zen3_bytes[] = {
    {"data-cache fills from DRAM x 64 B", "", zen3_dram_fills, true,
     "estimate: fills into L1 from DRAM or I/O; write-backs not counted"},
};
constexpr ByteRecipe zen4_bytes[] = {
    {"data-cache fills from DRAM x 64 B", "", zen4_dram_fills, true,
     "estimate: fills into L1 from DRAM or I/O; write-backs not counted"},
};

constexpr std::string_view intel = "GenuineIntel";
constexpr std::string_view amd = "AuthenticAMD";
constexpr std::string_view intel_cycles = "UNHALTED_CORE_CYCLES";
constexpr std::string_view intel_instructions = "INSTRUCTION_RETIRED";
constexpr std::string_view amd_cycles = "CYCLES_NOT_IN_HALT";
constexpr std::string_view amd_instructions = "RETIRED_INSTRUCTIONS";

constexpr UarchEvents tables[] = {
    {"bdw", intel, "Broadwell", intel_cycles, intel_instructions, intel_avx2_flops, intel_bytes, 4,
     "4 programmable counters per thread with Hyper-Threading on"},
    {"bdw_ep", intel, "Broadwell-EP", intel_cycles, intel_instructions, intel_avx2_flops,
     intel_bytes, 4, "4 programmable counters per thread with Hyper-Threading on"},
    {"skl", intel, "Skylake (client)", intel_cycles, intel_instructions, intel_avx512_flops,
     intel_bytes, 4, "4 programmable counters per thread with Hyper-Threading on"},
    {"skx", intel, "Skylake-SP", intel_cycles, intel_instructions, intel_avx512_flops, intel_bytes,
     4, "4 programmable counters per thread with Hyper-Threading on"},
    {"clx", intel, "Cascade Lake", intel_cycles, intel_instructions, intel_avx512_flops,
     intel_bytes, 4, "4 programmable counters per thread with Hyper-Threading on"},
    {"icl", intel, "Ice Lake (client)", intel_cycles, intel_instructions, intel_avx512_flops,
     intel_bytes, 8, ""},
    {"icx", intel, "Ice Lake-SP", intel_cycles, intel_instructions, intel_avx512_flops, intel_bytes,
     8, ""},
    {"spr", intel, "Sapphire Rapids / Emerald Rapids", intel_cycles, intel_instructions,
     intel_spr_flops, intel_bytes, 8, "FP16 and AMX FLOP events are opt-in groups"},
    {"amd64_fam17h_zen2", amd, "AMD Zen 2", amd_cycles, amd_instructions, amd_flops, zen2_bytes, 6,
     "FLOPs not split by precision"},
    {"amd64_fam19h_zen3", amd, "AMD Zen 3", amd_cycles, amd_instructions, amd_flops, zen3_bytes, 6,
     "FLOPs not split by precision"},
    {"amd64_fam19h_zen4", amd, "AMD Zen 4", amd_cycles, amd_instructions, amd_flops, zen4_bytes, 6,
     "FLOPs not split by precision; includes bfloat16 MACs"},
};

constexpr std::string_view known_precisions[] = {"fp64", "fp32", "fp16", "bf16", "mixed"};
constexpr std::string_view known_groups[] = {group_flops, group_flops_half, group_flops_matrix};
constexpr std::string_view known_directions[] = {"read", "write", "read+write"};

template <typename T, std::size_t N>
bool one_of(const T (&list)[N], std::string_view v) {
    return std::find(std::begin(list), std::end(list), v) != std::end(list);
}

}  // namespace

std::vector<std::string> check_uarch_events(std::span<const UarchEvents> all) {
    std::vector<std::string> problems;
    std::vector<std::string_view> pmus;
    for (const auto& t : all) {
        const std::string where = "PMU table '" + std::string(t.pmu) + "'";
        auto problem = [&](const std::string& what) { problems.push_back(where + ": " + what); };
        if (t.pmu.empty()) problem("no PMU name");
        if (std::find(pmus.begin(), pmus.end(), t.pmu) != pmus.end()) problem("listed twice");
        pmus.push_back(t.pmu);
        if (t.vendor != intel && t.vendor != amd)
            problem("unknown vendor '" + std::string(t.vendor) + "'");
        if (t.cycles.empty() || t.instructions.empty()) problem("no cycles or instructions event");
        if (t.general_counters <= 0) problem("no counter count");
        std::vector<std::string_view> events = {t.cycles, t.instructions};
        for (const auto& f : t.flops) {
            if (f.event.empty()) problem("a FLOP term without an event");
            if (!(f.flops_per_count > 0 && f.flops_per_count <= 64) ||
                !std::isfinite(f.flops_per_count))
                problem(std::string(f.event) + ": flop per count must be in (0, 64]");
            if (!one_of(known_precisions, f.precision))
                problem(std::string(f.event) + ": unknown precision '" + std::string(f.precision) +
                        "'");
            if (!one_of(known_groups, f.group))
                problem(std::string(f.event) + ": unknown group '" + std::string(f.group) + "'");
            if (std::find(events.begin(), events.end(), f.event) != events.end())
                problem(std::string(f.event) + ": listed twice");
            events.push_back(f.event);
        }
        for (const auto& r : t.dram_bytes) {
            if (r.terms.empty()) problem(std::string(r.name) + ": no events");
            for (const auto& b : r.terms) {
                if (b.event.empty()) problem(std::string(r.name) + ": a term without an event");
                if (!(b.bytes_per_count > 0) || !std::isfinite(b.bytes_per_count))
                    problem(std::string(b.event) + ": bytes per count must be positive");
                if (!one_of(known_directions, b.direction))
                    problem(std::string(b.event) + ": unknown direction '" +
                            std::string(b.direction) + "'");
            }
        }
    }
    return problems;
}

std::span<const UarchEvents> uarch_events() {
    static std::once_flag checked;
    std::call_once(checked, [] {
        const auto problems = check_uarch_events(tables);
        if (!problems.empty()) {
            std::string all = "malformed PMU event tables:";
            for (const auto& p : problems) all += "\n  " + p;
            throw std::logic_error(all);
        }
    });
    return tables;
}

const UarchEvents* find_uarch_events(std::string_view pmu) {
    for (const auto& t : uarch_events())
        if (t.pmu == pmu) return &t;
    return nullptr;
}

}  // namespace ceiling::collectors
