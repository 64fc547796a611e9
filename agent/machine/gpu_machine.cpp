#include "agent/machine/gpu_machine.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>

#include <spdlog/spdlog.h>

#include "collectors/cupti/gpu_probe.hpp"
#include "diagnosis/peak_table.hpp"
#include "kernels/gpu/gpu_kernels.hpp"

namespace ceiling::measure {
namespace {

namespace kg = kernels::gpu;

Precision to_precision(kernels::WorkPrecision p) {
    return parse_precision(kernels::to_string(p)).value_or(Precision::fp32);
}
Engine to_engine(kernels::WorkEngine e) {
    return parse_engine(kernels::to_string(e)).value_or(Engine::vector);
}

std::string read_sysfs(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

// /sys/bus/pci/devices/<domain:bus:dev.fn>: the bus id cudaDeviceGetPCIBusId gives, lower case.
std::optional<Theoretical> pcie_from_sysfs(const std::string& bus_id) {
    std::string id = bus_id;
    std::transform(id.begin(), id.end(), id.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const std::string dir = "/sys/bus/pci/devices/" + id + "/";
    // The maximum link, not the current one: an idle GPU trains its link down to save power.
    return pcie_theoretical(read_sysfs(dir + "max_link_speed"), read_sysfs(dir + "max_link_width"));
}

kg::TimingPlan plan_for(const MachineOptions& o) {
    return o.quick ? kg::TimingPlan{1, 5} : kg::TimingPlan{2, 15};
}

}  // namespace

std::vector<GpuProfile> measure_gpus(const MachineOptions& options, std::vector<Absence>& absent) {
    const auto availability = kg::gpu_availability();
    if (availability.devices.empty()) {
        absent.push_back({"GPU roofs", availability.reason});
        return {};
    }
    const auto probe = collectors::gpu::probe_gpu();
    if (options.add_steps)
        options.add_steps(static_cast<int>(availability.devices.size() * kg::gpu_roofs().size()));
    const auto plan = plan_for(options);
    std::vector<GpuProfile> gpus;
    for (const auto& d : availability.devices) {
        GpuProfile g;
        g.index = d.index;
        g.name = d.name;
        g.pci_bus_id = d.pci_bus_id;
        g.compute_capability_major = d.compute_capability_major;
        g.compute_capability_minor = d.compute_capability_minor;
        g.multiprocessors = d.multiprocessors;
        g.memory_bytes = d.memory_bytes;
        g.l2_bytes = d.l2_bytes;
        g.sm_clock_hz = d.sm_clock_hz;
        g.memory_clock_hz = d.memory_clock_hz;
        g.memory_bus_bits = d.memory_bus_bits;
        g.driver = probe.driver.available ? probe.driver.reason
                                          : collectors::gpu::cuda_version_string(d.driver_version);
        g.cuda_runtime = collectors::gpu::cuda_version_string(d.runtime_version);
        const auto dram = gpu_theoretical_dram(d.memory_clock_hz, d.memory_bus_bits);
        const auto pcie = pcie_from_sysfs(d.pci_bus_id);
        for (const auto& roof : kg::gpu_roofs()) {
            const std::string label =
                "GPU " + std::to_string(d.index) + " " + std::string(roof.name);
            if (options.on_step) options.on_step(label);
            kg::GpuRoofResult r;
            try {
                r = kg::run_gpu_roof(roof, d.index, plan);
            } catch (const kg::GpuError& e) {
                spdlog::warn("{}: {}", label, e.what());
                absent.push_back({label, e.what()});
                continue;
            }
            const Summary s = summarize(r.values);
            const bool noisy = s.rel_spread > noisy_spread;
            switch (roof.kind) {
                case kg::RoofKind::compute: {
                    GpuComputeRoof c{std::string(roof.name),
                                     to_precision(roof.precision),
                                     to_engine(roof.engine),
                                     roof.library,
                                     std::string(roof.method),
                                     s,
                                     std::nullopt,
                                     "",
                                     noisy};
                    if (auto t = gpu_theoretical_ops(d.compute_capability_major,
                                                     d.compute_capability_minor, d.multiprocessors,
                                                     d.sm_clock_hz, c.precision, c.engine)) {
                        c.theoretical_ops_per_s = t->value;
                        c.theoretical_basis = t->basis;
                    }
                    g.compute_roofs.push_back(std::move(c));
                    break;
                }
                case kg::RoofKind::bandwidth: {
                    GpuBandwidthRoof b{std::string(roof.name),
                                       std::string(roof.level),
                                       std::string(roof.pattern),
                                       roof.library,
                                       std::string(roof.method),
                                       r.working_set_bytes,
                                       s,
                                       std::nullopt,
                                       "",
                                       noisy};
                    const std::optional<Theoretical> t = roof.level == "HBM"    ? dram
                                                         : roof.level == "PCIe" ? pcie
                                                                                : std::nullopt;
                    if (t) {
                        b.theoretical_bytes_per_s = t->value;
                        b.theoretical_basis = t->basis;
                    }
                    g.bandwidth_roofs.push_back(std::move(b));
                    break;
                }
                case kg::RoofKind::latency:
                    g.latencies.push_back({std::string(roof.name), std::string(roof.method), s});
                    break;
            }
        }
        gpus.push_back(std::move(g));
    }
    return gpus;
}

}  // namespace ceiling::measure
