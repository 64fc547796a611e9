#include "agent/machine/machine.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <memory>
#include <thread>

#include <spdlog/spdlog.h>

#include "agent/machine/gpu_machine.hpp"
#include "agent/machine/host_info.hpp"
#include "agent/machine/launch_context.hpp"
#include "agent/machine/repeat.hpp"
#include "agent/machine/roof_clock.hpp"
#include "agent/machine/storage_roof.hpp"
#include "agent/version.hpp"
#include "collectors/cgroup.hpp"
#include "collectors/clock.hpp"
#include "diagnosis/peak_table.hpp"
#include "kernels/parallel.hpp"
#include "kernels/roofs/compute.hpp"

namespace ceiling::measure {
namespace {

// More blocks a roof that does not scale with its cores gets (scales_with_cores), 200 ms
// apart: a neighbour's burst rarely lasts through them.
constexpr int scaling_retries = 6;

RepeatPlan compute_plan(bool quick) {
    return quick ? RepeatPlan{0.008, 1, 3, 2} : RepeatPlan{0.02, 1, 5, 3};
}

void step(const MachineOptions& o, const std::string& what) {
    if (o.on_step) o.on_step(what);
    spdlog::debug("measuring {}", what);
}

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

std::string threads_label(int t) { return std::to_string(t) + (t == 1 ? " thread" : " threads"); }

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
    std::optional<BindingChain> chain;  // null: no clock for this roof (why in the profile)
    int threads = 1;
    std::int64_t n = 1;  // iterations per timed run
    std::vector<std::unique_ptr<kernels::RoofOperands>> ops;
    ComputeRoof roof;
    std::optional<PairedRates> best;
};

// The physical cores a team of `threads` runs on (SMT siblings share one core's ports).
int cores_for(const MachineProfile& p, int threads) {
    if (threads == p.host.threads_used && p.host.cores_used > 0) return p.host.cores_used;
    return physical_cores_of(kernels::team_cpus(threads));
}

// Theoretical value of a measured roof: its clock, the instructions per cycle the table
// or the measurement gives (peak_table.hpp), its ops per instruction, the cores in use.
// `single` is the 1-thread row of the same roof: ports are a property of one core, so the
// 1-thread measurement decides them for every row.
void add_theory(ComputeRoof& r, const kernels::ComputeKernel& k, const Microarchitecture* uarch,
                const ComputeRoof* single) {
    if (!r.clock_hz) return;
    r.measured_instructions_per_cycle =
        r.ops_per_s.median / k.ops_per_instruction / *r.clock_hz / std::max(1, r.cores);
    const auto& deciding = single && single->measured_instructions_per_cycle
                               ? single->measured_instructions_per_cycle
                               : r.measured_instructions_per_cycle;
    const PortBasis b = decide_instructions_per_cycle(uarch, k.roof, deciding);
    r.theoretical_source = b.source;
    if (!b.instructions_per_cycle) return;
    r.instructions_per_cycle = b.instructions_per_cycle;
    r.theoretical_from_measurement = b.from_measurement;
    r.theoretical_ops_per_s =
        *r.clock_hz * *b.instructions_per_cycle * k.ops_per_instruction * r.cores;
}

namespace {

// A job for kernel `k` at `threads`: its operands, its iterations per timed run, and the
// roof's description; its binding chain is searched for separately (find_roof_chain).
std::unique_ptr<RoofJob> start_roof_job(const MachineProfile& p, const kernels::ComputeKernel& k,
                                        const InstructionClass* cls, int threads,
                                        const RepeatPlan& plan) {
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
    j->roof.cores = cores_for(p, threads);
    return j;
}

// The binding chain of job `j` (`jobs`: those planned before it); an absence when none is
// found.
void find_roof_chain(MachineProfile& p, RoofJob& j,
                     const std::vector<std::unique_ptr<RoofJob>>& jobs, const MachineOptions& o) {
    const auto& k = *j.kernel;
    const int threads = j.threads;
    // Short runs: the sweep needs each point's fastest time, not a distribution.
    // A team on as many cores as threads starts where one thread's chain bound.
    int shortest = 0;
    if (j.roof.cores == threads)
        for (const auto& prev : jobs)
            if (prev->kernel == &k && prev->threads == 1 && prev->chain)
                shortest = prev->chain->run->chain;
    // A second search when the first finds none: a neighbour's burst long enough to
    // spoil both looks of every length (on a Xeon VM the tile unit ran at half rate
    // for seconds at a time, a busy SMT sibling's share) rarely lasts into the next.
    std::string why;
    for (int attempt = 0; attempt < 2 && !j.chain; ++attempt)
        j.chain = find_binding_chain(k, threads, j.ops, std::max<std::int64_t>(1, j.n / 8),
                                     o.quick ? 3 : 5, why, shortest);
    if (!j.chain)
        p.absent.push_back(
            {"clock of " + std::string(k.roof) + " at " + threads_label(threads), why});
}

// One job per compute kernel this CPU runs and that passes its check, per thread count, in
// that order; a kernel that cannot be measured is an absence in the profile.
std::vector<std::unique_ptr<RoofJob>> plan_roof_jobs(MachineProfile& p,
                                                     const std::vector<int>& thread_counts,
                                                     const MachineOptions& o,
                                                     const RepeatPlan& plan) {
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
            auto j = start_roof_job(p, k, cls, threads, plan);
            find_roof_chain(p, *j, jobs, o);
            jobs.push_back(std::move(j));
        }
    }
    return jobs;
}

// One block of job `j`'s repeats; the job keeps its best block.
void time_roof_block(RoofJob& j, const RepeatPlan& plan, bool first_block) {
    const auto& k = *j.kernel;
    const double work = static_cast<double>(j.threads) * static_cast<double>(j.n) *
                        k.instructions_per_iteration * k.ops_per_instruction;
    auto on_team = [&](void (*run)(std::int64_t, kernels::RoofOperands*), std::int64_t n) {
        return team_cpu_seconds(j.threads,
                                [&](int t) { run(n, j.ops[static_cast<std::size_t>(t)].get()); });
    };
    // The roof's binding chain, timed beside each repeat: the theoretical value then
    // uses the clock this roof ran at, in the same moments.
    const std::int64_t nc = std::max<std::int64_t>(1, j.n / 4);
    std::function<double()> clock_run;
    if (j.chain) clock_run = [&] { return on_team(j.chain->run->run, nc); };
    const double clock_cycles = j.chain ? static_cast<double>(nc) * j.chain->run->chain : 0;
    const PairedRates r = timed_block([&] { return on_team(k.run, j.n); }, work, clock_run,
                                      clock_cycles, first_block ? plan.warmup : 0, plan.repeats);
    if (!j.best || r.main.median > j.best->main.median) j.best = r;
}

// A team far below its cores x one thread's roof was given less than its cores (seen: a
// quick profile's two-thread FMA roof at 1.1x one thread's, and a program then ran at
// 1.7-1.9x "the roof"); a single thread far above its share of the team, less than its
// core. Either is measured again; what stays off is kept (it was measured), flagged and said.
// Two roofs that stay off through every retry mean a host that holds them so (vCPUs on
// one core's SMT siblings): the rest are flagged without retries.
// Returns the jobs that stay off.
std::vector<const RoofJob*> remeasure_unscaled(const std::vector<std::unique_ptr<RoofJob>>& jobs,
                                               const RepeatPlan& plan) {
    std::vector<const RoofJob*> unscaled;
    std::string said;
    int cores = 0;
    for (auto& j : jobs) {
        if (j->threads == 1 || j->roof.cores != j->threads) continue;
        RoofJob* single = nullptr;
        for (auto& s : jobs)
            if (s->kernel == j->kernel && s->threads == 1) single = s.get();
        if (!single) continue;
        auto team_low = [&] {
            return j->best->main.median < j->roof.cores * single->best->main.median;
        };
        auto scales = [&] {
            return scales_with_cores(j->best->main.median, j->roof.cores,
                                     single->best->main.median);
        };
        for (int extra = 0; unscaled.size() < 2 && extra < scaling_retries && !scales(); ++extra) {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            time_roof_block(team_low() ? *j : *single, plan, false);
        }
        if (scales()) continue;
        unscaled.push_back(team_low() ? j.get() : single);
        cores = j->roof.cores;
        said += fmt::format("{}{} {:.2f}x", said.empty() ? "" : ", ", j->kernel->roof,
                            j->best->main.median / single->best->main.median);
    }
    if (!unscaled.empty())
        spdlog::warn(
            "compute roofs on {} cores measured {} one thread's, outside {:.1f}-{:.1f}x: "
            "the host gave the team less than its cores or the one thread less than "
            "its core (busy SMT siblings of the vCPUs, or CPU stolen); flagged noisy: "
            "measure again at a quieter moment",
            cores, said, scaling_floor * cores, cores / scaling_floor);
    return unscaled;
}

// Each job's best block into the profile as its roof, with the clock it ran at.
void record_compute_roofs(MachineProfile& p, const std::vector<std::unique_ptr<RoofJob>>& jobs,
                          const std::vector<const RoofJob*>& unscaled) {
    for (auto& j : jobs) {
        ComputeRoof& r = j->roof;
        r.ops_per_s = j->best->main;
        if (j->chain) {
            // The fastest clock repeat: a dependent chain cannot beat one link per cycle, so
            // noise (steal time, a busy sibling) only makes it read slower; a slow outlier
            // here would inflate the roof's fraction of theory.
            r.clock_hz = j->best->companion.max;
            r.clock_chain = j->chain->run->chain;
            r.clock_density = j->chain->density;
        }
        r.noisy = r.ops_per_s.rel_spread > noisy_spread ||
                  std::find(unscaled.begin(), unscaled.end(), j.get()) != unscaled.end();
        p.compute_roofs.push_back(r);
    }
}

// The theoretical values of the profile's compute roofs from index `first` on, each beside
// its own 1-thread row (add_theory).
void add_theories(MachineProfile& p, std::size_t first, const Microarchitecture* uarch) {
    for (std::size_t i = first; i < p.compute_roofs.size(); ++i) {
        ComputeRoof& r = p.compute_roofs[i];
        const ComputeRoof* single = nullptr;
        for (std::size_t s = first; s < p.compute_roofs.size(); ++s)
            if (p.compute_roofs[s].name == r.name && p.compute_roofs[s].threads == 1)
                single = &p.compute_roofs[s];
        add_theory(r, *kernels::find_compute_kernel(r.name), uarch,
                   single == &r ? nullptr : single);
    }
}

}  // namespace

void measure_compute_roofs(MachineProfile& p, const std::vector<int>& thread_counts,
                           const MachineOptions& o) {
    const RepeatPlan plan = compute_plan(o.quick);
    const auto& f = kernels::cpu_features();
    const auto* uarch = find_microarchitecture(f.vendor, f.family, f.model);
    const auto jobs = plan_roof_jobs(p, thread_counts, o, plan);
    // Blocks go round the roofs rather than one roof at a time: on a shared host a
    // neighbour's burst (a busy SMT sibling) then costs each roof one block, not all of its
    // blocks, and the best block, the roof, survives it.
    for (int b = 0; b < plan.blocks; ++b)
        for (auto& j : jobs) time_roof_block(*j, plan, b == 0);
    const auto unscaled = remeasure_unscaled(jobs, plan);
    const std::size_t first = p.compute_roofs.size();
    record_compute_roofs(p, jobs, unscaled);
    add_theories(p, first, uarch);
}

void measure_storage_roof(MachineProfile& p, const MachineOptions& o) {
    if (!o.storage_dir) {
        p.absent.push_back({"storage", "not measured (--no-storage)"});
        return;
    }
    step(o, "storage under " + o.storage_dir->string());
    StorageOptions so;
    so.directory = *o.storage_dir;
    so.file_bytes = o.quick ? 64ull << 20 : 256ull << 20;
    so.passes = 3;
    std::string why;
    p.storage = measure_storage(so, why);
    if (!p.storage) {
        p.absent.push_back({"storage", why});
        return;
    }
    p.method["storage"] =
        "a file of random bytes written in 1 MiB requests then fdatasync, and read back, with "
        "O_DIRECT, in eight segments side by side (eight requests in flight); the best of three "
        "passes";
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

bool scales_with_cores(double team, int cores, double single) {
    const double s = team / (std::max(1, cores) * single);
    return s >= scaling_floor && s <= 1 / scaling_floor;
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
    p.host.cores_used = physical_cores_of(kernels::team_cpus(all));
    std::vector<int> thread_counts = {1};
    if (all > 1) thread_counts.push_back(all);
    p.method = {
        {"roof",
         "best block median over repeats (a roof is a ceiling); spread from that block; a "
         "compute roof on N cores outside 0.6-1.67 x N x its one-thread roof gets up to 6 more "
         "blocks and is flagged noisy if it stays there"},
        {"timing",
         "each thread's own CPU time (CLOCK_THREAD_CPUTIME_ID), not wall time, and the team's "
         "rate the sum of its threads' rates: time the OS gave to other work on a shared machine "
         "does not lower a roof, nor does one core slower than the others; bandwidth uses wall "
         "time from the first thread's start to the last one's end (threads share the memory, so "
         "only what they move together counts); fork/join uses wall time"},
        {"compute",
         "inline-assembly loops of one instruction on 12 independent accumulators (tiles: 4), "
         "checked for exact results before timing"},
        {"clock",
         "table 'Effective clock': dependent chain of 1-cycle scalar adds beside fp32 FMAs of the "
         "width at half of a 2-port core's FMA density; each compute roof's own clock: the same "
         "chain woven into the roof's loop, at the shortest chain length that sets the time "
         "(swept), timed beside each repeat of the roof"},
        {"theoretical",
         "the roof's own clock x instructions/cycle (uarch table; where the table lists two "
         "counts, or does not know the CPU, the measured roof rate / clock decides) x "
         "ops/instruction x physical cores in use (SMT siblings share a core's ports; on a "
         "hybrid CPU the table's row describes the performance cores)"},
        {"bandwidth_bytes",
         "explicit loads + stores only: write-allocate (RFO) traffic not counted; ordinary stores, "
         "no non-temporal stores; read: one stream per thread within L2, eight side by side "
         "beyond"},
        {"bandwidth_levels",
         "plateaus of the working-set sweep, named by cache capacity; where no plateau holds the "
         "sweep's end, DRAM is its trailing points beyond the last-level cache that agree with "
         "the last one"},
        {"latency", "random cyclic pointer chase, one dependent load per step"},
        {"pages", "buffers 2 MiB aligned with MADV_HUGEPAGE"},
    };
    // A container's CPU quota lets a team run on all its CPUs until the period's quota is
    // spent, then holds it: roofs timed by the wall clock (bandwidth, fork/join) read low at
    // more threads than the quota; those timed by each thread's CPU time (compute) do not.
    if (const auto q = collectors::read_cgroup_limits(collectors::FsRoot::system()).cpu;
        q && q->cpus < all) {
        const std::string said = fmt::format(
            "measured under a CPU quota of {:.2f} CPUs (control group {}): bandwidth and "
            "fork/join at {} threads are timed by the wall clock and read low where the quota "
            "ran out; compute roofs (each thread's CPU time) are not lowered. `run` judges a "
            "program here at the quota",
            q->cpus, q->group, all);
        spdlog::warn("{}", said);
        p.method["cpu_quota"] = said;
    }
    if (options.add_steps) {
        // The kernels this CPU runs (the others are skipped without a step), per thread count,
        // then the memory sweep and latencies, then the overheads: the whole total at once.
        int kernels_here = 0;
        for (const auto& k : kernels::clock_kernels())
            kernels_here += unavailable_reason(k.supported, k.needs_amx_permission).empty();
        for (const auto& k : kernels::compute_kernels())
            kernels_here += unavailable_reason(k.supported, k.needs_amx_permission).empty();
        options.add_steps(kernels_here * static_cast<int>(thread_counts.size()) + 1 +
                          memory_steps(p, thread_counts.size(), options.quick) +
                          (options.storage_dir ? 1 : 0));
    }

    auto phase = [&](const char* name, auto&& fn) {
        const double s = collectors::time_s(fn);
        spdlog::debug("{} took {:.2f} s", name, s);
    };
    phase("clocks", [&] { measure_clocks(p, thread_counts, options); });
    phase("compute roofs", [&] { measure_compute_roofs(p, thread_counts, options); });
    phase("bandwidth roofs", [&] { measure_bandwidth_roofs(p, thread_counts, options); });
    phase("latencies", [&] { measure_latencies(p, options); });
    phase("overheads", [&] { measure_overheads(p, all, options); });
    phase("storage", [&] { measure_storage_roof(p, options); });
    phase("gpus", [&] { p.gpus = measure_gpus(options, p.absent); });  // GPU section (issue 7)
    p.duration_s = collectors::now_s() - t0;
    return p;
}

}  // namespace ceiling::measure
