// The acceptance corpus (tests/programs/verdicts): each labelled program runs five times
// under `ceiling run` against a quick profile of this machine, and must get its labelled
// bound every time, with no verdict above a roof chosen for the cores in use, in one of up to
// three such batches (a shared host can spoil a run; a wrong verdict misses in all); the FMA loop
// on threads its range's thread starts must report busy cores within 10 % of the CPU time
// its threads measured themselves (on a busy machine too). The profile comes from the
// verdicts_profile ctest fixture (once per test run); run directly, this measures one itself. Runs
// that shared the machine with other work (other processes busy, or CPU stolen by the hypervisor)
// are repeated: they test the neighbours, not the method.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include "diagnosis/machine_profile.hpp"
#include "diagnosis/run_record.hpp"
#include "tests/integration/process.hpp"

namespace ceiling::testing {
namespace {

namespace fs = std::filesystem;

constexpr int runs = 5;
// A run during which other work used more than this share of the machine's CPUs (or the
// hypervisor stole it) is not a trial of the method: it is repeated while the machine is
// quiet, within this much time per batch of runs (then the test is skipped, saying why).
constexpr double contended_share = 0.15;
constexpr double patience_s = 40;
// Batches of `runs` a program gets: a shared host can spoil a run of each of two batches in a
// row (see the batch loop); a wrong verdict misses in every one.
constexpr int batches = 3;

// Busy and stolen CPU-seconds of the whole machine so far (/proc/stat, USER_HZ ticks).
double machine_busy_s() {
    std::ifstream in("/proc/stat");
    std::string cpu;
    double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
    return (user + nice + system + irq + softirq + steal) /
           static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Whether other work keeps the machine busy now: its CPU use over a short look, while this
// test runs nothing.
bool machine_quiet(double cpus) {
    constexpr double look_s = 0.25;
    const double before = machine_busy_s();
    std::this_thread::sleep_for(std::chrono::duration<double>(look_s));
    return machine_busy_s() - before <= contended_share * cpus * look_s;
}

// CPU-seconds of this test's reaped descendants: ceiling and the programs it ran.
double own_children_s() {
    rusage u{};
    getrusage(RUSAGE_CHILDREN, &u);
    auto s = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
    };
    return s(u.ru_utime) + s(u.ru_stime);
}

const std::string& profile() {
    static const std::string path = [] {
        const std::string fixture = CEILING_VERDICT_PROFILE;
        if (fs::exists(fixture)) return fixture;
        static TempDir own;
        const std::string p = (own / "profile.json").string();
        const auto r = run_ceiling({"-q", "machine", "--quick", "--output", p});
        if (r.exit_code != 0) ADD_FAILURE() << "ceiling machine --quick failed: " << r.err;
        return p;
    }();
    return path;
}

struct Case {
    const char* program;
    std::vector<std::string> options;
    const char* region;  // the labelled region; null: the run is labelled
    Bound bound;         // the label
    const char* move = nullptr;  // also labelled: words its first move must contain
};

std::ostream& operator<<(std::ostream& o, const Case& c) { return o << c.program; }

const Case cases[] = {
    {"fma_threads", {}, "fma", Bound::compute},
    {"openmp_fma", {}, "omp fma", Bound::compute},
    {"openmp_per_thread", {}, "thread fma", Bound::compute},
    {"stream_triad", {}, "triad", Bound::bandwidth},
    {"pointer_chase", {}, "chase", Bound::latency, "a miss or two at a time"},
    {"pipeline", {"--model-regions", "infer"}, nullptr, Bound::not_the_model},
    {"fork_child", {}, "child fma", Bound::compute},
    {"spawn_workers", {}, "workers fma", Bound::compute},
};

std::optional<double> printed_truth(const std::string& out) {
    const auto at = out.find("truth busy_cores=");
    if (at == std::string::npos) return std::nullopt;
    return std::strtod(out.c_str() + at + 17, nullptr);
}

// In a sanitizer build ceiling itself is unoptimised and instrumented: its bandwidth kernels
// (C++, unlike the inline-assembly compute roofs) measure a fraction of the machine, so the
// roofs are not the machine's. The programs still run under it (memory safety of everything
// ceiling does with them); the verdicts are judged in the optimised build.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool roofs_are_the_machines = false;
#else
constexpr bool roofs_are_the_machines = true;
#endif

// The profile's roof `name` at each thread count, for a failure's message: a team roof that
// did not scale with its cores (measured while the host gave it less) judges every run.
std::string profile_scaling(const std::string& name) {
    static const MachineProfile p = parse_machine_profile(slurp(profile()));
    std::string s = " (profile:";
    for (const auto& r : p.compute_roofs)
        if (r.name == name)
            s += " " + std::to_string(r.ops_per_s.median / 1e9) + " Gop/s at " +
                 std::to_string(r.threads) + " threads" + (r.noisy ? " (noisy)" : "") + ";";
    return s + ")";
}

class Verdicts : public ::testing::TestWithParam<Case> {};

TEST_P(Verdicts, LabelledBoundInEveryRunAndNoneAboveTheRoofOfTheCoresInUse) {
    const Case& c = GetParam();
    ASSERT_TRUE(fs::exists(profile())) << "no machine profile";
    const std::string program =
        std::string(CEILING_VERDICT_PROGRAMS) + "/ceiling_verdict_" + c.program;
    TempDir dir;
    int hits = 0, run = 0, attempts = 0, contended = 0, batch = 1;
    std::string seen;
    const double cpus = static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN));
    // Each batch gets its own patience: a batch that missed once and left the next one too
    // little time on a busy host would otherwise fail with no wrong verdict in sight.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(patience_s);
    while (run < runs) {
        // Time ran out before the batch finished. A miss in it ends the batch as a miss (the
        // next one follows, and a wrong verdict misses in all); hits only, or no run judged,
        // mean the host was too busy to tell.
        if (std::chrono::steady_clock::now() > deadline) {
            if (hits < run && roofs_are_the_machines) {
                if (batch == batches) {
                    ADD_FAILURE() << c.program << " is labelled " << to_string(c.bound)
                                  << ": every batch missed (the last ran out of time after "
                                  << run - hits << " of " << run << "):" << seen;
                    return;
                }
                seen += "\n  (batch " + std::to_string(batch) + ": " + std::to_string(hits) +
                        " of " + std::to_string(run) +
                        " before its time ran out; another batch follows)";
                ++batch;
                run = 0;
                hits = 0;
                deadline =
                    std::chrono::steady_clock::now() + std::chrono::duration<double>(patience_s);
                continue;
            }
            GTEST_SKIP() << "this machine is too busy to judge: other work used the CPUs or the "
                         << "host's memory bandwidth for " << patience_s << " s in batch " << batch
                         << " (" << contended << " runs contended, " << run << " judged"
                         << (run > 0 ? ", all hits)" : ")")
                         << seen;
        }
        if (!machine_quiet(cpus)) continue;
        const fs::path out = dir / ("r" + std::to_string(++attempts) + ".json");
        std::vector<std::string> args = {"-q",      "run",      "--profile",
                                         profile(), "--output", out.string()};
        args.insert(args.end(), c.options.begin(), c.options.end());
        args.push_back("--");
        args.push_back(program);
        const double busy0 = machine_busy_s(), own0 = own_children_s();
        const auto t0 = std::chrono::steady_clock::now();
        const auto r = run_ceiling(args);
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double others = (machine_busy_s() - busy0) - (own_children_s() - own0);
        ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
        if (others > contended_share * cpus * wall) {
            ++contended;
            continue;
        }
        const RunRecord rec = parse_run_record(slurp(out));
        // The host's memory bandwidth or compute rate was not what the profile measured (other
        // tenants of a shared host: their streams, or their work on an SMT sibling of our
        // vCPUs, invisible in /proc/stat; ceiling measured the roofs the verdict depends on
        // again after the run): the neighbours, not the method. The product's own tolerance
        // (10 %): the check is a best of five 30 ms looks, the quick profile a best of short
        // noisy ones, a few percent apart on a quiet host.
        // It can also move and come back within seconds: a program that streamed faster than
        // both the profile and the check right after it (above its DRAM roof by more than the
        // tolerance) saw a faster host than either measured. Which roof a region is judged
        // against is still checked below (threads of the cores in use), so a wrong choice of
        // roof cannot hide here.
        const double above = 1 + rec.thresholds.above_roof_tolerance;
        // A compute comparison's fraction with its roof scaled by what the host gave right
        // after the run (the run's roof check of that roof: now / profile); NaN when
        // unchecked. Scaled, not replaced: a roof taken from the wrong thread count keeps its
        // error (seen: judged against one thread's roof while labelled two, openmp_fma read
        // 2.12, and 0.97 of the two-thread roof measured then).
        const auto scaled_by_check = [&](const RoofComparison& cmp) {
            for (const auto& k : rec.roof_checks)
                if (k.kind == RoofKind::compute && k.kernel == cmp.roof &&
                    k.threads == cmp.threads && cmp.fraction && k.profile_per_s > 0 &&
                    k.now_per_s > 0)
                    return *cmp.fraction / (k.now_per_s / k.profile_per_s);
            return static_cast<double>(NAN);
        };
        // How far this host's compute rate moves between moments the roof check cannot
        // follow: fork_child ran at 1.07-1.15 of the profile's two-thread FMA roof while the
        // check right after each run read the profile's figure (the AVX-512 clock of this
        // host read 3.06 GHz in one profile, the scalar one 3.55). A roof of the wrong thread
        // count or a per-core share misapplied is off by 1.5-2x and still counts.
        constexpr double host_drift = 0.20;
        // Compute too: above the profile's roof yet within host_drift of it once scaled by the
        // roof check (seen: openmp_fma at 1.05-1.08 of a quick profile's two-thread FMA roof,
        // the host's clock ~6 % higher right after than when the profile was measured).
        const bool drifted_during =
            !rec.roof_checks.empty() &&
            std::any_of(rec.region_diagnoses.begin(), rec.region_diagnoses.end(),
                        [&](const RegionVerdict& v) {
                            return std::any_of(v.diagnosis.roofs.begin(), v.diagnosis.roofs.end(),
                                               [&](const RoofComparison& cmp) {
                                                   if (!cmp.fraction || *cmp.fraction <= above)
                                                       return false;
                                                   if (cmp.kind == RoofKind::bandwidth)
                                                       return cmp.level == "DRAM";
                                                   return scaled_by_check(cmp) <= 1 + host_drift;
                                               });
                        });
        if (drifted_during ||
            std::any_of(rec.roof_checks.begin(), rec.roof_checks.end(), [](const RoofCheck& k) {
                // Its slowest look too: a host that toggles between two bandwidths within
                // tenths of a second can give the check's best look at the profile while the
                // program streamed at the other.
                const auto slowest = k.slowest_ratio();
                return std::abs(k.ratio() - 1) > 0.10 || (slowest && *slowest < 0.90);
            })) {
            ++contended;
            continue;
        }
        ++run;

        const Diagnosis* d = nullptr;
        const RecordedRegion* region = nullptr;
        if (c.region) {
            region = rec.region(c.region);
            ASSERT_TRUE(region) << "no region '" << c.region << "' in run " << run;
            for (const auto& v : rec.region_diagnoses)
                if (v.path == c.region) d = &v.diagnosis;
        } else if (rec.diagnosis) {
            d = &*rec.diagnosis;
        }
        ASSERT_TRUE(d) << "no diagnosis in run " << run;
        // Above the roof only ever after the roof of the cores in use was chosen: a miss (a
        // host that gave more than the profile was set aside above, by the roof check). A
        // miss, not a failure at once: this host's compute rate has moved 30-40 % between
        // consecutive 100 ms looks that nothing else on the guest could see (seen in CI: the
        // FMA loop on threads at 1.29 of the two-thread roof, the check right after at the
        // profile's figure, with 48 of 50 runs contended). A roof of the wrong thread count
        // or a misapplied per-core share is above in every run, so it misses in every batch.
        std::string above_why;
        if (roofs_are_the_machines)
            for (const auto& v : rec.region_diagnoses) {
                if (v.diagnosis.verdict != Verdict::above_roof) continue;
                above_why += "\n    above the roof: " + v.path;
                for (const auto& roof : v.diagnosis.roofs)
                    if (roof.verdict == Verdict::above_roof)
                        above_why += " | " + roof.roof + " at " + std::to_string(roof.threads) +
                                     " threads: " + std::to_string(roof.fraction.value_or(NAN)) +
                                     " of the profile, " + std::to_string(scaled_by_check(roof)) +
                                     " scaled by the roof measured after the run" +
                                     profile_scaling(roof.roof);
            }
        const bool hit = d->bound == c.bound && above_why.empty() &&
                         (!c.move || d->first_move.find(c.move) != std::string::npos);
        hits += hit;
        seen += "\n  run " + std::to_string(run) + ": " + (d->bound ? d->diagnosis : "unknown") +
                ": " + d->observation + (c.move ? " | first move: " + d->first_move : "");
        for (const auto& roof : d->roofs)
            if (roof.fraction)
                seen += " | " + (roof.kind == RoofKind::compute ? roof.roof : roof.level) + " at " +
                        std::to_string(roof.threads) +
                        " threads: " + std::to_string(*roof.fraction);
        if (region && region->busy_cores) seen += " | busy " + std::to_string(*region->busy_cores);
        seen += above_why;

        // The roof of the cores in use, in every run: a wrong choice fails at once.
        for (const auto& v : rec.region_diagnoses) {
            const RecordedRegion* g = rec.region(v.path);
            if (!g || !g->busy_cores || v.diagnosis.roofs.empty()) continue;
            // The roof of the cores in use: the threads that many busy cores need (with the
            // processes it started, where its work ran there), or the cores it held at once
            // where it left a good part of them idle.
            double cores = std::max(1.0, g->with_descendants_cores().value_or(*g->busy_cores));
            if (g->peak_busy_cores &&
                *g->peak_busy_cores >= rec.thresholds.held_cores_ratio * cores)
                cores = *g->peak_busy_cores;
            const int threads = static_cast<int>(std::ceil(cores - 1e-9));
            for (const auto& roof : v.diagnosis.roofs) EXPECT_EQ(roof.threads, threads) << v.path;
            ASSERT_FALSE(v.diagnosis.findings.empty());
            EXPECT_NE(v.diagnosis.findings.front().detail.find("cores busy"), std::string::npos)
                << v.path << ": " << v.diagnosis.findings.front().detail;
        }
        // A shared host can take half a core's throughput for one run where the guest cannot
        // see it (seen here: 0.50 of the FMA roof at 1.97 busy cores, the roof checked right
        // after back at 0.99 of the profile, no steal time; once in each of two batches in a
        // row): the verdict was right for what was measured. So a batch that misses gets
        // another, up to three; a wrong verdict misses in every one.
        if (run == runs && hits < runs && batch < batches && roofs_are_the_machines) {
            seen += "\n  (batch " + std::to_string(batch) + ": " + std::to_string(hits) + " of " +
                    std::to_string(runs) + "; another batch follows)";
            ++batch;
            run = 0;
            hits = 0;
            deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(patience_s);
        }
    }
    if (!roofs_are_the_machines)
        GTEST_SKIP() << "verdicts not judged: roofs from a sanitizer build" << seen;
    EXPECT_EQ(hits, runs) << c.program << " is labelled " << to_string(c.bound) << ":" << seen;
}

// Busy cores hold on a busy machine too: they are the CPU time the process got, which the
// work threads also measure (CLOCK_THREAD_CPUTIME_ID) and print.
TEST(VerdictsBusyCores, ARangeWhoseWorkRunsOnThreadsItStartsCountsThemAll) {
    const std::string program =
        std::string(CEILING_VERDICT_PROGRAMS) + "/ceiling_verdict_fma_threads";
    TempDir dir;
    for (int run = 1; run <= 3; ++run) {
        const fs::path out = dir / ("r" + std::to_string(run) + ".json");
        const auto r = run_ceiling({"-q", "run", "--output", out.string(), "--", program});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const auto truth = printed_truth(r.out);
        ASSERT_TRUE(truth) << r.out;
        const RunRecord rec = parse_run_record(slurp(out));
        const RecordedRegion* fma = rec.region("fma");
        ASSERT_TRUE(fma);
        EXPECT_EQ(fma->threads, 1) << "recorded by the thread that starts the work";
        ASSERT_TRUE(fma->busy_cores) << "busy cores not measured";
        EXPECT_NEAR(*fma->busy_cores, *truth, 0.1 * *truth)
            << "run " << run << ": the work threads measured " << *truth;
    }
}

// Four threads per CPU and nothing else running: the run queue past the CPUs is the
// program's own, said so with its lever, and not taken for contention (it read "other work
// competed for the CPUs ... measure on a quiet machine" before).
TEST(VerdictsOversubscribed, ItsOwnThreadsPastTheCpusAreItsOwnDoingNotContention) {
    const std::string program =
        std::string(CEILING_VERDICT_PROGRAMS) + "/ceiling_verdict_fma_threads";
    const double cpus = static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN));
    TempDir dir;
    for (int attempt = 1; attempt <= 5; ++attempt) {
        if (!machine_quiet(cpus)) continue;
        const fs::path out = dir / ("r" + std::to_string(attempt) + ".json");
        const double busy0 = machine_busy_s(), own0 = own_children_s();
        const auto t0 = std::chrono::steady_clock::now();
        const auto r = run_ceiling(
            {"-q", "run", "--profile", profile(), "--output", out.string(), "--", program, "4"});
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        ASSERT_EQ(r.exit_code, 0) << r.err;
        if ((machine_busy_s() - busy0) - (own_children_s() - own0) > contended_share * cpus * wall)
            continue;  // other work ran beside it: contention would be right
        const RunRecord rec = parse_run_record(slurp(out));
        ASSERT_TRUE(rec.diagnosis);
        const auto signal = [&](std::string_view name) {
            return std::find_if(rec.diagnosis->system.begin(), rec.diagnosis->system.end(),
                                [&](const SystemSignal& s) { return s.name == name; });
        };
        // Other guests took the CPUs (steal, invisible in this guest's busy time: CI's shared
        // host once gave 11 %): contention is then right, and this attempt tells nothing.
        if (const auto steal = signal("steal_share");
            steal != rec.diagnosis->system.end() && steal->fired)
            continue;
        const auto queue = signal("run_queue_per_cpu");
        ASSERT_NE(queue, rec.diagnosis->system.end());
        ASSERT_TRUE(queue->value);
        EXPECT_GE(*queue->value, 2.0) << "4 runnable threads per CPU";
        EXPECT_TRUE(queue->fired);
        EXPECT_NE(queue->meaning.find("nearly all its own"), std::string::npos) << queue->meaning;
        for (const auto& f : rec.diagnosis->findings)
            EXPECT_NE(f.kind, FindingKind::contention) << f.detail;
        return;
    }
    GTEST_SKIP() << "other work (or other guests: steal) used the CPUs in every attempt: its own doing cannot be told";
}

// A team whose first thread has three times the others' share: the others idle two thirds of
// the range. The cores it held at once are all of them, its mean busy cores well below, and
// it is judged at the cores it held with the idle ones named first (it read "done" at its
// mean before).
TEST(VerdictsImbalance, ATeamWaitingForItsSlowestThreadIsJudgedAtTheCoresItHeld) {
    const std::string program =
        std::string(CEILING_VERDICT_PROGRAMS) + "/ceiling_verdict_fma_threads";
    const double cpus = static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN));
    if (cpus < 2) GTEST_SKIP() << "one CPU: no team to leave idle";
    TempDir dir;
    std::string seen;
    for (int attempt = 1; attempt <= 5; ++attempt) {
        if (!machine_quiet(cpus)) continue;
        const fs::path out = dir / ("r" + std::to_string(attempt) + ".json");
        const double busy0 = machine_busy_s(), own0 = own_children_s();
        const auto t0 = std::chrono::steady_clock::now();
        const auto r = run_ceiling({"-q", "run", "--profile", profile(), "--output", out.string(),
                                    "--", program, "1", "uneven"});
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        ASSERT_EQ(r.exit_code, 0) << r.err;
        if ((machine_busy_s() - busy0) - (own_children_s() - own0) > contended_share * cpus * wall)
            continue;  // other work took the cores: what it held is theirs to tell
        const RunRecord rec = parse_run_record(slurp(out));
        const RecordedRegion* fma = rec.region("fma");
        ASSERT_TRUE(fma);
        ASSERT_TRUE(fma->busy_cores);
        if (!fma->peak_busy_cores) {
            seen +=
                "\n  run " + std::to_string(attempt) + ": no peak (exact CPU time unavailable?)";
            continue;
        }
        seen += "\n  run " + std::to_string(attempt) + ": busy " +
                std::to_string(*fma->busy_cores) + ", held " +
                std::to_string(*fma->peak_busy_cores);
        // 2 CPUs: (3 + 1) / 3 = 1.33 busy on average, 2 held.
        const double expected_busy = (cpus + 2) / 3;
        if (*fma->peak_busy_cores < 0.9 * cpus) continue;  // the host took a core meanwhile
        EXPECT_NEAR(*fma->busy_cores, expected_busy, 0.2 * expected_busy) << seen;
        const Diagnosis* d = nullptr;
        for (const auto& v : rec.region_diagnoses)
            if (v.path == "fma") d = &v.diagnosis;
        ASSERT_TRUE(d);
        EXPECT_EQ(d->roofs.front().threads, static_cast<int>(cpus));
        EXPECT_EQ(d->first_move.rfind("keep the cores it held busy", 0), 0u) << d->first_move;
        return;
    }
    GTEST_SKIP() << "the host did not give the team every core in any attempt:" << seen;
}

INSTANTIATE_TEST_SUITE_P(Corpus, Verdicts, ::testing::ValuesIn(cases),
                         [](const ::testing::TestParamInfo<Case>& i) {
                             return std::string(i.param.program);
                         });

}  // namespace
}  // namespace ceiling::testing
