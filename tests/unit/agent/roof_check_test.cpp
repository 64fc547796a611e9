// The DRAM roof measured again after a run: only where the profile has that roof, a real
// measurement (never 0), and a note that says how far it is from the profile.
#include "agent/machine/roof_check.hpp"

#include <algorithm>
#include <optional>

#include <gtest/gtest.h>

#include "agent/judge/judge_record.hpp"
#include "agent/store/profile_store.hpp"
#include "kernels/cpu_features.hpp"
#include "kernels/parallel.hpp"
#include "kernels/roofs/compute.hpp"

namespace ceiling::measure {
namespace {

// Synthetic profile: a DRAM triad roof at 1 thread (30 GB/s), none at 2 or 3 threads.
MachineProfile synthetic() {
    return store::load_profile(std::string(CEILING_TEST_DATA) + "/profile_synthetic.json");
}

// Checks as a record holds them; `slowest` absent as in records written before it was kept.
RoofCheck dram_check(const char* kernel, int threads, double profile, double now,
                     std::optional<double> slowest = std::nullopt) {
    return {"DRAM", kernel, threads, profile, now, RoofKind::bandwidth, slowest, std::nullopt, {}};
}
RoofCheck compute_check(const char* roof, int threads, double profile, double now) {
    return {"", roof, threads, profile, now, RoofKind::compute, std::nullopt, std::nullopt, {}};
}

// A region with declared work (working set = its bytes), timed once at `seconds`.
RecordedRegion timed_region(const std::string& path, RegionKind kind, double ops, double bytes,
                            double seconds, int threads) {
    RecordedRegion r;
    r.kind = kind;
    r.path = r.name = path;
    Work w;
    w.ops = ops;
    w.compulsory_bytes = bytes;
    w.working_set_bytes = bytes;
    r.measurement.work = w;
    r.measurement.threads = threads;
    r.measurement.durations_s = {seconds};
    r.measurement.duration_s = summarize(r.measurement.durations_s);
    return r;
}

TEST(DramCheck, MeasuresTheThreadCountsThisMachineHasCpusFor) {
    const MachineProfile p = synthetic();
    const int beyond = kernels::available_cpus() + 1;
    const auto checks = measure_dram_now(p, {1, beyond});
    ASSERT_EQ(checks.size(), 1u);
    EXPECT_EQ(checks[0].threads, 1);
    EXPECT_EQ(checks[0].kernel, "triad");
    EXPECT_DOUBLE_EQ(checks[0].profile_per_s, 30e9);
    EXPECT_EQ(checks[0].profile_threads, 1);
    EXPECT_FALSE(checks[0].derived());
    // Measured, so positive and finite; no assertion on the speed itself.
    EXPECT_GT(checks[0].now_per_s, 1e8);
    EXPECT_LT(checks[0].now_per_s, 1e13);
}

// A plateau's first points can sit in cache a VM does not show: the look repeats its far end,
// against what the profile measured there (derived figures scaled alike), not the median.
TEST(DramCheck, RepeatsThePlateausFarEndAgainstWhatTheProfileMeasuredThere) {
    MachineProfile p = synthetic();
    for (auto& r : p.bandwidth_roofs)
        if (r.level == "DRAM" && r.threads == 1) r.far_end_bytes_per_s = 0.8 * r.bytes_per_s.median;
    const auto checks = measure_dram_now(p, {1, 2});
    ASSERT_GE(checks.size(), 1u);
    EXPECT_DOUBLE_EQ(checks[0].profile_per_s, 24e9) << "the 1-thread triad roof's far end";
    EXPECT_GT(checks[0].now_per_s, 1e8);
    if (checks.size() > 1) {
        EXPECT_TRUE(checks[1].derived());
        EXPECT_DOUBLE_EQ(checks[1].profile_per_s, 48e9) << "derived from 1 thread, scaled alike";
    }
}

// The synthetic profile has DRAM roofs at 1 and 4 threads: its verdicts at 2 threads use one
// derived from 1 thread (at most linear: 2 x 30 GB/s), and that is the figure checked, with
// the 1-thread roof's kernel, the note saying where it came from.
TEST(DramCheck, AThreadCountWithoutARoofIsCheckedAgainstTheDerivedOne) {
    if (kernels::available_cpus() < 2) GTEST_SKIP() << "one CPU: no 2-thread check to run";
    const auto checks = measure_dram_now(synthetic(), {2});
    ASSERT_EQ(checks.size(), 1u);
    const RoofCheck& c = checks[0];
    EXPECT_EQ(c.threads, 2);
    EXPECT_EQ(c.kernel, "triad");
    EXPECT_DOUBLE_EQ(c.profile_per_s, 60e9);
    EXPECT_EQ(c.profile_threads, 1);
    EXPECT_TRUE(c.derived());
    EXPECT_GT(c.now_per_s, 1e8);

    RoofCheck shown = c;
    shown.now_per_s = 39e9;
    shown.slowest_per_s.reset();
    const auto lines = describe_roof_checks({shown});
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("2 threads triad 39.0 GB/s, 0.65 x the profile's 60.0 GB/s (derived "
                            "from 1 thread: the profile has no 2-thread roof): more than 10 % off"),
              std::string::npos)
        << lines[0];
}

TEST(DramCheck, TheNoteSaysWhetherTheHostMovedBeyondTheTolerance) {
    const RoofCheck same = dram_check("triad", 2, 60e9, 57e9), moved = dram_check("triad", 2, 60e9, 35e9);
    EXPECT_FALSE(outside_tolerance(same));
    EXPECT_TRUE(outside_tolerance(moved));
    EXPECT_TRUE(outside_tolerance(dram_check("read", 1, 30e9, 34e9))) << "above counts too";
    EXPECT_EQ(describe_roof_checks({same}),
              std::vector<std::string>{
                  "DRAM bandwidth measured again after the run: 2 threads triad 57.0 GB/s, 0.95 x "
                  "the profile's 60.0 GB/s: within 10 % of the profile"});
    const auto lines = describe_roof_checks({dram_check("triad", 1, 30e9, 29e9), moved});
    ASSERT_EQ(lines.size(), 1u);
    const std::string& m = lines[0];
    EXPECT_NE(m.find("1 thread triad 29.0 GB/s, 0.97 x the profile's 30.0 GB/s; 2 threads triad "
                     "35.0 GB/s, 0.58 x"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find(": more than 10 % off"), std::string::npos) << m;
}

// A host that toggles between two bandwidths within tenths of a second: the check's best look
// at the profile, its slowest far below. That is outside the tolerance (a program beside it
// may have streamed at either) and the note says so; a slowest look within it is not.
TEST(DramCheck, ASlowLookWithinTheCheckIsOutsideTheTolerance) {
    const RoofCheck steady = dram_check("read", 2, 70e9, 68e9, 64e9);
    const RoofCheck toggling = dram_check("read", 2, 70e9, 68e9, 37e9);
    EXPECT_FALSE(moved_within(steady));
    EXPECT_FALSE(outside_tolerance(steady));
    EXPECT_TRUE(moved_within(toggling));
    EXPECT_TRUE(outside_tolerance(toggling));
    EXPECT_EQ(describe_roof_checks({steady}),
              std::vector<std::string>{
                  "DRAM bandwidth measured again after the run: 2 threads read 68.0 GB/s, 0.97 x "
                  "the profile's 70.0 GB/s: within 10 % of the profile"});
    const auto lines = describe_roof_checks({toggling});
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("2 threads read 68.0 GB/s, 0.97 x the profile's 70.0 GB/s (its slowest "
                            "look 37.0 GB/s: the host moved during the check): more than 10 % off"),
              std::string::npos)
        << lines[0];
}

// A best look just inside the tolerance and a slowest just outside it: off, and the note names
// the slowest look as the reason (the best alone would not be).
TEST(DramCheck, TheNoteNamesASlowestLookThatMakesTheCheckOff) {
    const RoofCheck c = dram_check("read", 2, 70e9, 66.5e9, 60.9e9);  // 0.95 and 0.87 of it
    EXPECT_FALSE(moved_within(c));
    EXPECT_TRUE(outside_tolerance(c));
    const auto lines = describe_roof_checks({c});
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("(its slowest look 60.9 GB/s: the host moved during the check): more "
                            "than 10 % off"),
              std::string::npos)
        << lines[0];
}

// After a run, each DRAM roof a verdict used is checked with the kernel it was judged against:
// the synthetic profile has a 1-thread DRAM roof for triad only, and read's only at 4 threads.
TEST(DramCheck, ARunChecksTheKernelItsVerdictsWereJudgedAgainst) {
    auto judged_against = [](const char* kernel) {
        RunRecord record;
        record.machine_profile = synthetic();
        RoofComparison c;
        c.kind = RoofKind::bandwidth;
        c.roof = c.level = "DRAM";
        c.kernel = kernel;
        c.threads = 1;
        c.fraction = 0.8;
        RegionVerdict v;
        v.path = "stream";
        v.diagnosis.roofs = {c};
        record.region_diagnoses = {v};
        check_roofs(record);
        return record.roof_checks;
    };
    const auto triad = judged_against("triad");
    ASSERT_EQ(triad.size(), 1u);
    EXPECT_EQ(triad[0].kernel, "triad");
    EXPECT_DOUBLE_EQ(triad[0].profile_per_s, 30e9);
    EXPECT_FALSE(triad[0].derived());

    // read at 1 thread: derived from its 4-thread roof (at most what more threads reached).
    const auto read = judged_against("read");
    ASSERT_EQ(read.size(), 1u);
    EXPECT_EQ(read[0].kernel, "read");
    EXPECT_DOUBLE_EQ(read[0].profile_per_s, 110e9);
    EXPECT_EQ(read[0].profile_threads, 4);
}

// Measured: the slowest look is kept, and it is no faster than the best.
TEST(DramCheck, KeepsItsSlowestLook) {
    const auto checks = measure_dram_now(synthetic(), {1});
    ASSERT_EQ(checks.size(), 1u);
    ASSERT_TRUE(checks[0].slowest_per_s);
    EXPECT_GT(*checks[0].slowest_per_s, 0);
    EXPECT_LE(*checks[0].slowest_per_s, checks[0].now_per_s);
}

// A compute roof checked again: only roofs the profile has at that thread count, measured
// with the roof's own kernel (positive, finite; never a speed asserted).
TEST(ComputeCheck, MeasuresTheProfilesRoofsWithTheirOwnKernel) {
    MachineProfile p = synthetic();
    const kernels::ComputeKernel* k = nullptr;
    for (const auto& c : kernels::compute_kernels())
        if (c.supported(kernels::cpu_features()) && !c.needs_amx_permission) k = &c;
    ASSERT_TRUE(k) << "no compute roof kernel runs on this CPU";
    ComputeRoof roof;
    roof.name = std::string(k->roof);
    roof.threads = 1;
    roof.ops_per_s.median = 1e11;
    p.compute_roofs = {roof};
    const auto checks = measure_compute_now(p, {{roof.name, 1}, {roof.name, 2}, {"no_such_roof", 1}});
    ASSERT_EQ(checks.size(), 1u);
    EXPECT_EQ(checks[0].kind, RoofKind::compute);
    EXPECT_EQ(checks[0].kernel, roof.name);
    EXPECT_DOUBLE_EQ(checks[0].profile_per_s, 1e11);
    EXPECT_GT(checks[0].now_per_s, 1e6);
    EXPECT_LT(checks[0].now_per_s, 1e15);
}

// Each kind of roof gets its own line, in its own unit, and says what the host may share.
TEST(ComputeCheck, TheNoteNamesTheRoofAndWhatMayShareTheCores) {
    const RoofCheck fma = compute_check("fp32_fma256", 2, 320e9, 180e9);
    const RoofCheck dram = dram_check("triad", 2, 60e9, 58e9);
    const auto lines = describe_roof_checks({fma, dram});
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0].rfind("DRAM bandwidth measured again", 0), 0u) << lines[0];
    EXPECT_EQ(lines[1],
              "Compute roofs measured again after the run: 2 threads fp32_fma256 180.0 Gop/s, "
              "0.56 x the profile's 320.0 Gop/s: more than 10 % off (cores shared with work "
              "ceiling cannot see on this host, such as another tenant on an SMT sibling): "
              "compute fractions may be off by as much; judge the distribution with --repeat");
}

// Records keep the unit in the field names and read back either kind.
TEST(ComputeCheck, RoundTripsThroughTheRecordWithTheUnitInItsFieldNames) {
    const RoofCheck fma = compute_check("fp32_fma256", 2, 320e9, 180e9);
    const nlohmann::json j = fma;
    EXPECT_TRUE(j.contains("now_ops_per_s")) << j.dump();
    EXPECT_FALSE(j.contains("now_bytes_per_s")) << j.dump();
    const auto back = j.get<RoofCheck>();
    EXPECT_EQ(back.kind, RoofKind::compute);
    EXPECT_DOUBLE_EQ(back.now_per_s, 180e9);
    EXPECT_FALSE(back.slowest_per_s);
    const nlohmann::json t = dram_check("read", 2, 70e9, 68e9, 37e9);
    EXPECT_DOUBLE_EQ(t.at("now_slowest_bytes_per_s").get<double>(), 37e9) << t.dump();
    EXPECT_DOUBLE_EQ(*t.get<RoofCheck>().slowest_per_s, 37e9);
    // A record written before compute checks existed: bandwidth, bytes/s.
    const auto old = nlohmann::json::parse(
        R"({"level":"DRAM","kernel":"triad","threads":1,"profile_bytes_per_s":3e10,"now_bytes_per_s":2.9e10})")
                         .get<RoofCheck>();
    EXPECT_EQ(old.kind, RoofKind::bandwidth);
    EXPECT_DOUBLE_EQ(old.profile_per_s, 3e10);
}

// A suite's case is judged against the roofs measured in turns with it where their looks
// agreed, only when the check was taken against the profile the record is judged with, and
// the finding says which roof every fraction is of; where the looks disagreed the best one
// judges too, and a finding says the fraction may be higher than shown. A run's checks (beside no
// case) leave its fraction as it is where it did not run above the roof (RunRoofChecks).
TEST(RoofsBeside, ASuiteCaseIsJudgedAgainstTheRoofMeasuredInTurnsWithIt) {
    RunRecord rec;
    rec.kind = RecordKind::suite;
    rec.machine_profile = synthetic();  // fp32_fma512 at 1 thread: 35.9 Gop/s
    // 18 Gop/s: about half the profile's roof.
    const double ops = 2.0 * 2048 * 2048 * 2048;
    const RecordedRegion r = timed_region("gemm/fp32/optimized/2048x2048x2048", RegionKind::kernel,
                                          ops, 3.0 * 4 * 2048 * 2048, ops / 18e9, 1);
    rec.regions = {r};
    const auto judged = [&](std::vector<RoofCheck> checks) {
        rec.roof_checks = std::move(checks);
        judge::judge_record(rec);
        EXPECT_EQ(rec.region_diagnoses.size(), 1u);
        const Diagnosis& d = rec.region_diagnoses.at(0).diagnosis;
        for (const auto& c : d.roofs)
            if (c.kind == RoofKind::compute) return std::pair{c.fraction.value_or(-1), d};
        ADD_FAILURE() << "no compute comparison";
        return std::pair{-1.0, d};
    };
    const auto has = [](const Diagnosis& d, FindingKind k, const std::string& text) {
        return std::any_of(d.findings.begin(), d.findings.end(), [&](const Finding& f) {
            return f.kind == k && f.detail.find(text) != std::string::npos;
        });
    };
    const auto beside = [&](double now, double slowest, double profile = 35.9e9) {
        RoofCheck c{"", "fp32_fma512", 1, profile, now, RoofKind::compute, slowest, 1, {}};
        c.beside = {r.path};
        return c;
    };

    const auto [alone, d0] = judged({});
    EXPECT_NEAR(alone, 18 / 35.9, 1e-6);
    EXPECT_NE(d0.bound, Bound::compute);

    // The host gave 20 Gop/s in steady looks: 0.9 of that roof, compute bound.
    const auto [steady, d1] = judged({beside(20e9, 19e9)});
    EXPECT_NEAR(steady, 18.0 / 20, 1e-6);
    EXPECT_EQ(d1.bound, Bound::compute);
    EXPECT_TRUE(has(d1, FindingKind::assumption,
                    "judged against the roofs measured in turns with it: fp32_fma512 (1 thread) "
                    "20.0 Gop/s, 0.56 x the profile's"))
        << d1.findings.front().detail;

    // Looks 20 and 12 Gop/s: the host moved while they were taken. The best look still
    // judges (the profile's was taken at another moment), and a finding says the case's
    // fraction may be higher than shown.
    const auto [moved, d2] = judged({beside(20e9, 12e9)});
    EXPECT_NEAR(moved, 18.0 / 20, 1e-6);
    EXPECT_TRUE(has(d2, FindingKind::contention, "fp32_fma512 (1 thread) between 0.33 and 0.56"));
    EXPECT_TRUE(has(d2, FindingKind::contention, "judged against the best look"));

    // Taken against another profile's roof (re-judged with `report --profile`): not this one.
    const auto [other, d3] = judged({beside(20e9, 19e9, 50e9)});
    EXPECT_NEAR(other, 18 / 35.9, 1e-6);

    // Beside another case only.
    auto elsewhere = beside(20e9, 19e9);
    elsewhere.beside = {"gemm/fp32/library/2048x2048x2048"};
    EXPECT_NEAR(judged({elsewhere}).first, 18 / 35.9, 1e-6);

    // A run record judges its regions against the profile whatever its checks say.
    rec.kind = RecordKind::run;
    rec.regions.front().kind = RegionKind::kernel;
    EXPECT_NEAR(judged({beside(20e9, 19e9)}).first, 18 / 35.9, 1e-6);
}

// A run is judged against the profile; the roofs measured right after it are evidence. Where
// they moved beyond the tolerance in agreeing looks and the region reads another bound against
// them, it says so (a decode step at half the profile's DRAM roof, latency bound, at 68 % of
// what the host gave right after); within the tolerance, or with looks that disagree, nothing.
TEST(RunRoofChecks, AVerdictTheHostsShareMovesAcrossIsSaid) {
    RunRecord rec;
    rec.kind = RecordKind::run;
    rec.machine_profile = synthetic();
    // 15 GB/s: half the 1-thread triad roof.
    RecordedRegion r = timed_region("decode", RegionKind::range, 2.5e8, 1e9, 1e9 / 15e9, 1);
    r.instances = 1;
    r.busy_cores = 1.0;
    rec.regions = {r};
    const auto judged = [&](std::vector<RoofCheck> checks) {
        rec.roof_checks = std::move(checks);
        judge::judge_record(rec);
        return rec.region_diagnoses.at(0).diagnosis;
    };
    const auto said = [](const Diagnosis& d) {
        for (const auto& f : d.findings)
            if (f.kind == FindingKind::unstable &&
                f.detail.find("against the roofs measured right after the run") !=
                    std::string::npos)
                return f.detail;
        return std::string();
    };
    const Diagnosis alone = judged({});
    EXPECT_EQ(alone.bound, Bound::latency);
    EXPECT_EQ(said(alone), "");

    const Diagnosis moved = judged({dram_check("triad", 1, 30e9, 22e9, 21.5e9)});
    EXPECT_EQ(moved.bound, Bound::latency) << "the verdict stays the profile's";
    EXPECT_NE(said(moved).find("DRAM triad (1 thread) 22.0 GB/s, 0.73 x the profile's"),
              std::string::npos)
        << said(moved);
    EXPECT_NE(said(moved).find("it reads bandwidth bound (fp32_fma512 10 %, DRAM 68 %)"),
              std::string::npos)
        << said(moved);

    EXPECT_EQ(said(judged({dram_check("triad", 1, 30e9, 28e9, 27.5e9)})), "") << "within 10 %";
    EXPECT_EQ(said(judged({dram_check("triad", 1, 30e9, 22e9, 15e9)})), "")
        << "its looks disagree: no figure to read it against";

    // On 4 busy cores at 130 GB/s: above the profile's 4-thread DRAM roofs (read 110, triad
    // 125.1) while the host gave 1.36 x their read roof right after: the host gave more than
    // the profile says, and the run showed it; judged against the check (read 150 GB/s).
    rec.regions.front().busy_cores = 4.0;
    rec.regions.front().measurement.durations_s = {1e9 / 130e9};
    rec.regions.front().measurement.duration_s =
        summarize(rec.regions.front().measurement.durations_s);
    EXPECT_EQ(judged({}).verdict, Verdict::above_roof);
    const Diagnosis faster = judged({dram_check("read", 4, 110e9, 150e9, 145e9)});
    EXPECT_EQ(faster.bound, Bound::bandwidth);
    double dram = -1;
    for (const auto& c : faster.roofs)
        if (c.kind == RoofKind::bandwidth) dram = c.fraction.value_or(-1);
    EXPECT_NEAR(dram, 130 / 150.0, 1e-6);
    EXPECT_TRUE(std::any_of(faster.findings.begin(), faster.findings.end(), [](const Finding& f) {
        return f.detail.find("it ran above the profile's, so the host gave more") !=
               std::string::npos;
    }));
    EXPECT_NE(faster.findings.front().detail.find("cores busy"), std::string::npos);
    EXPECT_EQ(judged({dram_check("read", 4, 110e9, 150e9, 110e9)}).verdict, Verdict::above_roof)
        << "looks that disagree replace nothing";
}

// DRAM: the suite looks at one stream kernel's roof (the one the case's first run was judged
// against), and the level's other kernels at those threads get the same share, so that the
// kernel the final rate picks is judged against what the host gave too. The synthetic
// profile's 4-thread DRAM roofs: read 110 GB/s, triad 125.1.
TEST(RoofsBeside, TheOtherDramKernelsGetTheShareOfTheOneLookedAt) {
    RunRecord rec;
    rec.kind = RecordKind::suite;
    rec.machine_profile = synthetic();
    const double bytes = 4.0 * 16384 * 16384;  // 50 GB/s
    RecordedRegion r = timed_region("gemv/fp32/optimized/16384x16384", RegionKind::kernel,
                                    2.0 * 16384 * 16384, bytes, bytes / 50e9, 4);
    r.measurement.work->working_set_bytes = 4 * bytes;  // beyond every cache level
    rec.regions = {r};
    RoofCheck triad{"DRAM", "triad", 4, 125.1e9, 62.55e9, RoofKind::bandwidth, 60e9, 4, {}};
    triad.beside = {r.path};
    rec.roof_checks = {triad};
    judge::judge_record(rec);
    ASSERT_EQ(rec.region_diagnoses.size(), 1u);
    const Diagnosis& d = rec.region_diagnoses[0].diagnosis;
    const RoofComparison* dram = nullptr;
    for (const auto& c : d.roofs)
        if (c.kind == RoofKind::bandwidth && c.level == "DRAM") dram = &c;
    ASSERT_TRUE(dram);
    // Half of each: read 55 GB/s, triad 62.55; 50 GB/s is judged against read's half.
    EXPECT_EQ(dram->kernel, "read");
    ASSERT_TRUE(dram->fraction);
    EXPECT_NEAR(*dram->fraction, 50.0 / 55, 1e-6);
    ASSERT_FALSE(d.findings.empty());
    EXPECT_NE(
        d.findings.front().detail.find("DRAM triad (4 threads) 62.5 GB/s, 0.50 x the "
                                       "profile's (the other DRAM kernels' roofs scaled alike)"),
        std::string::npos)
        << d.findings.front().detail;
}

}  // namespace
}  // namespace ceiling::measure
