// The PMU collector on recorded counts: a Sapphire Rapids with uncore access turns raw
// FP_ARITH and CAS counts into FLOPs and DRAM bytes; without uncore access bytes are
// estimated from LLC misses and say so; in a VM without a PMU it reports why, and on this
// machine the real probe does the same without crashing or reading zeros.

#include "collectors/pmu_collector.hpp"

#include <gtest/gtest.h>

#include "tests/unit/collectors/fake_perf_event_api.hpp"
#include "tests/unit/collectors/fake_pfm_api.hpp"

namespace ceiling::collectors {
namespace {

using testing::FakePerfEventApi;
using testing::FakePfmApi;

const FsRoot spr_root(CEILING_TEST_DATA "/fakeroot-spr");

// libpfm4's real Sapphire Rapids encodings (see pfm_encoding_test.cpp).
FakePfmApi spr_pfm() {
    FakePfmApi pfm;
    pfm.host = "spr";
    const std::pair<const char*, std::uint64_t> events[] = {
        {"UNHALTED_CORE_CYCLES", 0x3c},
        {"INSTRUCTION_RETIRED", 0xc0},
        {"FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", 0x01c7},
        {"FP_ARITH_INST_RETIRED:SCALAR_SINGLE", 0x02c7},
        {"FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE", 0x04c7},
        {"FP_ARITH_INST_RETIRED:128B_PACKED_SINGLE", 0x08c7},
        {"FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE", 0x10c7},
        {"FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE", 0x20c7},
        {"FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE", 0x40c7},
        {"FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE", 0x80c7},
        {"LONGEST_LAT_CACHE:MISS", 0x412e},
    };
    for (const auto& [name, config] : events)
        pfm.events[std::string("spr::") + name] = {PERF_TYPE_RAW, config, 0, 0};
    return pfm;
}

// Recorded counts by config: a kernel doing 2e6 512-bit double FMAs (counted twice: 4e6
// in 512B_PACKED_DOUBLE? no: 2e6 instructions x 2 = 4e6 counts), and memory traffic.
RawCount spr_counts(const perf_event_attr& a) {
    if (a.type == 38 || a.type == 39) {  // uncore_imc_0 / _1, opened on CPUs 0 and 56
        if (a.config == 0xcf05) return {250'000, 1000, 1000};  // CAS reads
        if (a.config == 0xf005) return {125'000, 1000, 1000};  // CAS writes
    }
    switch (a.config) {
        case 0x3c:
            return {3'000'000, 1000, 1000};
        case 0xc0:
            return {6'000'000, 1000, 1000};
        case 0x40c7:
            return {4'000'000, 1000, 1000};
        case 0x412e:
            return {10'000, 1000, 1000};
        default:
            return {0, 1000, 1000};
    }
}

PerfEnvironment bare_metal(bool privileged) {
    PerfEnvironment env;
    env.paranoid = 2;
    env.cap_perfmon = privileged;
    env.cpu_pmus = {"cpu"};
    env.cpu_vendor = "GenuineIntel";
    return env;
}

TEST(PmuCollector, FlopsAndCasBytesOnSapphireRapids) {
    FakePfmApi pfm = spr_pfm();
    FakePerfEventApi perf;
    perf.count = spr_counts;
    const PerfEnvironment env = bare_metal(true);
    PmuCollector c(CountTarget::calling_thread(), {}, {&pfm, &perf, &spr_root, &env});
    ASSERT_TRUE(c.probe().available) << c.probe().reason;
    ASSERT_NE(c.plan().table, nullptr);
    EXPECT_EQ(c.plan().bytes->sysfs_pmu, "uncore_imc");
    c.start();
    const Readings r = c.stop();

    // fp64: 4e6 counts of 512B_PACKED_DOUBLE x 8 lanes = 3.2e7 FLOPs (= 2e6 FMAs x 16).
    ASSERT_TRUE(r.find("fp_ops_fp64"));
    EXPECT_DOUBLE_EQ(r.find("fp_ops_fp64")->value, 3.2e7);
    EXPECT_EQ(r.find("fp_ops_fp64")->unit, "flop");
    EXPECT_EQ(r.find("fp_ops_fp64")->source, ReadingSource::pmu);
    // Nothing else counted FP work: fp32 is a real 0 (counted, none happened).
    ASSERT_TRUE(r.find("fp_ops_fp32"));
    EXPECT_DOUBLE_EQ(r.find("fp_ops_fp32")->value, 0);
    EXPECT_DOUBLE_EQ(r.find("fp_ops")->value, 3.2e7);
    // CAS: 2 IMCs x 2 sockets x (250000 reads + 125000 writes) = 1.5e6 CAS x 64 B = 9.6e7 B.
    ASSERT_TRUE(r.find("dram_bytes"));
    EXPECT_DOUBLE_EQ(r.find("dram_bytes")->value, 9.6e7);
    EXPECT_FALSE(r.find("dram_bytes")->estimate);
    // IPC = 6e6 / 3e6 = 2.
    EXPECT_DOUBLE_EQ(r.find("instructions_per_cycle")->value, 2.0);
    EXPECT_DOUBLE_EQ(r.find("cycles")->value, 3e6);
    ASSERT_TRUE(r.find("event:FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE"));
    // The uncore counters were opened CPU-wide, one per socket.
    int uncore_fds = 0;
    for (const auto& o : perf.opened)
        if (o.attr.type == 38 || o.attr.type == 39) {
            ++uncore_fds;
            EXPECT_EQ(o.pid, -1);
        }
    EXPECT_EQ(uncore_fds, 2 * 2 * 2);  // 2 IMCs x 2 events x 2 sockets
}

TEST(PmuCollector, WithoutUncoreAccessBytesAreAnEstimateFromLlcMisses) {
    FakePfmApi pfm = spr_pfm();
    FakePerfEventApi perf;
    perf.count = spr_counts;
    const PerfEnvironment env = bare_metal(false);  // paranoid 2, no CAP_PERFMON
    PmuCollector c(CountTarget::calling_thread(), {}, {&pfm, &perf, &spr_root, &env});
    ASSERT_TRUE(c.probe().available);
    ASSERT_TRUE(c.plan().bytes);
    EXPECT_TRUE(c.plan().bytes->estimate);
    bool told = false;
    for (const auto& n : c.plan().notes)
        told |= n.find("perf_event_paranoid=0") != std::string::npos;
    EXPECT_TRUE(told) << "the plan must say how to get exact bytes";
    c.start();
    const Readings r = c.stop();
    // 10000 L3 misses x 64 B = 640000 B, labelled an estimate.
    ASSERT_TRUE(r.find("dram_bytes"));
    EXPECT_DOUBLE_EQ(r.find("dram_bytes")->value, 640'000);
    EXPECT_TRUE(r.find("dram_bytes")->estimate);
}

TEST(PmuCollector, UnknownCpuModelStillCountsCyclesAndInstructions) {
    FakePfmApi pfm;  // libpfm4 knows no model
    FakePerfEventApi perf;
    perf.count = [](const perf_event_attr& a) {
        return a.config == PERF_COUNT_HW_CPU_CYCLES ? RawCount{100, 10, 10} : RawCount{250, 10, 10};
    };
    const PerfEnvironment env = bare_metal(true);
    PmuCollector c(CountTarget::calling_thread(), {}, {&pfm, &perf, &spr_root, &env});
    ASSERT_TRUE(c.probe().available);
    EXPECT_NE(c.probe().reason.find("cycles and instructions only"), std::string::npos);
    c.start();
    const Readings r = c.stop();
    EXPECT_DOUBLE_EQ(r.find("instructions_per_cycle")->value, 2.5);
    EXPECT_FALSE(r.find("fp_ops")) << "no FLOP events known: absent, never 0";
    EXPECT_FALSE(r.find("dram_bytes"));
}

TEST(PmuCollector, NoPmuInAVmIsUnavailableWithTheFix) {
    FakePfmApi pfm;
    FakePerfEventApi perf;
    perf.open_result = [](const perf_event_attr& a, pid_t, int) {
        return a.type == PERF_TYPE_SOFTWARE ? 0 : -ENOENT;
    };
    PerfEnvironment env;
    env.paranoid = 2;
    env.virtual_machine = true;
    env.hypervisor = "KVM";
    PmuCollector c(CountTarget::calling_thread(), {}, {&pfm, &perf, &spr_root, &env});
    const Capability cap = c.probe();
    EXPECT_FALSE(cap.available);
    EXPECT_EQ(cap.reason, "no CPU PMU exposed in this VM (KVM)");
    EXPECT_NE(cap.fix.find("enable the virtual PMU in the hypervisor"), std::string::npos);
    EXPECT_THROW(c.start(), CollectorError);
    EXPECT_TRUE(c.stop().values.empty());
}

TEST(PmuOnThisMachine, ReportsUnavailableThroughPerfEventWithoutZeros) {
    const PerfEnvironment env = read_perf_environment();
    const Capability cap = probe_cpu_pmu(system_perf_event_api(), env);
    if (env.has_cpu_pmu() && cap.available)
        GTEST_SKIP() << "this machine exposes a CPU PMU (" << env.cpu_pmus[0] << ")";
    EXPECT_FALSE(cap.available);
    EXPECT_FALSE(cap.reason.empty());
    if (env.virtual_machine && !env.has_cpu_pmu()) {
        EXPECT_NE(cap.reason.find("no CPU PMU exposed"), std::string::npos) << cap.reason;
        EXPECT_NE(cap.fix.find("virtual PMU"), std::string::npos) << cap.fix;
    }
    // The collector built the real way says the same, refuses to start, and reads nothing.
    PmuCollector c;
    EXPECT_FALSE(c.probe().available);
    EXPECT_THROW(c.start(), CollectorError);
    EXPECT_TRUE(c.stop().values.empty()) << "an unavailable PMU must not read zeros";
}

}  // namespace
}  // namespace ceiling::collectors
