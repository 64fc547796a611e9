#pragma once
// Which PMU events measure operations and memory traffic on each CPU model, and the
// factors that turn their counts into FLOPs and bytes. Data, not code: one table per
// microarchitecture, keyed by libpfm4's PMU name, checked when first used. A model
// without a table still gets cycles and instructions from generic events.

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ceiling::collectors {

// Event groups a collector can ask for. "flops" is the per-width FP_ARITH set (Intel) or
// the FLOP event (AMD); "flops_half" and "flops_matrix" are opt-in extras (Sapphire
// Rapids FP16 and AMX) that would otherwise crowd the counters.
inline constexpr std::string_view group_flops = "flops";
inline constexpr std::string_view group_flops_half = "flops_half";
inline constexpr std::string_view group_flops_matrix = "flops_matrix";

struct FlopTerm {
    std::string_view event;      // libpfm4 name without the "pmu::" prefix
    double flops_per_count;      // unit: flop per count
    std::string_view precision;  // "fp64", "fp32", "fp16", "bf16", or "mixed" (not split)
    std::string_view group;
    bool low_confidence = false;  // the vendor no longer vouches for this event
    std::string_view note = {};
};

struct ByteTerm {
    std::string_view event;
    double bytes_per_count;      // unit: bytes per count (a cache line or a CAS burst: 64)
    std::string_view direction;  // "read", "write", "read+write"
};

// One way of measuring DRAM traffic. A model lists several; the first whose events all
// exist here is used.
struct ByteRecipe {
    std::string_view name;
    // Non-empty: a kernel-described CPU-wide PMU (sysfs), every instance summed, e.g.
    // "uncore_imc" -> uncore_imc_0..N. Empty: core events encoded by libpfm4.
    std::string_view sysfs_pmu;
    std::span<const ByteTerm> terms;
    bool estimate;  // a proxy for DRAM traffic, labelled as an estimate
    std::string_view note;
};

struct UarchEvents {
    std::string_view pmu;     // libpfm4 PMU name, e.g. "spr"
    std::string_view vendor;  // /proc/cpuinfo vendor_id
    std::string_view name;    // for people
    std::string_view cycles;  // libpfm4 names
    std::string_view instructions;
    std::span<const FlopTerm> flops;
    std::span<const ByteRecipe> dram_bytes;
    int general_counters;  // programmable counters per logical CPU (warns of multiplexing)
    std::string_view notes;
};

// Every table, checked on first use (a malformed table is a programming error: throws
// std::logic_error naming the problems).
std::span<const UarchEvents> uarch_events();
const UarchEvents* find_uarch_events(std::string_view pmu);

// The check itself: one message per problem, empty when the tables are sound. Units:
// FLOP factors must be positive and at most 64 per count; byte factors positive; every
// precision, group and direction a known name; no event twice in a table.
std::vector<std::string> check_uarch_events(std::span<const UarchEvents> tables);

}  // namespace ceiling::collectors
