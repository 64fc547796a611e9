#pragma once
// `ceiling machine` on GPUs: every roof of kernels/gpu on every visible device, each beside
// its theoretical value from the device's properties. Without CUDA or a device the profile
// says why in `absent`, and the CPU part is unaffected.

#include <optional>
#include <string>
#include <vector>

#include "agent/measure/machine.hpp"
#include "diagnosis/machine_profile.hpp"

namespace ceiling::measure {

// Measures every visible GPU; appends what could not be measured (and why) to `absent`.
std::vector<GpuProfile> measure_gpus(const MachineOptions& options, std::vector<Absence>& absent);

// Theoretical peaks (pure; tested without a GPU). Operations per clock per SM come from a
// table per compute capability; absent for chips or engines the table does not know.
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

}  // namespace ceiling::measure
