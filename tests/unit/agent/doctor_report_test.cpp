// `ceiling doctor`'s pieces: the report's JSON and text, readings turned into
// CounterValues, hypervisor names, and the PMU self-validation verdicts on recorded counts
// (a trusted PMU, one that reads 0, one off by 2x), with the real kernel running.

#include "agent/output/doctor_report.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "agent/machine/pmu_readings.hpp"
#include "agent/machine/pmu_self_validation.hpp"
#include "agent/run/region_counters.hpp"
#include "collectors/clock.hpp"
#include "agent/machine/pmu_survey.hpp"
#include "tests/unit/collectors/fake_perf_event_api.hpp"
#include "tests/unit/collectors/fake_pfm_api.hpp"

namespace ceiling {
namespace {

using collectors::testing::FakePerfEventApi;
using collectors::testing::FakePfmApi;

DoctorReport sample_report() {
    DoctorReport r;
    r.host = "box";
    r.kernel = "6.1.0";
    r.cpu = "Some CPU";
    r.virtual_machine = true;
    r.hypervisor = "KVM";
    r.perf_event_paranoid = 2;
    DoctorItem sw;
    sw.id = "software_events";
    sw.title = "perf_event software events";
    sw.available = true;
    sw.detail = "task-clock, context switches";
    DoctorItem pmu;
    pmu.id = "cpu_pmu";
    pmu.title = "CPU PMU (hardware counters)";
    pmu.available = false;
    pmu.detail = "no CPU PMU exposed in this VM (KVM)";
    pmu.fix = "enable the virtual PMU in the hypervisor";
    pmu.facts["core_pmus"] = nlohmann::json::array();
    r.items = {sw, pmu};
    return r;
}

TEST(DoctorReport, JsonSaysReasonWhenUnavailableAndDetailWhenAvailable) {
    const nlohmann::json j = to_json(sample_report());
    EXPECT_EQ(j["schema_version"], 1);
    EXPECT_EQ(j["perf_event_paranoid"], 2);
    EXPECT_EQ(j["hypervisor"], "KVM");
    ASSERT_EQ(j["items"].size(), 2u);
    const auto& sw = j["items"][0];
    EXPECT_EQ(sw["id"], "software_events");
    EXPECT_TRUE(sw["available"].get<bool>());
    EXPECT_EQ(sw["detail"], "task-clock, context switches");
    EXPECT_TRUE(sw["fix"].is_null());
    const auto& pmu = j["items"][1];
    EXPECT_FALSE(pmu["available"].get<bool>());
    EXPECT_EQ(pmu["reason"], "no CPU PMU exposed in this VM (KVM)");
    EXPECT_EQ(pmu["fix"], "enable the virtual PMU in the hypervisor");
    EXPECT_TRUE(pmu["facts"]["core_pmus"].is_array());
}

TEST(DoctorReport, TextShowsEachItemAndItsFix) {
    std::ostringstream out;
    output::render_doctor_report(sample_report(), out);
    const std::string s = out.str();
    EXPECT_NE(s.find("virtual machine (KVM)"), std::string::npos) << s;
    EXPECT_NE(s.find("yes  perf_event software events"), std::string::npos) << s;
    EXPECT_NE(s.find("no   CPU PMU (hardware counters)"), std::string::npos) << s;
    EXPECT_NE(s.find("fix: enable the virtual PMU in the hypervisor"), std::string::npos) << s;
    EXPECT_NE(s.find("1 of 2 available."), std::string::npos) << s;
    EXPECT_NE(DoctorReport(sample_report()).find("cpu_pmu"), nullptr);
}

TEST(PmuReadings, ConvertWithSourceConfidenceAndEstimates) {
    collectors::Readings r;
    collectors::Reading bytes;
    bytes.name = "dram_bytes";
    bytes.value = 6.4e7;
    bytes.unit = "bytes";
    bytes.source = collectors::ReadingSource::pmu;
    bytes.estimate = true;
    collectors::Reading clock;
    clock.name = "task_clock_s";
    clock.value = 1.5;
    clock.unit = "s";
    clock.source = collectors::ReadingSource::software;
    clock.running_fraction = 0.75;
    r.values = {bytes, clock};
    const auto c = measure::to_counter_values(r);
    ASSERT_EQ(c.size(), 2u);
    EXPECT_EQ(c[0].source, Source::pmu);
    EXPECT_TRUE(c[0].low_confidence) << "an estimate is not a measurement";
    EXPECT_EQ(c[1].source, Source::software);
    EXPECT_EQ(c[1].running_fraction, 0.75);
    EXPECT_FALSE(c[1].low_confidence);
}

TEST(HypervisorName, KnownSignaturesAndUnknownOnes) {
    EXPECT_EQ(measure::hypervisor_name("KVMKVMKVM"), "KVM");
    EXPECT_EQ(measure::hypervisor_name("Microsoft Hv"), "Hyper-V");
    EXPECT_EQ(measure::hypervisor_name("NewHyper  "), "NewHyper");
}

// ---- self-validation on recorded counts ---------------------------------------------------

// Which FP_ARITH umask counts the validation kernel and how many lanes it has, for a
// fake PMU that reports exactly (or twice, or none of) the kernel's FLOPs.
struct KernelEvent {
    const char* kernel;
    const char* event;
    std::uint64_t config;
    double lanes;
};
constexpr KernelEvent kernel_events[] = {
    {"fp64_fma512", "FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE", 0x40c7, 8},
    {"fp64_fma256", "FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE", 0x10c7, 4},
    {"fp64_fma128", "FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE", 0x04c7, 2},
    {"fp64_scalar", "FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", 0x01c7, 1},
};

struct FakeSpr {
    FakePfmApi pfm;
    FakePerfEventApi perf;
    collectors::PerfEnvironment env;
    collectors::FsRoot root{CEILING_TEST_DATA "/fakeroot-spr"};
    collectors::PmuBackends backends() { return {&pfm, &perf, &root, &env}; }

    // flops_factor x the kernel's FLOPs in its event; CAS counts that add up to
    // bytes_factor x the streamed bytes.
    FakeSpr(double kernel_flops, double flops_factor, double stream_bytes, double bytes_factor) {
        env.paranoid = 2;
        env.cap_perfmon = true;
        env.cpu_pmus = {"cpu"};
        pfm.host = "spr";
        const char* all[] = {"UNHALTED_CORE_CYCLES",
                             "INSTRUCTION_RETIRED",
                             "FP_ARITH_INST_RETIRED:SCALAR_DOUBLE",
                             "FP_ARITH_INST_RETIRED:SCALAR_SINGLE",
                             "FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE",
                             "FP_ARITH_INST_RETIRED:128B_PACKED_SINGLE",
                             "FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE",
                             "FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE",
                             "FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE",
                             "FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE",
                             "LONGEST_LAT_CACHE:MISS"};
        std::uint64_t config = 0x1000;  // distinct configs for the events not looked at
        for (const char* e : all)
            pfm.events[std::string("spr::") + e] = {PERF_TYPE_RAW, config++, 0, 0};
        const auto kernel = measure::flop_validation_kernel();
        for (const auto& k : kernel_events)
            if (kernel && kernel->name == k.kernel) {
                pfm.events[std::string("spr::") + k.event] = {PERF_TYPE_RAW, k.config, 0, 0};
                event_config = k.config;
                event_count = kernel_flops * flops_factor / k.lanes;
            }
        // 2 IMCs x 2 events (read, write) x 2 sockets = 8 counters; reads carry it all.
        cas_count = stream_bytes * bytes_factor / 64.0 / 4.0;
        perf.count = [this](const perf_event_attr& a) -> collectors::RawCount {
            if ((a.type == 38 || a.type == 39) && a.config == 0xcf05)
                return {static_cast<std::uint64_t>(cas_count), 1000, 1000};
            if (a.config == event_config)
                return {static_cast<std::uint64_t>(event_count), 1000, 1000};
            return {0, 1000, 1000};
        };
    }
    std::uint64_t event_config = 0;
    double event_count = 0;
    double cas_count = 0;
};

measure::PmuSelfValidationOptions small() {
    measure::PmuSelfValidationOptions o;
    o.iterations = 1000;
    o.stream_bytes = 1 << 20;
    return o;
}

double flops_of(const measure::PmuSelfValidationOptions& o) {
    return measure::flop_validation_kernel()->flops_per_iteration *
           static_cast<double>(o.iterations);
}

TEST(PmuSelfValidation, TrustedWhenCountsMatchTheKnownWork) {
    if (!measure::flop_validation_kernel()) GTEST_SKIP() << "no FMA kernel runs on this CPU";
    const auto o = small();
    FakeSpr spr(flops_of(o), 1.0, static_cast<double>(o.stream_bytes) * 2, 1.0);
    const auto v = measure::run_pmu_self_validation(spr.backends(), o);
    ASSERT_TRUE(v.ran) << v.not_run_reason;
    ASSERT_TRUE(v.flops);
    EXPECT_EQ(v.flops->verdict, collectors::Verdict::trusted) << v.flops->explanation;
    ASSERT_TRUE(v.bytes);
    EXPECT_EQ(v.bytes->verdict, collectors::Verdict::trusted) << v.bytes->explanation;
    EXPECT_TRUE(v.trusted());
}

TEST(PmuSelfValidation, UntrustedWhenThePmuReadsZero) {
    if (!measure::flop_validation_kernel()) GTEST_SKIP() << "no FMA kernel runs on this CPU";
    const auto o = small();
    FakeSpr spr(flops_of(o), 0.0, static_cast<double>(o.stream_bytes) * 2, 0.0);
    const auto v = measure::run_pmu_self_validation(spr.backends(), o);
    ASSERT_TRUE(v.flops);
    EXPECT_EQ(v.flops->verdict, collectors::Verdict::untrusted_zero);
    EXPECT_EQ(v.bytes->verdict, collectors::Verdict::untrusted_zero);
    EXPECT_FALSE(v.trusted());
}

TEST(PmuSelfValidation, UntrustedWhenOffByTwo) {
    if (!measure::flop_validation_kernel()) GTEST_SKIP() << "no FMA kernel runs on this CPU";
    const auto o = small();
    FakeSpr spr(flops_of(o), 2.0, static_cast<double>(o.stream_bytes) * 2, 1.0);
    const auto v = measure::run_pmu_self_validation(spr.backends(), o);
    ASSERT_TRUE(v.flops);
    EXPECT_EQ(v.flops->verdict, collectors::Verdict::untrusted_ratio);
    EXPECT_NEAR(*v.flops->ratio, 2.0, 1e-6);
    EXPECT_EQ(v.bytes->verdict, collectors::Verdict::trusted);
    EXPECT_FALSE(v.trusted()) << "one failed check is enough to distrust the PMU";
}

TEST(PmuSelfValidation, NotRunWithoutAPmu) {
    FakePfmApi pfm;
    FakePerfEventApi perf;
    perf.open_result = [](const perf_event_attr& a, pid_t, int) {
        return a.type == PERF_TYPE_SOFTWARE ? 0 : -ENOENT;
    };
    collectors::PerfEnvironment env;
    env.virtual_machine = true;
    const collectors::FsRoot root(CEILING_TEST_DATA "/fakeroot-vm");
    const auto v = measure::run_pmu_self_validation({&pfm, &perf, &root, &env}, small());
    EXPECT_FALSE(v.ran);
    EXPECT_NE(v.not_run_reason.find("no CPU PMU exposed"), std::string::npos) << v.not_run_reason;
    EXPECT_FALSE(v.trusted());
}


// `ceiling run` keeps the verdicts for the boot: a second check with a PMU that now reads
// zero still gets the first verdicts, from the file, and says so; a file whose key does not
// match (another build, boot or plan) or that is damaged is measured over and rewritten;
// without a cache path (`ceiling doctor`) nothing is read.
TEST(PmuSelfValidation, VerdictsAreKeptForTheBootWhenACacheIsGiven) {
    if (!measure::flop_validation_kernel()) GTEST_SKIP() << "no FMA kernel runs on this CPU";
    if (!std::ifstream("/proc/sys/kernel/random/boot_id")) GTEST_SKIP() << "no boot id: nothing is cached";
    const auto dir = std::filesystem::temp_directory_path() / ("ceiling-pmu-cache-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    auto o = small();
    o.cache = dir / "sub" / "pmu-validation.json";  // the directory is created
    FakeSpr good(flops_of(o), 1.0, static_cast<double>(o.stream_bytes) * 2, 1.0);
    FakeSpr zero(flops_of(o), 0.0, static_cast<double>(o.stream_bytes) * 2, 0.0);

    const auto first = measure::run_pmu_self_validation(good.backends(), o);
    EXPECT_TRUE(first.trusted());
    EXPECT_FALSE(first.from_cache);
    ASSERT_TRUE(std::filesystem::exists(o.cache));

    const auto again = measure::run_pmu_self_validation(zero.backends(), o);
    EXPECT_TRUE(again.from_cache);
    EXPECT_TRUE(again.trusted()) << "the boot's verdicts, not a new measurement";
    ASSERT_TRUE(again.flops);
    EXPECT_EQ(again.flops->explanation, first.flops->explanation);
    EXPECT_DOUBLE_EQ(*again.flops->ratio, *first.flops->ratio);

    auto fresh = o;
    fresh.cache.clear();
    EXPECT_FALSE(measure::run_pmu_self_validation(zero.backends(), fresh).trusted());

    auto other = o;
    other.iterations = o.iterations * 2;  // another check: another key
    FakeSpr zero_other(flops_of(other), 0.0, static_cast<double>(o.stream_bytes) * 2, 0.0);
    const auto remeasured = measure::run_pmu_self_validation(zero_other.backends(), other);
    EXPECT_FALSE(remeasured.from_cache);
    EXPECT_FALSE(remeasured.trusted());

    std::ofstream(o.cache) << "{ not json";
    const auto damaged = measure::run_pmu_self_validation(zero.backends(), o);
    EXPECT_FALSE(damaged.from_cache);
    EXPECT_FALSE(damaged.trusted());
    EXPECT_TRUE(measure::run_pmu_self_validation(good.backends(), o).from_cache) << "rewritten";
    std::filesystem::remove_all(dir);
}

// Region counting (region_counters.hpp) uses what the self-validation trusted, per quantity.
TEST(RegionCounting, OnlyTrustedQuantitiesAreGivenToRegions) {
    if (!measure::flop_validation_kernel()) GTEST_SKIP() << "no FMA kernel runs on this CPU";
    const auto o = small();
    FakeSpr good(flops_of(o), 1.0, static_cast<double>(o.stream_bytes) * 2, 1.0);
    const auto both = measure::plan_region_counting(good.backends(), o);
    EXPECT_TRUE(both.flops && both.bytes);
    EXPECT_TRUE(both.why_not.empty());
    FakeSpr off(flops_of(o), 2.0, static_cast<double>(o.stream_bytes) * 2, 1.0);
    const auto bytes_only = measure::plan_region_counting(off.backends(), o);
    EXPECT_FALSE(bytes_only.flops);
    EXPECT_TRUE(bytes_only.bytes);
    FakeSpr zero(flops_of(o), 0.0, static_cast<double>(o.stream_bytes) * 2, 0.0);
    const auto none = measure::plan_region_counting(zero.backends(), o);
    EXPECT_FALSE(none.any());
    EXPECT_NE(none.why_not.find("failed its self-validation"), std::string::npos) << none.why_not;
}

TEST(RegionCounting, NothingAndNoNoteWithoutAPmu) {
    FakePfmApi pfm;
    FakePerfEventApi perf;
    perf.open_result = [](const perf_event_attr& a, pid_t, int) {
        return a.type == PERF_TYPE_SOFTWARE ? 0 : -ENOENT;
    };
    collectors::PerfEnvironment env;
    env.virtual_machine = true;
    const collectors::FsRoot root(CEILING_TEST_DATA "/fakeroot-vm");
    const auto c = measure::plan_region_counting({&pfm, &perf, &root, &env}, small());
    EXPECT_FALSE(c.any());
    EXPECT_TRUE(c.why_not.empty()) << "each region's unknown line says it: " << c.why_not;
}

// The sampler reads the PMU from its own thread from the child's launch on: a zero point
// first, then cumulative counts, and the totals go to the execution's counters.
TEST(RegionCounting, SamplerKeepsCumulativeReadsFromZero) {
    FakeSpr spr(1e6, 1.0, 1e6, 1.0);
    measure::RegionCounterSampler sampler(12345, 0.002, spr.backends());
    ASSERT_TRUE(sampler.failure().empty()) << sampler.failure();
    measure::NvtxCapture capture;
    measure::RegionInstance before, r;
    before.path = before.name = "before launch";
    before.start_ns = 0;
    before.end_ns = r.start_ns = collectors::now_ns();
    sampler.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    r.path = r.name = "gemm";
    r.end_ns = collectors::now_ns();
    capture.instances = {before, r};
    std::vector<CounterValue> counters;
    std::vector<std::string> notes;
    measure::finish_region_counting(sampler, {true, true, {}}, capture, counters, notes);
    EXPECT_TRUE(notes.empty());
    ASSERT_EQ(counters.size(), 2u);
    EXPECT_EQ(counters[0].name, "fp_ops");
    EXPECT_EQ(counters[0].source, Source::pmu);
    EXPECT_GT(counters[0].value, 0);
    // Nothing bounds counts before the child was launched; after, the samples do.
    ASSERT_EQ(capture.counts.size(), capture.instances.size());
    EXPECT_FALSE(capture.counts[0].ops);
    ASSERT_TRUE(capture.counts[1].ops);
    EXPECT_LE(capture.counts[1].ops->value, counters[0].value);
}

}  // namespace
}  // namespace ceiling
