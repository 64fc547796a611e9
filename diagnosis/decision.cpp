#include "diagnosis/decision.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "diagnosis/json_support.hpp"

namespace ceiling {
namespace {

constexpr std::string_view change_problem =
    "change the problem: lower resolution, shorter context, run less often";

// DESIGN.md's first moves, spread over the levers they belong to, each with its premise.
using P = Premise;
constexpr std::array<LeverMove, 4> compute_levers = {{
    {Lever::quantisation,
     "lower precision (and the matrix unit of that precision, if the machine has one)"},
    {Lever::architecture,
     "smaller architecture; bigger batch only helps if not already at this roof"},
    {Lever::pruning, "structured sparsity"},
    {Lever::change_the_problem, change_problem},
}};
constexpr std::array<LeverMove, 3> bandwidth_levers = {{
    {Lever::quantisation, "weight-only quantisation, cache compression"},
    {Lever::compiler_kernel, "fusion, layout"},
    {Lever::change_the_problem,
     "batching to raise intensity; "
     "lower resolution, shorter context, run less often"},
}};
constexpr std::array<LeverMove, 7> latency_levers = {{
    {Lever::system, "synchronisation", P::threads_shared},
    {Lever::system, "dispatch overhead", P::short_ops},
    {Lever::system, "accelerator fallback", P::accelerator},
    {Lever::compiler_kernel, "dependency stalls", P::own_code},
    {Lever::compiler_kernel, "tiny kernels", P::short_ops},
    {Lever::compiler_kernel, "a faster kernel for the op and its shapes (another backend or memory layout)", P::library_op},
    {Lever::change_the_problem, change_problem},
}};
constexpr std::array<LeverMove, 3> system_levers = {{
    {Lever::system, "preprocessing, copies, format conversion, queueing, I/O"},
    {Lever::system, "the interpreter", P::interpreted},
    {Lever::change_the_problem, change_problem},
}};
constexpr std::array<LeverMove, 2> io_levers = {{
    {Lever::system,
     "read or write less: smaller or compressed data, fewer checkpoints, decoded data kept in "
     "memory; overlap I/O with compute"},
    {Lever::change_the_problem, change_problem},
}};
constexpr std::array<LeverMove, 2> kernel_levers = {{
    {Lever::system,
     "fewer trips into the kernel: fewer, larger system calls (buffered), memory reused rather "
     "than freed and faulted in again, huge pages, mapped files rather than copying reads, "
     "fewer threads and processes started (a pool kept alive)"},
    {Lever::change_the_problem, change_problem},
}};
constexpr std::array<LeverMove, 2> quota_levers = {{
    {Lever::system,
     "thread pools sized to the quota (OMP_NUM_THREADS, torch.set_num_threads, worker counts); "
     "a quota as large as the cores its work can use"},
    {Lever::change_the_problem, change_problem},
}};
constexpr std::array<LeverMove, 2> turns_levers = {{
    {Lever::system,
     "let the threads run at once: processes instead of threads under Python's GIL, native code "
     "that releases it, finer locks or none around the work, stages that overlap; or fewer "
     "threads"},
    {Lever::change_the_problem, change_problem},
}};
constexpr std::array<LeverMove, 2> waiting_levers = {{
    {Lever::system,
     "wait less: its own sleeps and polling intervals shortened or replaced by waiting on the "
     "event itself; requests to a peer kept in flight together or batched; input fed faster"},
    {Lever::change_the_problem, change_problem},
}};
constexpr std::array<LeverMove, 3> capacity_levers = {{
    {Lever::system, "offload, shard"},
    {Lever::quantisation, "quantise weights"},
    {Lever::change_the_problem, "shorter context; lower resolution, run less often"},
}};

// The first moves, part by part. Latency's premises: dependency stalls are the program's own
// code's (a library's dense-tensor kernel computes its addresses), synchronisation needs two
// threads, an accelerator fallback an accelerator; the interpreter needs a program run in one.
constexpr std::array<MovePart, 4> compute_move = {{{"lower precision"},
                                                   {"smaller architecture"},
                                                   {"structured sparsity"},
                                                   {"bigger batch only helps if not already here"}}};
constexpr std::array<MovePart, 5> bandwidth_move = {{{"fusion"},
                                                     {"layout"},
                                                     {"weight-only quantisation"},
                                                     {"cache compression"},
                                                     {"batching to raise intensity"}}};
// Tiny kernels and dispatch overhead need short ops; a library's op whose calls are long
// is moved by its kernel (another backend or layout), which is not the program's code.
constexpr std::array<MovePart, 6> latency_move = {{{"dependency stalls", P::own_code},
                                                   {"tiny kernels", P::short_ops},
                                                   {"synchronisation", P::threads_shared},
                                                   {"dispatch overhead", P::short_ops},
                                                   {"accelerator fallback", P::accelerator},
                                                   {"a faster kernel for the op and its shapes "
                                                    "(another backend or memory layout)",
                                                    P::library_op}}};
constexpr std::array<MovePart, 6> system_move = {{{"preprocessing"},
                                                  {"copies"},
                                                  {"format conversion"},
                                                  {"queueing"},
                                                  {"I/O"},
                                                  {"the interpreter", P::interpreted}}};
constexpr std::array<MovePart, 1> io_move = {{{
    "read or write less: smaller or compressed data, fewer checkpoints, decoded data kept in "
    "memory; overlap I/O with compute"}}};
constexpr std::array<MovePart, 1> io_wait_move = {{{
    "wait on storage less often: one flush for many writes (group commit, a larger buffer), "
    "reads batched or in flight together (asynchronous I/O, a read-ahead thread), data "
    "kept in memory; overlap I/O with compute"}}};
constexpr std::array<MovePart, 1> quota_move = {{{
    "raise the CPU quota (docker --cpus, a Kubernetes CPU limit) to the cores its work can "
    "use, or size its thread pools to the quota where they are larger; its regions are "
    "judged at the quota's cores"}}};
constexpr std::array<MovePart, 1> kernel_move = {{{
    "spend less time in the kernel: fewer, larger system calls (buffered writes, one call for "
    "many records), memory reused rather than freed and faulted in again (a pool, malloc's "
    "trim and mmap thresholds), huge pages for memory it keeps (a fault per 2 MiB, not per "
    "4 KiB), mapped files rather than copying reads, fewer threads and processes started (a pool "
    "kept alive); its findings say which it was"}}};
constexpr std::array<MovePart, 1> waiting_move = {{{
    "what it waits on comes first: its own sleeps and polling intervals (shorten them, or wait "
    "on the event itself), a peer or the network (requests in flight together, batched, a "
    "nearer or faster service), an event loop with nothing to do (the load offered, not its "
    "code); the blocked line says which and for how long"}}};
constexpr std::array<MovePart, 1> turns_move = {{{
    "let the threads run at once: a lock held while working (Python's GIL, a mutex around the "
    "work) or hand-offs between stages serialise them; processes instead of threads under the "
    "GIL, native code that releases it, finer locks, overlapping stages"}}};
constexpr std::array<MovePart, 4> capacity_move = {{{"quantise weights"},
                                                    {"offload"},
                                                    {"shard"},
                                                    {"shorter context"}}};

using T = Thresholds;
// Precedence: a footprint at the memory wall may stop the workload running at all, so it
// comes first; then the system (DESIGN.md: fix the system first), storage at its roof before
// the model's small share (where both hold, the storage is what keeps the process slow, and
// it names the move); then the roofs; latency is what remains when no roof is near.
const std::array<DecisionRow, 11> table = {{
    {Bound::compute,
     "achieved FLOP/s near the compute roof",
     {Signal::compute_fraction, Comparison::at_least, &T::near_roof},
     3,
     "compute bound",
     "fewer or cheaper operations: ",
     compute_move,
     compute_levers},
    {Bound::bandwidth,
     "achieved bandwidth near the bandwidth roof",
     {Signal::bandwidth_fraction, Comparison::at_least, &T::near_roof},
     3,
     "bandwidth bound",
     "move fewer bytes: ",
     bandwidth_move,
     bandwidth_levers},
    {Bound::latency,
     "neither near a roof",
     {Signal::roof_fraction, Comparison::below, &T::near_roof},
     4,
     "latency bound",
     "",
     latency_move,
     latency_levers},
    {Bound::not_the_model,
     "the model regions are fast but the process is slow",
     {Signal::model_share, Comparison::below, &T::model_share},
     2,
     "not the model (system bound)",
     "",
     system_move,
     system_levers},
    // The same bound when the process is busy with storage: its traffic at the storage roof
    // `ceiling machine` measured says so without model regions (a program that only reads
    // and writes files has none), where the row above needs them.
    {Bound::not_the_model,
     "storage read or written near the storage roof",
     {Signal::storage_fraction, Comparison::at_least, &T::near_roof},
     1,
     "not the model (I/O bound)",
     "",
     io_move,
     io_levers},
    // The same bound when its threads waited on storage while its own code left its cores
    // idle, however little it moved: a log flushed after every 4 KiB record (fdatasync) ran
    // at 1 % of the storage write roof and read "latency bound: more bytes in flight" before.
    {Bound::not_the_model,
     "threads blocked on storage while the cores idled",
     {Signal::storage_wait_threads, Comparison::at_least, &T::storage_wait_threads},
     1,
     "not the model (I/O bound)",
     "",
     io_wait_move,
     io_levers},
    // The same bound when a container's CPU limit held the process: its threads ran out of
    // the quota's time in many periods and waited for the next, whatever their code.
    {Bound::not_the_model,
     "the control group's CPU quota ran out in many periods",
     {Signal::quota_throttled_share, Comparison::at_least, &T::cpu_quota_throttled_share},
     1,
     "not the model (CPU quota bound)",
     "",
     quota_move,
     quota_levers},
    // The same bound when the kernel did most of its work while its cores were busy: page
    // faults on memory freed and touched afresh (94 % of its CPU time) and one-byte writes
    // (93 %) read "bound unknown", the cause a finding only. The findings say which.
    {Bound::not_the_model,
     "most of its CPU time in the kernel, its cores busy",
     {Signal::kernel_time_share, Comparison::at_least, &T::kernel_time_share},
     2,
     kernel_bound_diagnosis,
     "",
     kernel_move,
     kernel_levers},
    // The same bound when its threads mostly waited on something outside its work while its
    // own code left its cores idle: its sleeps, a peer or the network, an event loop with
    // nothing to do. A poller asleep 92 % of its wall time read "bound unknown: measure what
    // is missing first", as if a roof could explain it.
    {Bound::not_the_model,
     "threads blocked in sleeps, on sockets or in event loops while the cores idled",
     {Signal::outside_wait_threads, Comparison::at_least, &T::outside_wait_threads},
     1,
     "not the model (waiting)",
     "",
     waiting_move,
     waiting_levers},
    // Latency of another kind: threads that shared the work waited on each other (a lock held
    // while working, hand-offs) and ran one or two at a time with CPUs free, whatever the
    // roofs say of the cores they kept busy (four Python threads under the GIL on two CPUs
    // read "bound unknown" before, their turns only a finding). The system comes first.
    {Bound::latency,
     "threads shared the work but took turns, with CPUs free",
     {Signal::thread_concurrency, Comparison::below, &T::thread_concurrency},
     2,
     "latency bound (threads took turns)",
     "",
     turns_move,
     turns_levers},
    {Bound::capacity,
     "footprint near memory capacity / budget",
     {Signal::capacity_fraction, Comparison::at_least, &T::capacity},
     0,
     "memory (capacity) bound",
     "smaller footprint: ",
     capacity_move,
     capacity_levers},
}};

const std::array<VerdictBand, 3> bands = {{
    {Verdict::done, &T::done},
    {Verdict::good, &T::far},
    {Verdict::far, nullptr},
}};

// How far a signal clears its threshold (> 1 when the condition holds); breaks ties
// between rows of equal precedence.
double clearance(const Condition& c, double value, const Thresholds& t) {
    const double threshold = t.*c.threshold;
    return c.comparison == Comparison::at_least ? value / threshold
                                                : threshold / std::max(value, 1e-300);
}

}  // namespace

std::optional<double> Signals::value(Signal s) const {
    switch (s) {
        case Signal::compute_fraction:
            return compute_fraction;
        case Signal::bandwidth_fraction:
            return bandwidth_fraction;
        case Signal::roof_fraction:
            // "Neither near a roof" can only be said when both roofs were compared.
            if (compute_fraction && bandwidth_fraction)
                return std::max(*compute_fraction, *bandwidth_fraction);
            return std::nullopt;
        case Signal::model_share:
            return model_share;
        case Signal::capacity_fraction:
            return capacity_fraction;
        case Signal::storage_fraction:
            return storage_fraction;
        case Signal::quota_throttled_share:
            return quota_throttled_share;
        case Signal::thread_concurrency:
            return thread_concurrency;
        case Signal::storage_wait_threads:
            return storage_wait_threads;
        case Signal::kernel_time_share:
            return kernel_time_share;
        case Signal::outside_wait_threads:
            return outside_wait_threads;
    }
    return std::nullopt;
}

std::span<const DecisionRow> decision_table() { return table; }

const DecisionRow& decision_row(Bound b) {
    for (const auto& r : table)
        if (r.bound == b) return r;
    throw std::logic_error("decision table has no row for a bound");
}

std::string first_move_for(const DecisionRow& row, const Evidence& e) {
    std::string parts;
    for (const auto& p : row.first_move)
        if (licensed(p.premise, e)) parts += (parts.empty() ? "" : ", ") + std::string(p.text);
    return std::string(row.move_lead) + parts;
}

std::vector<LeverAdvice> levers_for(const DecisionRow& row, const Evidence& e) {
    std::vector<LeverAdvice> levers;
    for (const auto& l : row.levers) {
        if (!licensed(l.premise, e)) continue;
        if (!levers.empty() && levers.back().lever == l.lever)
            levers.back().move += ", " + std::string(l.move);
        else
            levers.push_back(LeverAdvice{l.lever, std::string(l.move)});
    }
    return levers;
}

bool holds(const Condition& c, const Signals& s, const Thresholds& t) {
    const auto v = s.value(c.signal);
    if (!v) return false;
    return c.comparison == Comparison::at_least ? *v >= t.*c.threshold : *v < t.*c.threshold;
}

Decision decide(const Signals& s, const Thresholds& t) {
    Decision d;
    for (const auto& row : table)
        if (holds(row.condition, s, t)) d.held.push_back(&row);
    auto rank = [&](const DecisionRow* r) {
        return std::make_pair(r->precedence,
                              -clearance(r->condition, *s.value(r->condition.signal), t));
    };
    std::stable_sort(d.held.begin(), d.held.end(),
                     [&](const DecisionRow* a, const DecisionRow* b) { return rank(a) < rank(b); });
    if (!d.held.empty()) d.row = d.held.front();
    return d;
}

std::span<const VerdictBand> verdict_bands() { return bands; }

Verdict verdict_for(double fraction, const Thresholds& t) {
    if (!std::isfinite(fraction) || fraction < 0) return Verdict::unknown;
    if (fraction > 1 + t.above_roof_tolerance) return Verdict::above_roof;
    for (const auto& b : bands)
        if (!b.at_least || fraction >= t.*b.at_least) return b.verdict;
    return Verdict::unknown;
}

void to_json(nlohmann::json& j, Bound b) { j = std::string(to_string(b)); }
void from_json(const nlohmann::json& j, Bound& b) {
    b = enum_from_json<Bound>(j, bound_names, "bound");
}
void to_json(nlohmann::json& j, Lever l) { j = std::string(to_string(l)); }
void from_json(const nlohmann::json& j, Lever& l) {
    l = enum_from_json<Lever>(j, lever_names, "lever");
}
void to_json(nlohmann::json& j, Verdict v) { j = std::string(to_string(v)); }
void from_json(const nlohmann::json& j, Verdict& v) {
    v = enum_from_json<Verdict>(j, verdict_names, "verdict");
}

}  // namespace ceiling
