#include "agent/output/gpu_machine_table.hpp"

#include "diagnosis/format.hpp"
#include "agent/output/table.hpp"

namespace ceiling::output {
namespace {

using A = TextTable::Align;

std::string versus(double measured, const std::optional<double>& theoretical) {
    return theoretical && *theoretical > 0 ? percent(measured / *theoretical) : "-";
}

}  // namespace

void render_gpu_profiles(const MachineProfile& p, std::ostream& out) {
    for (const auto& g : p.gpus) {
        out << "\nGPU " << g.index << "   " << g.name << " (compute capability " << g.compute_capability_major << "."
            << g.compute_capability_minor << ", " << g.multiprocessors << " SMs, " << bytes(static_cast<double>(g.memory_bytes))
            << ", L2 " << bytes(static_cast<double>(g.l2_bytes)) << ")";
        if (g.sm_clock_hz) out << ", peak clock " << si(*g.sm_clock_hz, "Hz");
        out << "\n          " << g.driver << "; CUDA runtime " << g.cuda_runtime << "\n";
        if (!g.compute_roofs.empty()) {
            out << "\nGPU " << g.index << " compute roofs (a multiply-add is 2 operations)\n";
            TextTable t;
            t.column("roof").column("measured", A::right).column("theoretical", A::right).column("meas/theo", A::right)
                .column("how");
            for (const auto& r : g.compute_roofs)
                t.row({r.name + (r.noisy ? "*" : ""), si(r.ops_per_s.median, "op/s"),
                       r.theoretical_ops_per_s ? si(*r.theoretical_ops_per_s, "op/s") : "-",
                       versus(r.ops_per_s.median, r.theoretical_ops_per_s), r.method});
            t.render(out);
        }
        if (!g.bandwidth_roofs.empty()) {
            out << "\nGPU " << g.index << " bandwidth roofs\n";
            TextTable t;
            t.column("roof").column("level").column("measured", A::right).column("theoretical", A::right)
                .column("meas/theo", A::right).column("how");
            for (const auto& r : g.bandwidth_roofs)
                t.row({r.name + (r.noisy ? "*" : ""), r.level, si(r.bytes_per_s.median, "B/s"),
                       r.theoretical_bytes_per_s ? si(*r.theoretical_bytes_per_s, "B/s") : "-",
                       versus(r.bytes_per_s.median, r.theoretical_bytes_per_s), r.method});
            t.render(out);
        }
        if (!g.latencies.empty()) {
            out << "\nGPU " << g.index << " dispatch\n";
            for (const auto& l : g.latencies) out << "  " << l.name << ": " << duration(l.seconds.median) << "  (" << l.method << ")\n";
        }
        out << "(* = noisy: relative spread above 10%; library roofs are labelled in 'how')\n";
    }
}

}  // namespace ceiling::output
