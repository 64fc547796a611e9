#pragma once
// Theoretical compute peaks as data: what each roof instruction computes (an ISA fact)
// and how many of them one core retires per cycle (a microarchitecture fact).
// theoretical ops/s = clock x instructions per cycle x ops per instruction x cores.

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "diagnosis/work.hpp"

namespace ceiling {

// One class of roof instruction. ops_per_instruction counts a multiply-add as 2.
struct InstructionClass {
    std::string_view roof;  // roof name, e.g. "fp32_fma512"
    Precision precision;
    Engine engine;
    std::string_view instruction;  // the instruction the roof kernel repeats
    double ops_per_instruction;
    std::string_view
        clock_width;  // which measured clock applies: "scalar", "128", "256", "512", "amx"
};

std::span<const InstructionClass> instruction_classes();
const InstructionClass* find_instruction_class(std::string_view roof);

struct Throughput {
    std::string_view roof;
    double instructions_per_cycle;  // per core, sustained, from independent instructions
    // Another count that some parts of this microarchitecture have (0: none), e.g. one
    // 512-bit FMA unit on many Skylake-SP Silver/Gold 5xxx parts. The model number cannot
    // tell them apart; the measured instructions per cycle picks.
    double alternative = 0;
    std::string_view source = {};  // this row's own source, when not the uarch's
};

struct Microarchitecture {
    std::string_view name;
    std::string_view vendor;  // CPUID vendor string
    int family;
    std::span<const int> models;
    std::span<const Throughput> throughput;
    std::string_view source;  // where the port counts come from
};

std::span<const Microarchitecture> microarchitectures();
const Microarchitecture* find_microarchitecture(std::string_view vendor, int family, int model);

// Instructions per cycle of a roof on a microarchitecture, if the table knows it.
std::optional<double> instructions_per_cycle(const Microarchitecture& uarch, std::string_view roof);

// clock x ipc x ops/instruction x cores; nullopt when the uarch does not list the roof.
std::optional<double> theoretical_ops_per_s(const Microarchitecture& uarch, std::string_view roof,
                                            double clock_hz, int cores);

// The instructions per cycle a theoretical value uses, and where that count came from.
// `measured` is the roof's instruction rate over the clock measured at the roof's own
// density (agent/machine/machine.cpp), when there is one. The table decides where it knows
// one count; the measurement confirms it (within 15 %) or is said to disagree; where the
// table lists two counts the measurement picks; where the table knows nothing a measurement
// close to a plausible count (1/4 .. 4) stands in, said as such; else nothing.
struct PortBasis {
    std::optional<double> instructions_per_cycle;
    std::string source;  // e.g. "Zen 4 table row (AMD ...), measured 1.00/cycle: confirmed"
    // The count is the measurement's, not a table's: a plausible count nearest it (a CPU or
    // roof the table does not know), or the one of a row's two counts it picked. A measured/
    // theoretical ratio then agrees by construction and checks nothing.
    bool from_measurement = false;
    bool disagrees = false;         // table and measurement differ by more than 15 %
};
PortBasis decide_instructions_per_cycle(const Microarchitecture* uarch, std::string_view roof,
                                        std::optional<double> measured);

// Theoretical peaks of a GPU from its properties (tested without a GPU). Operations per
// clock per SM come from a table per compute capability; absent for chips or engines the
// table does not know. The CPU's table above, the GPU's here: one room for peaks.
struct Theoretical {
    double value = 0;
    std::string basis;  // how it was computed, in words
};
std::optional<Theoretical> gpu_theoretical_ops(int cc_major, int cc_minor, int multiprocessors,
                                               std::optional<double> clock_hz, Precision p,
                                               Engine e);
// Double data rate: 2 x memory clock x bus width.
std::optional<Theoretical> gpu_theoretical_dram(std::optional<double> memory_clock_hz,
                                                std::optional<int> bus_bits);
// From the link speed and width: "32.0 GT/s PCIe" and "16" -> 63 GB/s per direction
// (128b/130b coding from 8 GT/s on, 8b/10b below).
std::optional<Theoretical> pcie_theoretical(const std::string& link_speed,
                                            const std::string& link_width);

}  // namespace ceiling
