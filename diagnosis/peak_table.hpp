#pragma once
// Theoretical compute peaks as data: what each roof instruction computes (an ISA fact)
// and how many of them one core retires per cycle (a microarchitecture fact).
// theoretical ops/s = clock x instructions per cycle x ops per instruction x cores.

#include <optional>
#include <span>
#include <string_view>

#include "diagnosis/work.hpp"

namespace ceiling {

// One class of roof instruction. ops_per_instruction counts a multiply-add as 2.
struct InstructionClass {
    std::string_view roof;         // roof name, e.g. "fp32_fma512"
    Precision precision;
    Engine engine;
    std::string_view instruction;  // the instruction the roof kernel repeats
    double ops_per_instruction;
    std::string_view clock_width;  // which measured clock applies: "scalar", "128", "256", "512", "amx"
};

std::span<const InstructionClass> instruction_classes();
const InstructionClass* find_instruction_class(std::string_view roof);

struct Throughput {
    std::string_view roof;
    double instructions_per_cycle;  // per core, sustained, from independent instructions
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

}  // namespace ceiling
