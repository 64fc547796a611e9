#include "agent/measure/machine.hpp"

#include <chrono>
#include <ctime>
#include <memory>

#include <spdlog/spdlog.h>

#include "agent/measure/gpu_machine.hpp"
#include "agent/measure/host_info.hpp"
#include "agent/measure/launch_context.hpp"
#include "agent/measure/repeat.hpp"
#include "agent/version.hpp"
#include "collectors/clock.hpp"
#include "diagnosis/peak_table.hpp"
#include "kernels/parallel.hpp"
#include "kernels/roofs/compute.hpp"

namespace ceiling::measure {
namespace {

RepeatPlan compute_plan(bool quick) {
    return quick ? RepeatPlan{0.008, 1, 3, 2} : RepeatPlan{0.02, 1, 5, 3};
}

void step(const MachineOptions& o, const std::string& what) {
    if (o.on_step) o.on_step(what);
    spdlog::debug("measuring {}", what);
}

std::string threads_label(int t) { return std::to_string(t) + (t == 1 ? " thread" : " threads"); }

// AMX needs a per-process permission; asked once, the answer remembered.
const std::string& amx_refusal() {
    static const std::string why = kernels::request_amx_permission();
    return why;
}

// Why a kernel cannot run here, or empty when it can.
std::string unavailable_reason(bool (*supported)(const kernels::CpuFeatures&), bool needs_amx) {
    if (!supported(kernels::cpu_features())) return "this CPU (or its OS) lacks the instructions";
    if (needs_amx && !amx_refusal().empty()) return amx_refusal();
    return {};
}

// The clock kernel of a width, if it can run here (nullptr otherwise).
const kernels::ClockKernel* clock_kernel(std::string_view width) {
    for (const auto& ck : kernels::clock_kernels())
        if (ck.width == width && unavailable_reason(ck.supported, ck.needs_amx_permission).empty())
            return &ck;
    return nullptr;
}

// Operands for the clock kernels' interleaved FMAs: any finite values will do.
const kernels::ComputeKernel* find_compute_kernel_or_first() {
    const auto* k = kernels::find_compute_kernel("fp32_fma512");
    return k ? k : &kernels::compute_kernels().front();
}

// Per-thread operand blocks, so threads never share a cache line.
std::vector<std::unique_ptr<kernels::RoofOperands>> operands_for(int threads,
                                                                 const kernels::ComputeKernel* k) {
    std::vector<std::unique_ptr<kernels::RoofOperands>> ops;
    for (int t = 0; t < threads; ++t) {
        ops.push_back(std::make_unique<kernels::RoofOperands>());
        if (k) kernels::fill_check_operands(*k, *ops.back());
    }
    return ops;
}

}  // namespace

void measure_clocks(MachineProfile& p, const std::vector<int>& thread_counts,
                    const MachineOptions& o) {
    const RepeatPlan plan = compute_plan(o.quick);
    const auto* fma = find_compute_kernel_or_first();
    for (const auto& ck : kernels::clock_kernels()) {
        if (const auto why = unavailable_reason(ck.supported, ck.needs_amx_permission);
            !why.empty()) {
            p.absent.push_back({"clock " + std::string(ck.width), why});
            continue;
        }
        for (int threads : thread_counts) {
            step(o, "clock " + std::string(ck.width) + ", " + threads_label(threads));
            auto ops = operands_for(threads, fma);
            const std::int64_t n =
                calibrate([&](std::int64_t m) { ck.run(m, ops[0].get()); }, plan.target_s);
            const double cycles = static_cast<double>(n) * ck.chain_per_iteration;
            const Summary hz = best_block_rate(
                [&] {
                    return team_cpu_seconds(
                        threads, [&](int t) { ck.run(n, ops[static_cast<std::size_t>(t)].get()); });
                },
                cycles, plan);
            p.clocks.push_back({std::string(ck.width), threads, hz});
        }
    }
}

// One compute roof being measured: what runs it, and the best block so far.
struct RoofJob {
    const kernels::ComputeKernel* kernel = nullptr;
    const kernels::ClockKernel* clock = nullptr;  // null: no theoretical value for this roof
    int threads = 1;
    std::int64_t n = 1;  // iterations per timed run
    std::vector<std::unique_ptr<kernels::RoofOperands>> ops, clock_ops;
    ComputeRoof roof;
    std::optional<PairedRates> best;
};

void measure_compute_roofs(MachineProfile& p, const std::vector<int>& thread_counts,
                           const MachineOptions& o) {
    const RepeatPlan plan = compute_plan(o.quick);
    const auto& f = kernels::cpu_features();
    const auto* uarch = find_microarchitecture(f.vendor, f.family, f.model);
    std::vector<std::unique_ptr<RoofJob>> jobs;
    for (const auto& k : kernels::compute_kernels()) {
        if (const auto why = unavailable_reason(k.supported, k.needs_amx_permission);
            !why.empty()) {
            p.absent.push_back({std::string(k.roof), why});
            continue;
        }
        if (const auto bad = kernels::verify_compute_kernel(k); !bad.empty()) {
            // A kernel that computes the wrong thing measures nothing: report, don't time it.
            spdlog::warn("roof kernel failed its check: {}", bad);
            p.absent.push_back({std::string(k.roof), "kernel check failed: " + bad});
            continue;
        }
        const auto* cls = find_instruction_class(k.roof);
        for (int threads : thread_counts) {
            step(o, std::string(k.roof) + ", " + threads_label(threads));
            auto j = std::make_unique<RoofJob>();
            j->kernel = &k;
            j->threads = threads;
            j->ops = operands_for(threads, &k);
            j->n = calibrate([&](std::int64_t m) { k.run(m, j->ops[0].get()); }, plan.target_s);
            j->roof.name = std::string(k.roof);
            j->roof.precision = cls ? cls->precision : Precision::fp32;
            j->roof.engine = cls ? cls->engine : Engine::vector;
            j->roof.instruction = cls ? std::string(cls->instruction) : std::string(k.mnemonic);
            j->roof.threads = threads;
            if (const auto* ck = cls ? clock_kernel(cls->clock_width) : nullptr;
                ck && uarch && instructions_per_cycle(*uarch, k.roof)) {
                j->clock = ck;
                j->clock_ops = operands_for(threads, find_compute_kernel_or_first());
            }
            jobs.push_back(std::move(j));
        }
    }
    // Blocks go round the roofs rather than one roof at a time: on a shared host a
    // neighbour's burst (a busy SMT sibling) then costs each roof one block, not all of its
    // blocks, and the best block, the roof, survives it.
    for (int b = 0; b < plan.blocks; ++b) {
        for (auto& j : jobs) {
            const auto& k = *j->kernel;
            const double work = static_cast<double>(j->threads) * static_cast<double>(j->n) *
                                k.instructions_per_iteration * k.ops_per_instruction;
            auto roof_run = [&] {
                return team_cpu_seconds(j->threads, [&](int t) {
                    k.run(j->n, j->ops[static_cast<std::size_t>(t)].get());
                });
            };
            // The clock of the same width, timed beside each repeat: the theoretical value
            // then uses the frequency this roof actually ran at.
            const std::int64_t nc = std::max<std::int64_t>(1, j->n / 4);
            std::function<double()> clock_run;
            if (j->clock)
                clock_run = [&] {
                    return team_cpu_seconds(j->threads, [&](int t) {
                        j->clock->run(nc, j->clock_ops[static_cast<std::size_t>(t)].get());
                    });
                };
            const double clock_cycles =
                j->clock ? static_cast<double>(nc) * j->clock->chain_per_iteration : 0;
            const PairedRates r = timed_block(roof_run, work, clock_run, clock_cycles,
                                              b == 0 ? plan.warmup : 0, plan.repeats);
            if (!j->best || r.main.median > j->best->main.median) j->best = r;
        }
    }
    for (auto& j : jobs) {
        ComputeRoof& r = j->roof;
        r.ops_per_s = j->best->main;
        if (j->clock) {
            // The fastest clock repeat: a dependent chain cannot beat one link per cycle, so
            // noise (steal time, a busy sibling) only makes it read slower; a slow outlier
            // here would inflate the roof's fraction of theory.
            r.clock_hz = j->best->companion.max;
            r.theoretical_ops_per_s =
                theoretical_ops_per_s(*uarch, j->kernel->roof, *r.clock_hz, j->threads);
        }
        r.noisy = r.ops_per_s.rel_spread > noisy_spread;
        p.compute_roofs.push_back(r);
    }
}

void measure_overheads(MachineProfile& p, int threads, const MachineOptions& o) {
    step(o, "dispatch overheads");
    const RepeatPlan plan = compute_plan(o.quick);
    p.overheads.threads = threads;
    if (threads > 1) {
        const std::int64_t n = calibrate(
            [&](std::int64_t m) {
                for (std::int64_t i = 0; i < m; ++i) kernels::empty_parallel_region(threads);
            },
            plan.target_s);
        // Wall time: fork/join is about waking and waiting for other threads.
        const auto t = time_runs(
            [&] {
                return collectors::time_s([&] {
                    for (std::int64_t i = 0; i < n; ++i) kernels::empty_parallel_region(threads);
                });
            },
            plan.warmup, plan.repeats * plan.blocks);
        std::vector<double> per;
        for (double x : t) per.push_back(x / static_cast<double>(n));
        p.overheads.fork_join_s = summarize(per);
    }
    void (*volatile call)() = kernels::ceiling_empty_call;
    const std::int64_t n = calibrate(
        [&](std::int64_t m) {
            for (std::int64_t i = 0; i < m; ++i) call();
        },
        plan.target_s);
    const auto t = time_runs(
        [&] {
            return team_cpu_seconds(1, [&](int) {
                for (std::int64_t i = 0; i < n; ++i) call();
            });
        },
        plan.warmup, plan.repeats * plan.blocks);
    std::vector<double> per;
    for (double x : t) per.push_back(x / static_cast<double>(n));
    p.overheads.empty_call_s = summarize(per);
}

MachineProfile measure_machine(const MachineOptions& options) {
    const double t0 = collectors::now_s();
    MachineProfile p;
    p.created_at = iso8601_now();
    p.quick = options.quick;
    p.build = {std::string(version_string()), std::string(compiler_string()),
               std::string(build_type()), std::string(git_commit())};
    p.host = describe_host();
    const int all = options.threads > 0 ? options.threads : kernels::available_cpus();
    p.host.threads_used = all;
    std::vector<int> thread_counts = {1};
    if (all > 1) thread_counts.push_back(all);

    p.method = {
        {"roof", "best block median over repeats (a roof is a ceiling); spread from that block"},
        {"timing",
         "CPU time of the slowest thread (CLOCK_THREAD_CPUTIME_ID), not wall time: time the OS "
         "gave to other work on a shared machine does not lower a roof; fork/join uses wall time"},
        {"compute",
         "inline-assembly loops of one instruction on 12 independent accumulators (tiles: 4), "
         "checked for exact results before timing"},
        {"clock", "dependent chain of 1-cycle vpaddd (scalar: add) beside FMAs of the same width"},
        {"theoretical",
         "clock (same width and threads, timed beside each repeat of the roof) x "
         "instructions/cycle (uarch table) x ops/instruction x threads"},
        {"bandwidth_bytes",
         "explicit loads + stores only: write-allocate (RFO) traffic not counted; ordinary stores, "
         "no non-temporal stores"},
        {"bandwidth_levels", "plateaus of the working-set sweep, named by cache capacity"},
        {"latency", "random cyclic pointer chase, one dependent load per step"},
        {"pages", "buffers 2 MiB aligned with MADV_HUGEPAGE"},
    };
    if (options.add_steps)
        options.add_steps(
            static_cast<int>((kernels::clock_kernels().size() + kernels::compute_kernels().size()) *
                             thread_counts.size()) +
            1);

    auto phase = [&](const char* name, auto&& fn) {
        const double s = collectors::time_s(fn);
        spdlog::debug("{} took {:.2f} s", name, s);
    };
    phase("clocks", [&] { measure_clocks(p, thread_counts, options); });
    phase("compute roofs", [&] { measure_compute_roofs(p, thread_counts, options); });
    phase("bandwidth roofs", [&] { measure_bandwidth_roofs(p, thread_counts, options); });
    phase("latencies", [&] { measure_latencies(p, options); });
    phase("overheads", [&] { measure_overheads(p, all, options); });
    phase("gpus", [&] { p.gpus = measure_gpus(options, p.absent); });  // GPU section (issue 7)
    p.duration_s = collectors::now_s() - t0;
    return p;
}

}  // namespace ceiling::measure
