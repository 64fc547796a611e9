#pragma once
// Compute-roof kernels: each repeats one instruction class on independent accumulators
// (enough of them to cover latency x ports on every current core), written in inline
// assembly so that no compiler merges identical accumulator chains or deletes a result.
// Tests read the disassembly and check each loop body holds the instructions it claims.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "kernels/cpu_features.hpp"

namespace ceiling::kernels {

enum class Elem { f64, f32, f16, bf16, u8, s8, i32 };

// Inputs and outputs of one kernel call. Vector kernels use accumulator i at
// acc[i * 64]; tile kernels tile i at acc[i * 1024] (16 rows x 64 bytes).
struct alignas(64) RoofOperands {
    alignas(64) std::byte acc[4096];
    alignas(64) std::byte a[1024];
    alignas(64) std::byte b[1024];
};

struct ComputeKernel {
    std::string_view roof;      // matches the diagnosis instruction-class name
    std::string_view symbol;    // the function's symbol, for the disassembly check
    std::string_view mnemonic;  // what objdump prints for the repeated instruction
    std::string_view reg;       // register class of the destination: "xmm", "ymm", "zmm", "tmm"
    int instructions_per_iteration;
    double ops_per_instruction;  // multiply-add = 2
    bool (*supported)(const CpuFeatures&);
    bool needs_amx_permission;
    // Runs iterations x instructions_per_iteration instructions: loads the accumulators
    // and operands from ops, repeats, stores the accumulators back.
    void (*run)(std::int64_t iterations, RoofOperands* ops);

    // For the correctness check: element types, how many accumulators and lanes change,
    // and by how much per iteration with the operands fill_check_operands() writes.
    Elem acc_elem, a_elem, b_elem;
    int accumulators;
    std::size_t acc_stride_bytes;
    int lanes;  // lanes of each accumulator that the instruction updates
    double increment_per_iteration;
};

std::span<const ComputeKernel> compute_kernels();
const ComputeKernel* find_compute_kernel(std::string_view roof);

// Writes the check operands: accumulator i, every lane = i + 1; a = 1; b = 0.5 for float
// types, 2 for s8. Increment per instruction therefore equals the products summed per
// lane (e.g. vdpbf16ps: 2 x 1 x 0.5 = 1).
void fill_check_operands(const ComputeKernel& k, RoofOperands& ops);

// Runs the kernel for a few iterations and checks every updated lane. Returns an empty
// string on success, else what differed.
std::string verify_compute_kernel(const ComputeKernel& k);

// Dependent chain of 1-cycle-latency integer adds at one vector width, interleaved with
// independent FMAs (or tile products) of the same width so the core runs at the clock
// heavy code of that width gets. Cycles = chain_per_iteration x iterations.
struct ClockKernel {
    std::string_view width;  // "scalar", "128", "256", "512", "amx"
    std::string_view symbol;
    int chain_per_iteration;
    bool (*supported)(const CpuFeatures&);
    bool needs_amx_permission;
    void (*run)(std::int64_t iterations, RoofOperands* ops);
};

std::span<const ClockKernel> clock_kernels();

// A roof kernel's loop with `chain` dependent 1-cycle scalar adds woven in per iteration
// (chained_x86.cpp explains the method). Same operands and supported() as the roof; the
// accumulators are left unstored.
struct ChainedRun {
    int chain;  // adds per iteration
    void (*run)(std::int64_t iterations, RoofOperands* ops);
};

// The chained variants of a roof, by ascending chain length (empty for an unknown roof).
std::span<const ChainedRun> chained_runs(std::string_view roof);

}  // namespace ceiling::kernels
