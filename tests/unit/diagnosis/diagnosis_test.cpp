// Diagnoses of measured work against the synthetic profile (fp32 FMA 143.7 GFLOP/s, DRAM
// 125.1 GB/s, L1 1.2 TB/s, bf16 AMX 1 TFLOP/s at 4 threads), and the sanity rules.
#include "diagnosis/diagnosis.hpp"

#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "diagnosis/json_support.hpp"
#include "tests/unit/diagnosis/diagnosis_fixtures.hpp"

namespace ceiling {
namespace {

using testing::dram_roof;
using testing::timed_work;

Work work(double ops, double bytes, double ws, Precision p = Precision::fp32,
          Engine e = Engine::vector) {
    Work w;
    w.precision = p;
    w.engine = e;
    w.ops = ops;
    w.compulsory_bytes = bytes;
    w.working_set_bytes = ws;
    return w;
}

bool has_finding(const Diagnosis& d, FindingKind k) {
    return std::any_of(d.findings.begin(), d.findings.end(),
                       [&](const Finding& f) { return f.kind == k; });
}

const RoofComparison& roof(const Diagnosis& d, RoofKind k) {
    return *std::find_if(d.roofs.begin(), d.roofs.end(),
                         [&](const RoofComparison& c) { return c.kind == k; });
}

class DiagnoseKernel : public ::testing::Test {
  protected:
    MachineProfile profile = testing::synthetic_profile();
    Thresholds t;
};

// Twelve calls of the same matmul whose durations a competing host spread (54-127 ms): where
// the judge measured that competition, they are judged from the unhindered quarter, and the
// verdict holds whichever way the neighbours moved; without it, the median as before.
TEST_F(DiagnoseKernel, InstancesSpreadByACompetingHostAreJudgedFromTheUnhinderedOnes) {
    // Compute-heavy, little memory: 80 % of the 143.7 GFLOP/s roof at 67.75 ms.
    const Work w = work(0.8 * 143.7e9 * 0.06775, 5e7, 5e7);
    auto calls = [&](std::vector<double> ms, bool competed) {
        Measurement m = testing::timed_work(w, 0.1);
        m.durations_s.clear();
        for (double x : ms) m.durations_s.push_back(x * 1e-3);
        m.duration_s = summarize(m.durations_s);
        if (competed) m.host_interference = "other work kept 1.00 cores busy";
        return diagnose_kernel(profile, m, t);
    };
    const std::vector<double> noisy = {54, 58, 61, 70, 88, 92, 95, 101, 110, 118, 122, 127};
    const std::vector<double> calm = {71, 72, 74, 75, 77, 79, 80, 82, 84, 86, 88, 89};
    const Diagnosis a = calls(noisy, true), b = calls(calm, true), median = calls(noisy, false);
    ASSERT_TRUE(a.bound && b.bound && median.bound);
    EXPECT_EQ(*a.bound, Bound::compute) << a.diagnosis;
    EXPECT_EQ(*b.bound, Bound::compute) << b.diagnosis;
    EXPECT_NE(*median.bound, Bound::compute) << "by the median the host's calls decide";
    const double unhindered = *roof(a, RoofKind::compute).fraction;
    const double by_median = *roof(median, RoofKind::compute).fraction;
    EXPECT_NEAR(unhindered / by_median, 93.5 / 67.75, 0.01);  // median 93.5 ms, p25 67.75 ms
    bool said = false;
    for (const auto& f : a.findings)
        said = said || (f.detail.find("judged at its unhindered instances") != std::string::npos &&
                        f.detail.find("other work kept 1.00 cores busy") != std::string::npos &&
                        f.detail.find("54.0 ms to 127.0 ms") != std::string::npos);
    std::string all;
    for (const auto& f : a.findings) all += f.detail + "\n";
    EXPECT_TRUE(said) << all;
    for (const auto& f : median.findings)
        EXPECT_EQ(f.detail.find("unhindered"), std::string::npos) << f.detail;
}

TEST_F(DiagnoseKernel, SaxpyNearTheDramRoofIsBandwidthBoundAndDone) {
    // 1e8 elements: 2e8 FLOP, 1.2e9 bytes, at 20 GFLOP/s -> 10 ms, 120 GB/s = 96% of 125.1.
    const Diagnosis d = diagnose_kernel(profile, timed_work(work(2e8, 1.2e9, 1.2e9), 0.01), t);
    ASSERT_TRUE(d.bound);
    EXPECT_EQ(*d.bound, Bound::bandwidth);
    EXPECT_EQ(d.verdict, Verdict::done);
    EXPECT_EQ(d.level, "DRAM");
    const auto& bw = roof(d, RoofKind::bandwidth);
    EXPECT_DOUBLE_EQ(*bw.achieved_per_s, 120e9);
    EXPECT_DOUBLE_EQ(*bw.roof_per_s, 125.1e9);
    EXPECT_NEAR(*bw.fraction, 0.959, 0.001);
    EXPECT_EQ(bw.source, Source::analytic);
    EXPECT_EQ(bw.level, "DRAM");
    EXPECT_NEAR(*d.attainable_ops_per_s / 1e9, 20.9, 0.05);
    EXPECT_EQ(d.first_move, first_move_for(decision_row(Bound::bandwidth), Evidence{}));
    ASSERT_FALSE(d.levers.empty());
    EXPECT_EQ(d.levers.back().lever, Lever::change_the_problem);
}

// A work's mix of loads and stores is unknown, and a store reads its line first (write-
// allocate): a stream with stores cannot reach the read kernel's roof. With DRAM at 150 GB/s
// for read and 100 for triad (4 threads), a stream at 70 GB/s is judged against the triad's
// roof (0.70: bandwidth bound), not the read's (0.47: it was called latency bound); one at
// 120, beyond the triad's, against the read's; one at 40 stays far from both.
TEST_F(DiagnoseKernel, DramRoofIsTheLowestKernelRoofTheWorkDoesNotExceed) {
    for (auto& b : profile.bandwidth_roofs)
        if (b.level == "DRAM" && b.threads == 4) b.bytes_per_s.median = b.kernel == "read" ? 150e9 : 100e9;
    auto judged = [&](double gb_per_s) {
        return diagnose_kernel(profile, timed_work(work(1e9, 1e10, 1e10), 10 / gb_per_s), t);
    };
    const Diagnosis stream = judged(70);
    ASSERT_TRUE(stream.bound);
    EXPECT_EQ(*stream.bound, Bound::bandwidth);
    const auto& bw = roof(stream, RoofKind::bandwidth);
    EXPECT_EQ(bw.kernel, "triad");
    EXPECT_DOUBLE_EQ(*bw.roof_per_s, 100e9);
    EXPECT_NEAR(*bw.fraction, 0.70, 1e-9);
    const auto f = std::find_if(stream.findings.begin(), stream.findings.end(), [](const Finding& x) {
        return x.detail.find("judged against the triad roof") != std::string::npos;
    });
    ASSERT_NE(f, stream.findings.end());
    EXPECT_NE(f->detail.find("the level's own, read, reaches 1.5e+11"), std::string::npos)
        << f->detail;

    const Diagnosis reads = judged(120);
    EXPECT_EQ(roof(reads, RoofKind::bandwidth).kernel, "read");
    EXPECT_NEAR(*roof(reads, RoofKind::bandwidth).fraction, 0.80, 1e-9);
    EXPECT_EQ(*reads.bound, Bound::bandwidth);

    const Diagnosis slow = judged(40);
    EXPECT_EQ(roof(slow, RoofKind::bandwidth).kernel, "triad");
    EXPECT_EQ(*slow.bound, Bound::latency);

    // A store-only kernel's roof (its explicit stores are half of what the bus moves) never
    // judges work, which reads its inputs.
    profile.bandwidth_roofs.push_back(dram_roof("write", 4, 50e9));
    EXPECT_EQ(roof(judged(40), RoofKind::bandwidth).kernel, "triad");
}

// A work whose stores are known (Work::written_bytes) is judged against the stream kernel
// whose share of stores is nearest its own, whatever its rate: with DRAM at 150 GB/s for read
// and 100 for triad, a read-only stream at 70 GB/s (a decode GEMM's weights) is at 0.47 of
// read's roof, not 0.70 of triad's; a third of its bytes stored, at triad's 0.70; and a
// read-only stream beyond read's roof is above the roof, not judged against another kernel's.
// One with stores beyond its kernel's roof is judged as a work of unknown mix.
TEST_F(DiagnoseKernel, AWorkWithKnownStoresIsJudgedAgainstTheStreamOfItsMix) {
    for (auto& b : profile.bandwidth_roofs)
        if (b.level == "DRAM" && b.threads == 4)
            b.bytes_per_s.median = b.kernel == "read" ? 150e9 : 100e9;
    auto judged = [&](double gb_per_s, double written) {
        Work w = work(1e9, 1e10, 1e10);
        w.written_bytes = written;
        return diagnose_kernel(profile, timed_work(w, 10 / gb_per_s), t);
    };
    const Diagnosis reads = judged(70, 1e7);
    const auto& bw = roof(reads, RoofKind::bandwidth);
    EXPECT_EQ(bw.kernel, "read");
    EXPECT_NEAR(*bw.fraction, 70.0 / 150, 1e-9);
    EXPECT_EQ(*reads.bound, Bound::latency);

    const Diagnosis triad_like = judged(70, 1e10 / 3);
    EXPECT_EQ(roof(triad_like, RoofKind::bandwidth).kernel, "triad");
    EXPECT_NEAR(*roof(triad_like, RoofKind::bandwidth).fraction, 0.70, 1e-9);
    EXPECT_EQ(*triad_like.bound, Bound::bandwidth);
    const auto f =
        std::find_if(triad_like.findings.begin(), triad_like.findings.end(), [](const Finding& x) {
            return x.detail.find("judged against the triad roof") != std::string::npos;
        });
    ASSERT_NE(f, triad_like.findings.end());
    EXPECT_NE(f->detail.find("the stream whose share of stores (33%) is nearest the work's (33%"),
              std::string::npos)
        << f->detail;

    const Diagnosis above = judged(200, 0);
    EXPECT_EQ(roof(above, RoofKind::bandwidth).kernel, "read");
    EXPECT_EQ(roof(above, RoofKind::bandwidth).verdict, Verdict::above_roof);

    // Beyond its own kernel's roof past the noise, a work with stores skipped the read for
    // ownership (non-temporal stores): the lowest roof it does not exceed judges it; within
    // the noise its own still does.
    const Diagnosis nt = judged(140, 1e10 / 3);
    EXPECT_EQ(roof(nt, RoofKind::bandwidth).kernel, "read");
    EXPECT_NEAR(*roof(nt, RoofKind::bandwidth).fraction, 140.0 / 150, 1e-9);
    EXPECT_TRUE(std::any_of(nt.findings.begin(), nt.findings.end(), [](const Finding& x) {
        return x.detail.find("beyond the triad roof of its mix of stores") != std::string::npos;
    }));
    EXPECT_EQ(roof(judged(104, 1e10 / 3), RoofKind::bandwidth).kernel, "triad");

    // An update in place (a ReLU on its own array: half its bytes stored) has no read for
    // ownership: past copy's roof, which holds one, it is judged against update's (1.75 x
    // copy's on one thread of a Zen 4 VM; before the update kernel it was above every roof).
    profile.bandwidth_roofs.push_back(dram_roof("copy", 4, 90e9));
    profile.bandwidth_roofs.push_back(dram_roof("update", 4, 170e9));
    const Diagnosis relu = judged(160, 1e10 / 2);
    EXPECT_EQ(roof(relu, RoofKind::bandwidth).kernel, "update");
    EXPECT_NEAR(*roof(relu, RoofKind::bandwidth).fraction, 160.0 / 170, 1e-9);
    EXPECT_EQ(*relu.bound, Bound::bandwidth);
    EXPECT_EQ(roof(judged(80, 1e10 / 2), RoofKind::bandwidth).kernel, "copy")
        << "within copy's roof a half-stored work is judged against copy's";

    // Written with the work; absent in records from before, and null when unknown.
    Work w = work(1, 2, 3);
    w.written_bytes = 1;
    EXPECT_EQ(nlohmann::json(w).get<Work>().written_bytes, 1.0);
    nlohmann::json old = nlohmann::json(work(1, 2, 3));
    EXPECT_TRUE(old.at("written_bytes").is_null());
    old.erase("written_bytes");
    EXPECT_FALSE(old.get<Work>().written_bytes);
}

TEST_F(DiagnoseKernel, PolynomialNearTheFmaRoofIsComputeBound) {
    const Diagnosis d = diagnose_kernel(profile, timed_work(work(64e8, 4e8, 4e8), 64e8 / 120e9), t);
    ASSERT_TRUE(d.bound);
    EXPECT_EQ(*d.bound, Bound::compute);
    const auto& c = roof(d, RoofKind::compute);
    EXPECT_EQ(c.roof, "fp32_fma512");
    EXPECT_EQ(c.precision, Precision::fp32);
    EXPECT_NEAR(*c.fraction, 120 / 143.7, 1e-9);
    EXPECT_EQ(d.verdict, Verdict::done);
    EXPECT_DOUBLE_EQ(*d.intensity_ops_per_byte, 16);
}

TEST_F(DiagnoseKernel, TinyKernelFarFromBothRoofsIsLatencyBoundAndFar) {
    // 12 KiB in L1, 10 us for 2 kFLOP and 12 kB: 0.1% of L1 bandwidth.
    const Diagnosis d = diagnose_kernel(profile, timed_work(work(2e3, 12e3, 12e3), 1e-5), t);
    ASSERT_TRUE(d.bound);
    EXPECT_EQ(*d.bound, Bound::latency);
    EXPECT_EQ(d.level, "L1");
    EXPECT_EQ(d.verdict, Verdict::far);
}

TEST_F(DiagnoseKernel, HalfwayIsLatencyBoundButGood) {
    // 62.55 GB/s = 50% of DRAM: not near (60%), not far (10%).
    const Diagnosis d =
        diagnose_kernel(profile, timed_work(work(2e8, 1.2e9, 1.2e9), 1.2e9 / 62.55e9), t);
    EXPECT_EQ(*d.bound, Bound::latency);
    EXPECT_EQ(d.verdict, Verdict::good);
}

// A library's op (a PyTorch op) below both roofs keeps the ridge's finding but not its
// moves, which change the code (chains, vectors, tiles, loads in flight): its move is the
// table's as its evidence licenses it (no dependency stalls).
TEST_F(DiagnoseKernel, ALibrarysOpGetsTheRidgesFindingButNotItsCodeMoves) {
    Evidence library;
    library.library_op = true;
    const Measurement m = timed_work(work(1e7, 1e9, 1e9), 1e9 / (0.02 * 110e9));
    const Diagnosis own = diagnose_kernel(profile, m, t);
    const Diagnosis lib = diagnose_kernel(profile, m, t, std::nullopt, library);
    ASSERT_EQ(own.bound, Bound::latency);
    ASSERT_EQ(lib.bound, Bound::latency);
    EXPECT_EQ(own.first_move.rfind(std::string(left_of_ridge_move), 0), 0u) << own.first_move;
    EXPECT_EQ(lib.first_move, "a faster kernel for the op and its shapes (another backend or memory layout)");
    bool finding = false;
    for (const auto& f : lib.findings) finding = finding || f.detail.find("of the ridge") != std::string::npos;
    EXPECT_TRUE(finding);
}

// Latency bound says which side of the ridge the work lies on, with the figures: right of it
// the gap is in the core, left of it in memory latency. Other bounds say nothing of it.
TEST_F(DiagnoseKernel, LatencyBoundSaysWhichSideOfTheRidgeItLiesOn) {
    const auto side = [](const Diagnosis& d) -> std::string {
        for (const auto& f : d.findings)
            if (f.detail.find("of the ridge") != std::string::npos) return f.detail;
        return "";
    };
    // 4 threads: 143.7 Gop/s FMA over the fixture's 110 GB/s DRAM, a ridge of 1.31 op/B. A
    // naive matmul: 100 op/B at a quarter of the compute roof.
    const Diagnosis core =
        diagnose_kernel(profile, timed_work(work(1e10, 1e8, 1e8), 1e10 / (0.25 * 143.7e9)), t);
    ASSERT_TRUE(core.bound);
    EXPECT_EQ(*core.bound, Bound::latency);
    EXPECT_NE(side(core).find("its intensity, 100 op/B, lies right of the ridge (1.31 op/B at "
                              "DRAM): its roof is the compute roof (25% of it)"),
              std::string::npos)
        << side(core);
    // A chase: 0.01 op/B at 2 % of DRAM bandwidth.
    const Diagnosis chase =
        diagnose_kernel(profile, timed_work(work(1e7, 1e9, 1e9), 1e9 / (0.02 * 110e9)), t);
    ASSERT_TRUE(chase.bound);
    EXPECT_EQ(*chase.bound, Bound::latency);
    EXPECT_NE(side(chase).find("lies left of the ridge"), std::string::npos) << side(chase);
    EXPECT_NE(side(chase).find("memory latency left exposed"), std::string::npos) << side(chase);
    const Diagnosis bound = diagnose_kernel(profile, timed_work(work(2e8, 1.2e9, 1.2e9), 0.01), t);
    EXPECT_EQ(side(bound), "");
    // The first move starts with the side, the table's move after it; other bounds keep the
    // table's alone.
    const std::string table(first_move_for(decision_row(Bound::latency), Evidence{}));
    EXPECT_EQ(core.first_move, std::string(right_of_ridge_move) + table);
    EXPECT_EQ(chase.first_move, std::string(left_of_ridge_move) + table);
    EXPECT_EQ(bound.first_move, first_move_for(decision_row(*bound.bound), Evidence{}));
    // Left of the ridge in L1 (16 KB at 2 % of its 1.2 TB/s) no miss waits: the loads and
    // stores themselves, not more in flight.
    const Diagnosis l1 =
        diagnose_kernel(profile, timed_work(work(1e7, 1e9, 16e3), 1e9 / (0.02 * 1.2e12)), t);
    ASSERT_TRUE(l1.bound);
    EXPECT_EQ(*l1.bound, Bound::latency);
    EXPECT_NE(side(l1).find("no miss waits"), std::string::npos) << side(l1);
    // One core (busy cores unknown here): no two cores stored at once, so no false sharing to
    // name (diagnosis/premises.hpp); two cores busy: named.
    EXPECT_EQ(l1.first_move, std::string(left_of_ridge_l1_one_core_move) + table);
    const Diagnosis l1_two = diagnose_kernel(
        profile, timed_work(work(1e7, 1e9, 16e3), 1e9 / (0.02 * 1.2e12)), t, 2.0);
    ASSERT_TRUE(l1_two.bound);
    EXPECT_NE(side(l1_two).find("lines written by two cores at once"), std::string::npos) << side(l1_two);
    EXPECT_EQ(l1_two.first_move.rfind(std::string(left_of_ridge_l1_move), 0), 0u) << l1_two.first_move;
    EXPECT_EQ(side(l1).find("two cores"), std::string::npos) << side(l1);
    // Operations with no bytes (work in registers) lie right of every ridge.
    const Diagnosis registers =
        diagnose_kernel(profile, timed_work(work(1e10, 0, 0), 1e10 / (0.05 * 143.7e9)), t);
    ASSERT_TRUE(registers.bound);
    EXPECT_EQ(*registers.bound, Bound::latency);
    EXPECT_NE(side(registers).find("no bytes declared, its intensity is unbounded: it lies right "
                                   "of the ridge (1.31 op/B at "),
              std::string::npos)
        << side(registers);
    EXPECT_EQ(registers.first_move, std::string(right_of_ridge_move) + table);
}

TEST_F(DiagnoseKernel, ThresholdEdgesThroughMeasuredRates) {
    struct Case {
        double fraction;
        Bound bound;
        Verdict verdict;
    };
    // A 100 GB/s DRAM roof and 1 s runs keep every fraction exact (bytes / 1 / 1e11 is one
    // correctly rounded division of integers); the compute fraction stays tiny.
    for (auto& b : profile.bandwidth_roofs)
        if (b.level == "DRAM") b.bytes_per_s.median = 100e9;
    const Case cases[] = {
        {0.5999, Bound::latency, Verdict::good},   {0.60, Bound::bandwidth, Verdict::good},
        {0.6001, Bound::bandwidth, Verdict::good}, {0.6999, Bound::bandwidth, Verdict::good},
        {0.70, Bound::bandwidth, Verdict::done},   {0.7001, Bound::bandwidth, Verdict::done},
        {0.0999, Bound::latency, Verdict::far},    {0.10, Bound::latency, Verdict::good},
    };
    for (const auto& c : cases) {
        const double bytes = c.fraction * 100e9;
        const Diagnosis d = diagnose_kernel(profile, timed_work(work(1, bytes, 8e9), 1.0), t);
        ASSERT_TRUE(d.bound) << c.fraction;
        EXPECT_EQ(*roof(d, RoofKind::bandwidth).fraction, c.fraction);
        EXPECT_EQ(*d.bound, c.bound) << c.fraction;
        EXPECT_EQ(d.verdict, c.verdict) << c.fraction;
    }
}

TEST_F(DiagnoseKernel, AmxGemmIsComparedWithTheMatrixRoof) {
    // A bf16 GEMM at 800 GFLOP/s on AMX tiles: 80% of the AMX roof...
    const Work gemm = work(2.0 * 2048 * 2048 * 2048, 3.0 * 2048 * 2048 * 2, 3.0 * 2048 * 2048 * 2,
                           Precision::bf16, Engine::matrix);
    const double seconds = gemm.ops / 800e9;
    const Diagnosis d = diagnose_kernel(profile, timed_work(gemm, seconds), t);
    EXPECT_EQ(roof(d, RoofKind::compute).roof, "bf16_amx");
    EXPECT_NEAR(*roof(d, RoofKind::compute).fraction, 0.8, 1e-9);
    EXPECT_EQ(*d.bound, Bound::compute);
    EXPECT_EQ(d.verdict, Verdict::done);
    EXPECT_FALSE(has_finding(d, FindingKind::above_roof));
}

TEST_F(DiagnoseKernel, AboveTheRoofIsAMeasurementProblemNotAPercentage) {
    // ...mislabelled as vector work it would read 278% of the bf16 dot-product roof.
    Work gemm = work(2.0 * 2048 * 2048 * 2048, 3.0 * 2048 * 2048 * 2, 3.0 * 2048 * 2048 * 2,
                     Precision::bf16, Engine::vector);
    const Diagnosis d = diagnose_kernel(profile, timed_work(gemm, gemm.ops / 800e9), t);
    EXPECT_EQ(d.verdict, Verdict::above_roof);
    EXPECT_EQ(roof(d, RoofKind::compute).verdict, Verdict::above_roof);
    EXPECT_TRUE(has_finding(d, FindingKind::above_roof));
    // The invalid comparison cannot make it "compute bound"; the bandwidth fraction is tiny and
    // the compute one untrustworthy, so the bound is unknown rather than invented.
    EXPECT_FALSE(d.bound);
    const auto f = std::find_if(d.findings.begin(), d.findings.end(),
                                [](const Finding& x) { return x.kind == FindingKind::above_roof; });
    // Declared work is the likeliest cause, and the one to check first: its precision here.
    EXPECT_NE(f->detail.find("another precision or engine"), std::string::npos) << f->detail;
    EXPECT_NE(d.observation.find("above the compute roof"), std::string::npos) << d.observation;
}

TEST_F(DiagnoseKernel, JustAboveTheRoofWithinNoiseIsDone) {
    const double bytes = 1.2e9;
    const Diagnosis d =
        diagnose_kernel(profile, timed_work(work(1, bytes, bytes), bytes / (1.03 * 125.1e9)), t);
    EXPECT_EQ(d.verdict, Verdict::done);
    EXPECT_EQ(*d.bound, Bound::bandwidth);
    EXPECT_FALSE(has_finding(d, FindingKind::above_roof));
}

TEST_F(DiagnoseKernel, MissingCounterIsUnknownNeverZero) {
    Measurement m;
    m.name = "wrapped";
    m.threads = 4;
    m.durations_s = {0.01, 0.01, 0.01};
    m.duration_s = summarize(m.durations_s);
    m.measured_ops = 0.05 * 143.7e9 * 0.01;  // 5% of the FMA roof, counted by the PMU
    m.measured_ops_source = Source::pmu;
    const Diagnosis d = diagnose_kernel(profile, m, t);
    const auto& bw = roof(d, RoofKind::bandwidth);
    EXPECT_FALSE(bw.achieved_per_s);
    EXPECT_FALSE(bw.fraction);
    EXPECT_EQ(bw.verdict, Verdict::unknown);
    EXPECT_TRUE(has_finding(d, FindingKind::unknown_counter));
    EXPECT_EQ(roof(d, RoofKind::compute).source, Source::pmu);
    // 5% of the compute roof with bytes unknown could be bandwidth bound: not "latency".
    EXPECT_FALSE(d.bound);
    EXPECT_EQ(d.diagnosis, "unknown");
    const nlohmann::json j = d;
    EXPECT_TRUE(j.at("roofs").at(1).at("achieved_bytes_per_s").is_null());
    EXPECT_TRUE(j.at("bound").is_null());

    // Near the compute roof the missing bytes do not matter.
    m.measured_ops = 0.9 * 143.7e9 * 0.01;
    const Diagnosis near = diagnose_kernel(profile, m, t);
    EXPECT_EQ(near.bound, Bound::compute);
}

TEST_F(DiagnoseKernel, NoTimingMeansEveryRateUnknown) {
    Measurement m;
    m.name = "untimed";
    m.work = work(2e8, 1.2e9, 1.2e9);
    const Diagnosis d = diagnose_kernel(profile, m, t);
    EXPECT_FALSE(d.bound);
    EXPECT_EQ(d.verdict, Verdict::unknown);
    for (const auto& c : d.roofs) EXPECT_FALSE(c.achieved_per_s);
}

TEST_F(DiagnoseKernel, UnstableDistributionIsFlaggedAndTheMedianUsed) {
    Measurement m = timed_work(work(2e8, 1.2e9, 1.2e9), 0.01);
    m.durations_s = {0.01, 0.01, 0.01, 0.01, 0.01, 0.012, 0.015, 0.02, 0.03, 0.05};
    m.duration_s = summarize(m.durations_s);
    const Diagnosis d = diagnose_kernel(profile, m, t);
    EXPECT_TRUE(has_finding(d, FindingKind::unstable));
    EXPECT_NEAR(*roof(d, RoofKind::bandwidth).achieved_per_s, 1.2e9 / m.duration_s.median, 1);
    // A steady one is not flagged.
    EXPECT_FALSE(has_finding(diagnose_kernel(profile, timed_work(work(2e8, 1.2e9, 1.2e9), 0.01), t),
                             FindingKind::unstable));
}

// A region whose instances differ in size (three small, one 100x larger) declares the mean
// work per instance, so its rate is the total work over the total time: the mean duration.
// The median (a small instance's time) against the mean work read 26x too fast.
TEST_F(DiagnoseKernel, InstancesOfDifferentSizesAreJudgedAtTotalWorkOverTotalTime) {
    Measurement m = timed_work(work(2.575e8, 1.03e9, 1.03e9), 0.01);
    m.durations_s = {0.01, 0.01, 0.01, 1.0};
    m.duration_s = summarize(m.durations_s);
    m.work_spread = 100.0;
    const Diagnosis d = diagnose_kernel(profile, m, t);
    EXPECT_NEAR(*roof(d, RoofKind::bandwidth).achieved_per_s, 1.03e9 / 0.2575, 1);
    EXPECT_TRUE(has_finding(d, FindingKind::assumption));
    EXPECT_FALSE(has_finding(d, FindingKind::unstable)) << "the spread is the sizes', not noise";
    // Sizes within 10 %: the median, and its spread is noise again.
    m.work_spread = 1.05;
    const Diagnosis same = diagnose_kernel(profile, m, t);
    EXPECT_NEAR(*roof(same, RoofKind::bandwidth).achieved_per_s, 1.03e9 / m.duration_s.median, 1);
    EXPECT_TRUE(has_finding(same, FindingKind::unstable));
}

TEST_F(DiagnoseKernel, MissingRoofIsSaid) {
    const Diagnosis d = diagnose_kernel(
        profile, timed_work(work(1e9, 1e6, 1e6, Precision::tf32, Engine::matrix), 0.01), t);
    EXPECT_TRUE(has_finding(d, FindingKind::no_roof));
    EXPECT_FALSE(roof(d, RoofKind::compute).roof_per_s);
}

TEST_F(DiagnoseKernel, RoofDerivedFromAnotherThreadCountIsSaid) {
    const Diagnosis d = diagnose_kernel(profile, timed_work(work(2e8, 1.2e9, 1.2e9), 0.01, 2), t);
    EXPECT_TRUE(has_finding(d, FindingKind::assumption));
    EXPECT_DOUBLE_EQ(*roof(d, RoofKind::compute).roof_per_s, 71.8e9);
}

TEST_F(DiagnoseKernel, JsonRoundTripWithUnitsInFieldNames) {
    const Diagnosis d = diagnose_kernel(profile, timed_work(work(2e8, 1.2e9, 1.2e9), 0.01), t);
    const nlohmann::json j = d;
    EXPECT_EQ(j.at("bound"), "bandwidth");
    EXPECT_EQ(j.at("verdict"), "done");
    EXPECT_TRUE(j.at("roofs").at(0).contains("achieved_ops_per_s"));
    EXPECT_TRUE(j.at("roofs").at(0).contains("roof_ops_per_s"));
    EXPECT_TRUE(j.at("roofs").at(1).contains("achieved_bytes_per_s"));
    EXPECT_EQ(j.at("roofs").at(1).at("source"), "analytic");
    EXPECT_EQ(j.at("levers").at(0).at("lever"), "quantisation");
    const Diagnosis back = j.get<Diagnosis>();
    EXPECT_EQ(nlohmann::json(back), j);
}

TEST(Conclude, HandBuiltEvidence) {
    Thresholds t;
    Diagnosis d;
    d.roofs.push_back(compare(
        RoofComparison{RoofKind::compute, "x", "", "", {}, {}, 1, 70.0, 100.0, {}, {}, {}}, t));
    d.roofs.push_back(compare(
        RoofComparison{
            RoofKind::bandwidth, "DRAM", "DRAM", "triad", {}, {}, 1, 5.0, 100.0, {}, {}, {}},
        t));
    conclude(d, t);
    EXPECT_EQ(d.bound, Bound::compute);
    EXPECT_EQ(d.verdict, Verdict::done);
    d.capacity = CapacityEvidence{95, 100, 0.95, "memory"};
    conclude(d, t);
    EXPECT_EQ(d.bound, Bound::capacity);
    ASSERT_EQ(d.also_held.size(), 1u);
    EXPECT_EQ(d.also_held[0], Bound::compute);
    // An absent roof leaves the comparison unknown.
    const auto c =
        compare(RoofComparison{RoofKind::compute, "x", "", "", {}, {}, 1, 70.0, {}, {}, {}, {}}, t);
    EXPECT_FALSE(c.fraction);
    EXPECT_EQ(c.verdict, Verdict::unknown);
}

}  // namespace
}  // namespace ceiling
