#include "agent/output/machine_table.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "diagnosis/format.hpp"
#include "agent/output/gpu_machine_table.hpp"
#include "agent/output/table.hpp"

namespace ceiling::output {
namespace {

using A = TextTable::Align;

std::string range(const Summary& s, double scale, int decimals) {
    return fixed(s.min * scale, decimals) + "-" + fixed(s.max * scale, decimals);
}

void host_lines(const MachineProfile& p, std::ostream& out) {
    const auto& h = p.host;
    out << "Host      " << h.hostname << ": " << h.cpu_model;
    if (!h.microarchitecture.empty()) out << " (" << h.microarchitecture << ")";
    out << "\n          " << h.physical_cores << " cores, " << h.logical_cpus << " logical CPUs, "
        << h.numa_nodes << " NUMA node(s), " << bytes(static_cast<double>(h.memory_bytes))
        << " memory";
    if (!h.hypervisor.empty()) out << ", virtual machine (" << h.hypervisor << ")";
    out << "\n          threads used for all-core roofs: " << h.threads_used << "\n";
    out << "Caches   ";
    for (const auto& c : h.caches) {
        if (c.type == "instruction") continue;
        out << " L" << c.level << " " << bytes(static_cast<double>(c.size_bytes)) << " x"
            << c.instances << " (shared by " << c.shared_by_cpus << ")";
    }
    out << "\nISA      ";
    for (const auto& f : h.isa) out << " " << f;
    out << "\nMeasured  " << p.created_at << " in " << fixed(p.duration_s, 1) << " s"
        << (p.quick ? " (--quick: coarser)" : "") << ", ceiling " << p.build.version << "\n";
}

}  // namespace

// Compute roofs that did not scale from 1 thread to all threads: each core has its own
// FMA ports and matrix unit, so far less than linear scaling means the threads competed
// for them (shared cores, or a neighbour using them), and all-thread roofs move with that.
void scaling_notes(const MachineProfile& p, std::ostream& out) {
    std::map<std::string, std::pair<const ComputeRoof*, const ComputeRoof*>>
        by_name;  // 1 thread, most threads
    for (const auto& r : p.compute_roofs) {
        auto& [one, most] = by_name[r.name];
        if (r.threads == 1) one = &r;
        if (!most || r.threads > most->threads) most = &r;
    }
    std::string list;
    int threads = 0;
    for (const auto& [name, pair] : by_name) {
        const auto [one, most] = pair;
        if (!one || !most || most->threads < 2 || one->ops_per_s.median <= 0) continue;
        const double scale = most->ops_per_s.median / one->ops_per_s.median;
        if (scale >= 0.75 * most->threads) continue;
        list += (list.empty() ? "" : ", ") + name + " x" + fixed(scale, 2);
        threads = most->threads;
    }
    if (list.empty()) return;
    out << "Scaling from 1 to " << threads << " threads below 75% of linear: " << list << ".\n"
        << "  Each core has its own units, so the threads competed for them: threads sharing a "
           "core\n"
        << "  (SMT siblings, vCPUs the host placed on one core) or another tenant using them. "
           "All-thread\n"
        << "  roofs then depend on that and may move between runs.\n";
}

// Measured/theoretical above this is an error in the table or the clock, not noise: the
// clock chain and the roof run in alternation, and a shared host moves either by a few %.
constexpr double above_theory = 1.05;

namespace {

void render_clocks(const MachineProfile& p, std::ostream& out) {
    if (p.clocks.empty()) return;
    out << "\nEffective clock under load (dependent-add chain beside fp32 FMAs of the width, "
           "at half "
           "a 2-port core's FMA density)\n";
    TextTable t;
    t.column("width")
        .column("threads", A::right)
        .column("median", A::right)
        .column("min-max GHz", A::right);
    for (const auto& c : p.clocks)
        t.row(
            {c.width, std::to_string(c.threads), si(c.hz.median, "Hz"), range(c.hz, 1e-9, 2)});
    t.render(out);
}

// What the compute roofs' table found worth a note under it.
struct TheoryNotes {
    bool above = false;             // a roof measured more than `above_theory` of its theory
    bool from_measurement = false;  // a theoretical value whose per-cycle count was measured
};

// The compute roofs' table. A theoretical value whose per-cycle count the measurement chose
// says so beside it, and its measured/theoretical is "n/a": it agrees by construction.
TheoryNotes compute_roof_table(const MachineProfile& p, std::ostream& out) {
    TextTable t;
    t.column("roof")
        .column("instruction")
        .column("threads", A::right)
        .column("measured", A::right)
        .column("min-max", A::right)
        .column("clock", A::right)
        .column("per cycle", A::right)
        .column("theoretical", A::right)
        .column("meas/theo", A::right)
        .column("");
    TheoryNotes notes;
    for (const auto& r : p.compute_roofs) {
        std::string versus = "-", theory = "-";
        if (r.theoretical_ops_per_s && r.theoretical_from_measurement) {
            theory = si(*r.theoretical_ops_per_s, "op/s") + " (from measurement)";
            versus = "n/a";
            notes.from_measurement = true;
        } else if (r.theoretical_ops_per_s) {
            const double f = r.ops_per_s.median / *r.theoretical_ops_per_s;
            theory = si(*r.theoretical_ops_per_s, "op/s");
            versus = percent(f) + (f > above_theory ? " !" : "");
            notes.above = notes.above || f > above_theory;
        }
        // per cycle: what the theoretical value used (what the measurement gave).
        std::string ipc = r.instructions_per_cycle ? fixed(*r.instructions_per_cycle, 2) : "-";
        if (r.measured_instructions_per_cycle)
            ipc += " (" + fixed(*r.measured_instructions_per_cycle, 2) + ")";
        t.row({r.name, r.instruction, std::to_string(r.threads), si(r.ops_per_s.median, "op/s"),
               range(r.ops_per_s, 1e-9, 1) + " G", r.clock_hz ? si(*r.clock_hz, "Hz") : "-",
               ipc, theory, versus, r.noisy ? "noisy" : ""});
    }
    t.render(out);
    return notes;
}

void render_compute_roofs(const MachineProfile& p, std::ostream& out) {
    if (p.compute_roofs.empty()) return;
    out << "\nCompute roofs (ops/s: FLOP/s for floats, int ops/s for int8; a multiply-add is "
           "2)\n";
    const TheoryNotes notes = compute_roof_table(p, out);
    out << "clock: the roof's own, from a chain of dependent adds woven into its loop at the "
           "shortest\n  length that sets the time; per cycle: instructions per cycle per core "
           "the theoretical\n  value used (measured: roof rate / clock / cores); theoretical = "
           "clock x per cycle x\n  ops/instruction x physical cores in use.\n";
    if (notes.above)
        out << "! measured more than 5% above theoretical: the instructions-per-cycle table or "
               "the clock\n  measurement is wrong for this CPU; the roof itself is what ran "
               "(up to 5% above is the\n  clock measurement's own noise).\n";
    if (notes.from_measurement)
        out << "(from measurement): the peak table does not know this CPU's count for the roof, "
               "or lists\n  two, and the measured rate chose it: that theoretical value follows "
               "the measurement\n  and checks nothing (meas/theo n/a).\n";
    std::set<std::string> seen;
    for (const auto& r : p.compute_roofs)
        if (!r.theoretical_source.empty() && seen.insert(r.name).second) {
            if (seen.size() == 1) out << "Where each per-cycle count comes from:\n";
            out << "  " << r.name << ": " << r.theoretical_source << "\n";
        }
    scaling_notes(p, out);
}

void render_bandwidth_roofs(const MachineProfile& p, std::ostream& out) {
    if (p.bandwidth_roofs.empty()) return;
    out << "\nBandwidth roofs (plateaus of the working-set sweep; explicit bytes, RFO not "
           "counted)\n";
    // One row per level and thread count, one column per kernel, in the order the
    // profile lists them (the sweep's).
    std::vector<std::string> kernels;
    std::vector<std::pair<std::string, int>> keys;
    std::map<std::pair<std::string, int>, std::map<std::string, const BandwidthRoof*>> cells;
    for (const auto& r : p.bandwidth_roofs) {
        const auto key = std::make_pair(r.level, r.threads);
        if (!cells.count(key)) keys.push_back(key);
        cells[key][r.kernel] = &r;
        if (std::find(kernels.begin(), kernels.end(), r.kernel) == kernels.end())
            kernels.push_back(r.kernel);
    }
    TextTable t;
    t.column("level").column("threads", A::right);
    for (const auto& k : kernels) t.column(k, A::right);
    t.column("working sets");
    for (const auto& key : keys) {
        std::vector<std::string> row = {key.first, std::to_string(key.second)};
        std::uint64_t lo = 0, hi = 0;
        for (const auto& k : kernels) {
            const auto it = cells[key].find(k);
            if (it == cells[key].end()) {
                row.push_back("-");
                continue;
            }
            const BandwidthRoof& r = *it->second;
            row.push_back(si(r.bytes_per_s.median, "B/s") + (r.noisy ? "*" : ""));
            lo = lo ? std::min(lo, r.min_working_set_bytes) : r.min_working_set_bytes;
            hi = std::max(hi, r.max_working_set_bytes);
        }
        row.push_back(bytes(static_cast<double>(lo)) + " - " + bytes(static_cast<double>(hi)));
        t.row(row);
    }
    t.render(out);
    out << "(* = noisy: relative spread above 10%)\n";
}

void render_latencies(const MachineProfile& p, std::ostream& out) {
    if (p.latencies.empty()) return;
    out << "\nLatency (dependent loads, random order)\n";
    TextTable t;
    t.column("level")
        .column("working set", A::right)
        .column("latency", A::right)
        .column("cycles", A::right);
    // A cache level whose latency is DRAM-like did not keep its working set (a sliced or
    // shared cache in a VM, or a random chase over 4 KiB pages paying TLB misses): the
    // number is right, the level's name is not what it measured, so it is flagged.
    double dram_s = 0;
    for (const auto& l : p.latencies)
        if (l.level == "DRAM") dram_s = l.seconds.median;
    bool flagged = false;
    for (const auto& l : p.latencies) {
        const bool dram_like = l.level != "DRAM" && dram_s > 0 && l.seconds.median >= 0.7 * dram_s;
        flagged = flagged || dram_like;
        t.row({l.level + (dram_like ? " (DRAM-like)" : ""), bytes(static_cast<double>(l.working_set_bytes)),
               duration(l.seconds.median), l.cycles ? fixed(*l.cycles, 1) : "-"});
    }
    t.render(out);
    if (flagged)
        out << "(DRAM-like: at least 70% of DRAM's latency, so this working set did not stay in that\n"
               " cache here: a sliced or shared cache in a VM, or TLB misses of a random chase)\n";
}

void render_overheads(const MachineProfile& p, std::ostream& out) {
    out << "\nDispatch overheads\n";
    if (p.overheads.fork_join_s)
        out << "  fork/join of " << p.overheads.threads
            << " threads: " << duration(p.overheads.fork_join_s->median) << "\n";
    if (p.overheads.empty_call_s)
        out << "  empty function call:     " << duration(p.overheads.empty_call_s->median) << "\n";
}

void render_storage(const MachineProfile& p, std::ostream& out) {
    if (!p.storage) return;
    const StorageRoof& st = *p.storage;
    out << "\nStorage under " << st.directory
        << (st.device.empty() ? "" : " (" + st.device + ")")
        << ", sequential, 8 requests of 1 MiB in flight\n"
        << "  read  (O_DIRECT):          " << si(st.read_roof_bytes_per_s(), "B/s")
        << "  (best of " << st.read_bytes_per_s.count << " passes; median "
        << si(st.read_bytes_per_s.median, "B/s") << ")\n"
        << "  write (then fdatasync):    " << si(st.write_roof_bytes_per_s(), "B/s")
        << "  (best of " << st.write_bytes_per_s.count << " passes; median "
        << si(st.write_bytes_per_s.median, "B/s") << ")\n";
}

void render_absent(const MachineProfile& p, std::ostream& out) {
    if (p.absent.empty()) return;
    out << "\nNot measured here\n";
    for (const auto& a : p.absent) out << "  " << a.what << ": " << a.reason << "\n";
}

}  // namespace

void render_machine_profile(const MachineProfile& p, std::ostream& out) {
    host_lines(p, out);
    render_clocks(p, out);
    render_compute_roofs(p, out);
    render_bandwidth_roofs(p, out);
    render_latencies(p, out);
    render_overheads(p, out);
    render_storage(p, out);
    render_gpu_profiles(p, out);  // GPU section (issue 7)
    render_absent(p, out);
}

}  // namespace ceiling::output
