#include "agent/output/bound_table.hpp"

#include <cstdio>

#include "diagnosis/format.hpp"
#include "agent/output/table.hpp"

namespace ceiling::output {
namespace {

using A = TextTable::Align;

// Integer work is counted in operations, floating-point work in FLOP.
std::string op_unit(Precision p) { return p == Precision::int8 ? "op" : "FLOP"; }

// 16 -> "16", 4.5 -> "4.5"
std::string plain(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

std::string ceiling_name(const ComputeCeiling& c) {
    std::string s = c.name + " (" + std::string(to_string(c.engine)) + ", " +
                    std::to_string(c.threads) + (c.threads == 1 ? " thread" : " threads");
    if (c.basis == RoofBasis::scaled)
        s += ", from the " + std::to_string(c.measured_threads) + "-thread roof";
    return s + ")";
}

void levers_and_notes(const std::vector<LeverAdvice>& levers, const std::vector<Finding>& findings,
                      std::ostream& out) {
    for (std::size_t i = 0; i < levers.size(); ++i) {
        out << (i == 0 ? "Levers      " : "            ") << to_string(levers[i].lever) << ": "
            << levers[i].move << "\n";
    }
    for (std::size_t i = 0; i < findings.size(); ++i)
        out << (i == 0 ? "Notes       " : "            ") << findings[i].detail << "\n";
}

}  // namespace

void render_work_bound(const WorkBound& b, std::ostream& out) {
    const std::string u = op_unit(b.work.precision);
    out << "Work        " << si(b.work.ops, u) << " " << to_string(b.work.precision) << " on the "
        << to_string(b.work.engine) << " engine, " << si(b.work.compulsory_bytes, "B")
        << " compulsory, working set " << bytes(b.work.working_set_bytes) << ", " << b.threads
        << (b.threads == 1 ? " thread\n" : " threads\n");
    out << "Intensity   "
        << (b.intensity_ops_per_byte ? fixed(*b.intensity_ops_per_byte, 3) + " " + u + "/B"
                                     : std::string("- (no bytes)"))
        << "\n";
    out << "Compute     " << si(b.compute.ops_per_s, u + "/s") << " " << ceiling_name(b.compute)
        << " -> floor " << duration(b.compute_floor_s) << "\n";
    out << "Memory      bandwidth per level (the working set lives in " << b.level << ")\n";
    TextTable t;
    t.column("  level")
        .column("bandwidth", A::right)
        .column("floor", A::right)
        .column("ridge " + u + "/B", A::right)
        .column("holds up to", A::right)
        .column("");
    for (const auto& l : b.levels) {
        const auto& bw = l.roof.bandwidth;
        t.row({"  " + bw.level, si(bw.bytes_per_s, "B/s"), duration(l.floor_s),
               l.roof.ridge_ops_per_byte ? fixed(*l.roof.ridge_ops_per_byte, 2) : "-",
               bw.capacity_bytes ? bytes(*bw.capacity_bytes) : "any",
               l.holds_working_set ? "<- working set" : ""});
    }
    t.render(out);
    out << "Floor       " << duration(b.floor_s) << ": " << to_string(b.bound) << " bound ("
        << (b.bound == Bound::compute ? "compute floor " + duration(b.compute_floor_s) +
                                            " >= memory floor " + duration(b.memory_floor_s)
                                      : "memory floor " + duration(b.memory_floor_s) +
                                            " > compute floor " + duration(b.compute_floor_s))
        << "; intensity "
        << (b.intensity_ops_per_byte ? fixed(*b.intensity_ops_per_byte, 2)
                                     : std::string("infinite"))
        << (b.bound == Bound::compute ? " >= " : " < ") << "ridge "
        << fixed(b.ridge_ops_per_byte, 2) << " at " << b.level << ")\n";
    out << "Attainable  " << si(b.attainable_ops_per_s, u + "/s") << "\n";
    out << "First move  " << b.first_move << "\n";
    levers_and_notes(b.levers, b.findings, out);
}

void render_llm_bound(const LlmBound& b, std::ostream& out) {
    const auto& q = b.query;
    out << "Model       " << si(q.params, "") << " parameters x " << plain(q.weight_bits)
        << "-bit weights = " << si(b.weight_bytes, "B") << "; batch " << plain(q.batch);
    if (q.kv) {
        out << "; KV cache " << si(*b.kv_bytes_per_token, "B") << " per token x "
            << fixed(q.kv->context_tokens, 0) << " tokens x " << plain(q.batch) << " = "
            << si(b.kv_cache_bytes, "B");
    }
    out << "\n";
    out << "Decode      " << si(b.decode_tokens_per_s, "tokens/s") << " ceiling, "
        << to_string(b.decode_bound) << " bound";
    if (q.batch != 1)
        out << " (" << si(b.decode_tokens_per_s_per_sequence, "tokens/s") << " per sequence)";
    out << "\n";
    out << "  memory    " << si(b.decode_bytes_per_step, "B") << " per step from " << b.decode_level
        << " at " << si(b.decode_bandwidth_bytes_per_s, "B/s") << " -> "
        << si(b.decode_memory_tokens_per_s, "tokens/s") << "\n";
    out << "  compute   " << si(b.decode_flops_per_token, "FLOP") << " per token at "
        << si(b.compute.ops_per_s, "FLOP/s") << " " << ceiling_name(b.compute) << " -> "
        << si(b.decode_compute_tokens_per_s, "tokens/s") << "\n";
    out << "  batch     "
        << (b.compute_bound_batch
                ? "decode turns compute bound from batch " + fixed(*b.compute_bound_batch, 0)
                : std::string("decode stays bandwidth bound at every batch (KV traffic per token "
                              "outweighs its compute)"))
        << "\n";
    out << "Prefill     " << si(b.prefill_tokens_per_s, "tokens/s") << " ceiling, "
        << to_string(b.prefill_bound) << " bound (compute "
        << si(b.prefill_compute_tokens_per_s, "tokens/s");
    if (b.prefill_memory_tokens_per_s)
        out << ", memory " << si(*b.prefill_memory_tokens_per_s, "tokens/s");
    out << ")\n";
    out << "Footprint   " << si(b.footprint_bytes, "B") << " (" << bytes(b.footprint_bytes) << ")";
    if (b.memory_capacity_bytes) {
        out << " of " << bytes(*b.memory_capacity_bytes) << " memory ("
            << percent(*b.capacity_fraction) << "): "
            << (!*b.fits           ? "does not fit"
                : b.capacity_bound ? "fits, near capacity"
                                   : "fits");
        if (b.max_batch_in_memory)
            out << "; at most batch " << fixed(*b.max_batch_in_memory, 0) << " fits";
    }
    out << "\n";
    out << "First move  " << b.first_move << "\n";
    levers_and_notes({}, b.findings, out);
}

}  // namespace ceiling::output
