// The decision table against DESIGN.md: every row, every threshold edge (just below, at,
// just above), every verdict, the precedence between rows, and the unknown rule.
#include "diagnosis/decision.hpp"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ceiling {
namespace {

const Thresholds defaults;
constexpr double eps = 1e-4;
using O = std::optional<double>;

std::optional<Bound> decided(const Signals& s, const Thresholds& t = defaults) {
    const Decision d = decide(s, t);
    return d.row ? std::optional<Bound>(d.row->bound) : std::nullopt;
}

// Evidence that licenses every premise but a library's: the program's own code, four threads,
// an accelerator, an interpreter, short ops; the table's moves as DESIGN.md lists them.
const Evidence every_premise{false, 4.0, 1e6, 4.0, true, true, 1e-6};

// The same evidence with one premise licensed (`yes`) or not, everything else as above.
Evidence licensing(Premise p, bool yes) {
    Evidence e = every_premise;
    switch (p) {
    case Premise::own_code:
    case Premise::loads_may_depend: e.library_op = !yes; break;
    case Premise::library_op: e.library_op = yes; break;
    case Premise::stores_from_two_threads: e.busy_cores = yes ? 4.0 : 1.0; break;
    case Premise::threads_shared: e.busy_cores = e.threads = yes ? 4.0 : 1.0; break;
    case Premise::accelerator: e.accelerator = yes; break;
    case Premise::interpreted: e.interpreted = yes; break;
    case Premise::short_ops: e.op_s = yes ? 1e-6 : 1.0; break;
    case Premise::measured_bound: break;
    }
    return e;
}

TEST(DecisionTable, RowsAreDesignMdsInItsOrder) {
    struct Expected {
        Bound bound;
        const char* observation;
        const char* diagnosis;
        const char* first_move;
    };
    const Expected expected[] = {
        {Bound::compute, "achieved FLOP/s near the compute roof", "compute bound",
         "fewer or cheaper operations: lower precision, smaller architecture, structured sparsity, "
         "bigger batch "
         "only helps if not already here"},
        {Bound::bandwidth, "achieved bandwidth near the bandwidth roof", "bandwidth bound",
         "move fewer bytes: fusion, layout, weight-only quantisation, cache compression, batching "
         "to raise "
         "intensity"},
        {Bound::latency, "neither near a roof", "latency bound",
         "dependency stalls, tiny kernels, synchronisation, dispatch overhead, accelerator "
         "fallback"},
        {Bound::not_the_model, "the model regions are fast but the process is slow",
         "not the model (system bound)",
         "preprocessing, copies, format conversion, queueing, I/O, the interpreter"},
        {Bound::not_the_model, "storage read or written near the storage roof",
         "not the model (I/O bound)",
         "read or write less: smaller or compressed data, fewer checkpoints, decoded data kept "
         "in memory; overlap I/O with compute"},
        {Bound::not_the_model, "threads blocked on storage while the cores idled",
         "not the model (I/O bound)",
         "wait on storage less often: one flush for many writes (group commit, a larger buffer), "
         "reads batched or in flight together (asynchronous I/O, a read-ahead thread), data "
         "kept in memory; overlap I/O with compute"},
        {Bound::not_the_model, "the control group's CPU quota ran out in many periods",
         "not the model (CPU quota bound)",
         "raise the CPU quota (docker --cpus, a Kubernetes CPU limit) to the cores its work can "
         "use, or size its thread pools to the quota where they are larger; its regions are "
         "judged at the quota's cores"},
        {Bound::not_the_model, "most of its CPU time in the kernel, its cores busy",
         "not the model (kernel bound)",
         "spend less time in the kernel: fewer, larger system calls (buffered writes, one call "
         "for many records), memory reused rather than freed and faulted in again (a pool, "
         "malloc's trim and mmap thresholds), huge pages for memory it keeps (a fault per 2 "
         "MiB, not per 4 KiB), mapped files rather than copying reads, fewer threads and "
         "processes started (a pool kept alive); its findings say which it was"},
        {Bound::not_the_model,
         "threads blocked in sleeps, on sockets or in event loops while the cores idled",
         "not the model (waiting)",
         "what it waits on comes first: its own sleeps and polling intervals (shorten them, or "
         "wait on the event itself), a peer or the network (requests in flight together, "
         "batched, a nearer or faster service), an event loop with nothing to do (the load "
         "offered, not its code); the blocked line says which and for how long"},
        {Bound::latency, "threads shared the work but took turns, with CPUs free",
         "latency bound (threads took turns)",
         "let the threads run at once: a lock held while working (Python's GIL, a mutex around "
         "the work) or hand-offs between stages serialise them; processes instead of threads "
         "under the GIL, native code that releases it, finer locks, overlapping stages"},
        {Bound::capacity, "footprint near memory capacity / budget", "memory (capacity) bound",
         "smaller footprint: quantise weights, offload, shard, shorter context"},
    };
    const auto table = decision_table();
    ASSERT_EQ(table.size(), std::size(expected));
    for (std::size_t i = 0; i < table.size(); ++i) {
        EXPECT_EQ(table[i].bound, expected[i].bound);
        EXPECT_EQ(table[i].observation, expected[i].observation);
        EXPECT_EQ(table[i].diagnosis, expected[i].diagnosis);
        EXPECT_EQ(first_move_for(table[i], every_premise), expected[i].first_move);
        // decision_row gives a bound's first row (DESIGN.md's; the I/O row comes after it).
        EXPECT_EQ(&decision_row(table[i].bound),
                  &*std::find_if(table.begin(), table.end(),
                                 [&](const DecisionRow& r) { return r.bound == table[i].bound; }));
    }
    EXPECT_EQ(decision_row(Bound::not_the_model).diagnosis, "not the model (system bound)");
}

TEST(DecisionTable, LeversFollowDesignMdsLeverOrderAndEndByChangingTheProblem) {
    for (const auto& row : decision_table()) {
        ASSERT_FALSE(row.levers.empty()) << to_string(row.bound);
        EXPECT_TRUE(std::is_sorted(
            row.levers.begin(), row.levers.end(),
            [](const LeverMove& a, const LeverMove& b) { return a.lever < b.lever; }))
            << to_string(row.bound);
        EXPECT_EQ(row.levers.back().lever, Lever::change_the_problem) << to_string(row.bound);
        for (const auto& l : row.levers) EXPECT_FALSE(l.move.empty());
    }
    // "Fix the system first": the system rows lead with the system lever.
    EXPECT_EQ(decision_row(Bound::not_the_model).levers.front().lever, Lever::system);
    EXPECT_EQ(decision_row(Bound::latency).levers.front().lever, Lever::system);
}

struct RowCase {
    const char* name;
    Signals signals;
    std::optional<Bound> expected;
};

TEST(DecisionTable, EveryRow) {
    const RowCase cases[] = {
        {"compute", {O(0.85), O(0.20), {}, {}}, Bound::compute},
        {"bandwidth", {O(0.05), O(0.83), {}, {}}, Bound::bandwidth},
        {"latency", {O(0.20), O(0.30), {}, {}}, Bound::latency},
        {"not the model", {{}, {}, O(0.30), {}}, Bound::not_the_model},
        {"capacity", {{}, {}, {}, O(0.95)}, Bound::capacity},
        {"storage at its roof", {{}, {}, {}, {}, O(0.8)}, Bound::not_the_model},
        {"storage well below its roof", {{}, {}, {}, {}, O(0.3)}, std::nullopt},
        {"model dominates, no roofs", {{}, {}, O(0.90), {}}, std::nullopt},
        {"nothing measured", {}, std::nullopt},
    };
    for (const auto& c : cases) EXPECT_EQ(decided(c.signals), c.expected) << c.name;
}

TEST(DecisionTable, PrecedenceCapacityThenSystemThenRoofs) {
    // All rows hold at once: capacity wins, and the others are listed.
    const Signals all{O(0.9), O(0.2), O(0.3), O(0.95)};
    const Decision d = decide(all, defaults);
    ASSERT_NE(d.row, nullptr);
    EXPECT_EQ(d.row->bound, Bound::capacity);
    ASSERT_EQ(d.held.size(), 3u);
    EXPECT_EQ(d.held[1]->bound, Bound::not_the_model);
    EXPECT_EQ(d.held[2]->bound, Bound::compute);
    // Without capacity the system comes before a roof.
    EXPECT_EQ(decided({O(0.9), O(0.2), O(0.3), O(0.5)}), Bound::not_the_model);
    // With the model dominating, the roof decides.
    EXPECT_EQ(decided({O(0.9), O(0.2), O(0.8), O(0.5)}), Bound::compute);
    // Storage at its roof is the system too: before the model's roof, which is still listed.
    const Decision io = decide({O(0.9), O(0.2), O(0.8), O(0.5), O(0.7)}, defaults);
    ASSERT_NE(io.row, nullptr);
    EXPECT_EQ(io.row->diagnosis, "not the model (I/O bound)");
    ASSERT_EQ(io.held.size(), 2u);
    EXPECT_EQ(io.held[1]->bound, Bound::compute);
    // With the model's share small too, the storage names the cause: the I/O row first, even
    // where the share clears its threshold by more (0.5 / 0.1 against 0.7 / 0.6).
    const Decision both = decide({O(0.9), O(0.2), O(0.1), O(0.5), O(0.7)}, defaults);
    ASSERT_NE(both.row, nullptr);
    EXPECT_EQ(both.row->diagnosis, "not the model (I/O bound)");
    ASSERT_EQ(both.held.size(), 3u);
    EXPECT_EQ(both.held[1]->diagnosis, "not the model (system bound)");
    // Threads that took turns: the system's too, before a roof met at the cores they kept
    // busy (one core's roof, with a second core to gain); at or above the threshold, silent.
    Signals turns{O(0.9), O(0.2), {}, {}};
    turns.thread_concurrency = 0.5;
    const Decision t = decide(turns, defaults);
    ASSERT_NE(t.row, nullptr);
    EXPECT_EQ(t.row->diagnosis, "latency bound (threads took turns)");
    ASSERT_EQ(t.held.size(), 2u);
    EXPECT_EQ(t.held[1]->bound, Bound::compute);
    turns.thread_concurrency = defaults.thread_concurrency;
    EXPECT_EQ(decided(turns), Bound::compute);
    // Most of its CPU time in the kernel: the system's, before the roofs its code met; the
    // threads it blocked on storage name the cause where both hold.
    Signals kernel{O(0.9), O(0.2), {}, {}};
    kernel.kernel_time_share = 0.9;
    const Decision k = decide(kernel, defaults);
    ASSERT_NE(k.row, nullptr);
    EXPECT_EQ(k.row->diagnosis, "not the model (kernel bound)");
    kernel.storage_wait_threads = 0.5;
    EXPECT_EQ(decide(kernel, defaults).row->diagnosis, "not the model (I/O bound)");
    kernel.storage_wait_threads.reset();
    kernel.kernel_time_share = defaults.kernel_time_share - eps;
    EXPECT_EQ(decided(kernel), Bound::compute);
    // Threads that waited in sleeps, on sockets or in event loops with the cores idle: the
    // system's, before the roofs and the model's share; beside storage waits the signal that
    // clears its threshold by more names the move.
    Signals waits{O(0.9), O(0.2), O(0.1), {}};
    waits.outside_wait_threads = 0.9;
    const Decision w = decide(waits, defaults);
    ASSERT_NE(w.row, nullptr);
    EXPECT_EQ(w.row->diagnosis, "not the model (waiting)");
    ASSERT_EQ(w.held.size(), 3u);
    EXPECT_EQ(w.held[1]->diagnosis, "not the model (system bound)");
    waits.storage_wait_threads = 0.9;  // 3.6x its threshold against 1.8x
    EXPECT_EQ(decide(waits, defaults).row->diagnosis, "not the model (I/O bound)");
    waits.storage_wait_threads.reset();
    waits.outside_wait_threads = defaults.outside_wait_threads - eps;
    EXPECT_EQ(decide(waits, defaults).row->diagnosis, "not the model (system bound)");
}

TEST(DecisionTable, NearBothRoofsTheCloserOneWins) {
    EXPECT_EQ(decided({O(0.65), O(0.90), {}, {}}), Bound::bandwidth);
    EXPECT_EQ(decided({O(0.95), O(0.61), {}, {}}), Bound::compute);
    const Decision d = decide({O(0.65), O(0.90), {}, {}}, defaults);
    ASSERT_EQ(d.held.size(), 2u);
    EXPECT_EQ(d.held[1]->bound, Bound::compute);
}

TEST(DecisionTable, UnknownIsNeverZero) {
    // A compute fraction of 0.05 with bytes unmeasured could be bandwidth bound: no row holds,
    // where treating the missing bandwidth fraction as 0 would wrongly say "latency bound".
    EXPECT_EQ(decided({O(0.05), {}, {}, {}}), std::nullopt);
    EXPECT_EQ(decided({{}, O(0.05), {}, {}}), std::nullopt);
    EXPECT_EQ(decided({O(0.05), O(0.0), {}, {}}), Bound::latency);  // a measured zero is a zero
}

struct EdgeCase {
    const char* name;
    Signals signals;
    std::optional<Bound> expected;
};

TEST(DecisionTable, ThresholdEdges) {
    const double near = defaults.near_roof, share = defaults.model_share, cap = defaults.capacity;
    const EdgeCase cases[] = {
        {"compute just below near", {O(near - eps), O(0.1), {}, {}}, Bound::latency},
        {"compute at near", {O(near), O(0.1), {}, {}}, Bound::compute},
        {"compute just above near", {O(near + eps), O(0.1), {}, {}}, Bound::compute},
        {"bandwidth just below near", {O(0.1), O(near - eps), {}, {}}, Bound::latency},
        {"bandwidth at near", {O(0.1), O(near), {}, {}}, Bound::bandwidth},
        {"bandwidth just above near", {O(0.1), O(near + eps), {}, {}}, Bound::bandwidth},
        {"model share just below", {{}, {}, O(share - eps), {}}, Bound::not_the_model},
        {"model share at", {{}, {}, O(share), {}}, std::nullopt},
        {"model share just above", {{}, {}, O(share + eps), {}}, std::nullopt},
        {"capacity just below", {{}, {}, {}, O(cap - eps)}, std::nullopt},
        {"capacity at", {{}, {}, {}, O(cap)}, Bound::capacity},
        {"capacity just above", {{}, {}, {}, O(cap + eps)}, Bound::capacity},
    };
    for (const auto& c : cases) EXPECT_EQ(decided(c.signals), c.expected) << c.name;
}

TEST(DecisionTable, ThresholdsAreConfiguration) {
    Thresholds t;
    t.near_roof = 0.4;
    EXPECT_EQ(decided({O(0.45), O(0.1), {}, {}}, t), Bound::compute);
    EXPECT_EQ(decided({O(0.45), O(0.1), {}, {}}), Bound::latency);
}

struct VerdictCase {
    double fraction;
    Verdict expected;
};

TEST(Verdicts, EveryVerdictAndEdge) {
    const double done = defaults.done, far = defaults.far, top = 1 + defaults.above_roof_tolerance;
    const VerdictCase cases[] = {
        {done - eps, Verdict::good}, {done, Verdict::done},
        {done + eps, Verdict::done}, {far - eps, Verdict::far},
        {far, Verdict::good},        {far + eps, Verdict::good},
        {0.0, Verdict::far},         {1.0, Verdict::done},
        {top, Verdict::done},        {top + eps, Verdict::above_roof},
        {1.10, Verdict::above_roof}, {std::nan(""), Verdict::unknown},
    };
    for (const auto& c : cases)
        EXPECT_EQ(verdict_for(c.fraction, defaults), c.expected) << c.fraction;
}

TEST(Verdicts, BandsAreOrderedByThreshold) {
    const auto bands = verdict_bands();
    ASSERT_EQ(bands.size(), 3u);
    EXPECT_EQ(bands.front().verdict, Verdict::done);
    EXPECT_EQ(bands.back().at_least, nullptr);  // the last band catches every fraction
}

TEST(DecisionTable, EnumsSerialiseByName) {
    EXPECT_EQ(nlohmann::json(Bound::not_the_model), "not_the_model");
    EXPECT_EQ(nlohmann::json(Verdict::above_roof), "above_roof");
    EXPECT_EQ(nlohmann::json("compiler_kernel").get<Lever>(), Lever::compiler_kernel);
    EXPECT_THROW(nlohmann::json("fast").get<Bound>(), std::invalid_argument);
}

// Advice only where its premise was measured: every move of the table that assumes more than
// its row's bound is shown with evidence that licenses it and hidden without, in the first
// move and in the levers; moves that assume only the bound show on no evidence at all.
TEST(DecisionTable, EveryMoveIsGatedByItsPremise) {
    int gated = 0;
    for (const auto& row : decision_table()) {
        for (const auto& part : row.first_move) {
            const std::string text(part.text);
            auto shown = [&](const Evidence& e) { return first_move_for(row, e).find(text) != std::string::npos; };
            if (part.premise == Premise::measured_bound) {
                EXPECT_TRUE(shown(Evidence{true})) << text;
                EXPECT_TRUE(shown(Evidence{})) << text;
                continue;
            }
            ++gated;
            ASSERT_TRUE(licensed(part.premise, licensing(part.premise, true))) << premise_name(part.premise);
            ASSERT_FALSE(licensed(part.premise, licensing(part.premise, false))) << premise_name(part.premise);
            EXPECT_TRUE(shown(licensing(part.premise, true))) << text;
            EXPECT_FALSE(shown(licensing(part.premise, false))) << text;
            // Nor where it is unknown: unknown licenses nothing that needs it (a piece of
            // work is the program's own code unless known to be a library's).
            if (part.premise != Premise::own_code && part.premise != Premise::loads_may_depend)
                EXPECT_FALSE(shown(Evidence{})) << text << " shown without evidence of " << premise_name(part.premise);
        }
        for (const auto& lever : row.levers) {
            const auto shown = [&](const Evidence& e) {
                for (const auto& l : levers_for(row, e))
                    if (l.lever == lever.lever && l.move.find(lever.move) != std::string::npos)
                        return true;
                return false;
            };
            if (lever.premise == Premise::measured_bound) {
                EXPECT_TRUE(shown(Evidence{true})) << lever.move;
                continue;
            }
            ++gated;
            EXPECT_TRUE(shown(licensing(lever.premise, true))) << lever.move;
            EXPECT_FALSE(shown(licensing(lever.premise, false))) << lever.move;
        }
    }
    // The moves that assume more than the bound (dependency stalls, tiny kernels, dispatch
    // overhead, synchronisation, an accelerator's fallback, a library's kernel, the
    // interpreter), in the first moves and the levers both.
    EXPECT_EQ(gated, 14);
}

TEST(DecisionTable, LatencyMovesForALibrarysOpNameOnlyWhatItCanBe) {
    const auto& latency = decision_row(Bound::latency);
    // A short PyTorch op on one core of a machine without a GPU: no dependency stalls (its
    // addresses are computed), no synchronisation, no accelerator fallback.
    const std::string kernel = "a faster kernel for the op and its shapes (another backend or memory layout)";
    EXPECT_EQ(first_move_for(latency, Evidence{true, 1.0, 1e6, 1.0, false, true, 5e-6}),
              "tiny kernels, dispatch overhead, " + kernel);
    // A long one (a 2048^3 matrix product): its kernel alone, no tiny kernels.
    EXPECT_EQ(first_move_for(latency, Evidence{true, 1.0, 1e6, 1.0, false, true, 0.1}), kernel);
    // The program's own code with four threads, its op time unknown: stalls and synchronisation.
    EXPECT_EQ(first_move_for(latency, Evidence{false, 3.5, 1e6, 4.0, false, false}),
              "dependency stalls, synchronisation");
    // The not-the-model move names the interpreter only for a program run in one.
    const auto& system = decision_row(Bound::not_the_model);
    EXPECT_EQ(first_move_for(system, Evidence{false, 1.0, 1e6, 1.0, false, false}),
              "preprocessing, copies, format conversion, queueing, I/O");
    EXPECT_EQ(first_move_for(system, Evidence{false, 1.0, 1e6, 1.0, false, true}),
              "preprocessing, copies, format conversion, queueing, I/O, the interpreter");
}

TEST(Premises, AnInterpreterIsKnownByItsCommandsName) {
    EXPECT_EQ(runs_interpreter({"/usr/bin/python3.11", "train.py"}), true);
    EXPECT_EQ(runs_interpreter({"python", "-c", "pass"}), true);
    EXPECT_EQ(runs_interpreter({"node18", "app.js"}), true);
    EXPECT_EQ(runs_interpreter({"./gemm", "--n", "512"}), false);
    EXPECT_EQ(runs_interpreter({"/opt/python-tools/bin/infer"}), false);
    EXPECT_EQ(runs_interpreter({}), std::nullopt);
}

}  // namespace
}  // namespace ceiling
