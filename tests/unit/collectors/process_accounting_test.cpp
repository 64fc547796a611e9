// Clock and process accounting: /proc parsing on a recorded tree, rusage differences, and
// real values from this process.

#include "collectors/process_accounting.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <gtest/gtest.h>
#include <sys/mman.h>

#include "collectors/fs_root.hpp"

namespace ceiling::collectors {
namespace {

const FsRoot spr_root(CEILING_TEST_DATA "/fakeroot-spr");

TEST(ProcStat, CountsFieldsFromTheLastParenthesis) {
    // The command name "my (odd) prog" holds a space and parentheses.
    const auto text = spr_root.read_text("/proc/4242/stat");
    ASSERT_TRUE(text);
    const auto s = parse_proc_stat(*text);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->state, 'S');
    EXPECT_EQ(s->minor_faults, 1500);
    EXPECT_EQ(s->major_faults, 7);
    EXPECT_EQ(s->utime_ticks, 250);
    EXPECT_EQ(s->stime_ticks, 30);
    EXPECT_EQ(s->num_threads, 3);
    EXPECT_EQ(s->rss_pages, 2560);
}

TEST(ProcStat, RejectsTruncatedText) {
    EXPECT_FALSE(parse_proc_stat("4242 (x) S 1 2 3"));
    EXPECT_FALSE(parse_proc_stat("no parenthesis at all"));
}

TEST(ProcUsage, ReadsAProcessThroughTheFakeRoot) {
    // 100 ticks per second: utime 250 ticks = 2.5 s, stime 30 ticks = 0.3 s.
    const auto u = read_proc_usage(spr_root, "4242", 100.0, 4096.0);
    ASSERT_TRUE(u);
    EXPECT_DOUBLE_EQ(*u->user_s, 2.5);
    EXPECT_DOUBLE_EQ(*u->system_s, 0.3);
    EXPECT_DOUBLE_EQ(*u->max_rss_bytes, 20480.0 * 1024);  // VmHWM 20480 kB
    EXPECT_EQ(*u->minor_faults, 1500);
    EXPECT_EQ(*u->major_faults, 7);
    EXPECT_EQ(*u->voluntary_switches, 12);
    EXPECT_EQ(*u->involuntary_switches, 5);
    EXPECT_FALSE(read_proc_usage(spr_root, "999999", 100.0, 4096.0)) << "a gone process";
}

TEST(ProcStatus, ParsesTheEffectiveCapabilityMask) {
    const auto st = parse_proc_status("CapEff:\t000001ffffffffff\nThreads:\t7\n");
    ASSERT_TRUE(st.cap_effective);
    EXPECT_EQ(*st.cap_effective, 0x1ffffffffffULL);
    EXPECT_EQ(*st.threads, 7);
    EXPECT_FALSE(st.vm_hwm_bytes);
}

TEST(ProcessUsage, DeltaKeepsThePeakAndDifferencesTheRest) {
    ProcessUsage a, b;
    a.user_s = 1.0;
    b.user_s = 3.5;
    a.minor_faults = 10;
    b.minor_faults = 25;
    a.max_rss_bytes = 100;
    b.max_rss_bytes = 150;
    const auto d = usage_delta(a, b);
    EXPECT_DOUBLE_EQ(*d.user_s, 2.5);
    EXPECT_EQ(*d.minor_faults, 15);
    EXPECT_EQ(*d.max_rss_bytes, 150);
    EXPECT_FALSE(d.system_s) << "unknown on either side stays unknown, never 0";
    const auto r = usage_readings(d);
    EXPECT_FALSE(r.find("system_s"));
    ASSERT_TRUE(r.find("user_s"));
    EXPECT_EQ(r.find("user_s")->unit, "s");
}

const FsRoot run_root(CEILING_TEST_DATA "/fakeroot-run");

TEST(ProcIo, ReadsEveryFieldDespiteTheSpaceAfterTheColon) {
    // Recorded after a 50 MB write + fsync: "wchar: 50000000" once read as 0 (std::from_chars
    // refuses the leading space).
    const auto io = read_proc_io(run_root, "4100");
    ASSERT_TRUE(io);
    EXPECT_EQ(io->read_call_bytes, 1048576);
    EXPECT_EQ(io->write_call_bytes, 50000000);
    EXPECT_EQ(io->storage_read_bytes, 4096);
    EXPECT_EQ(io->storage_write_bytes, 50016256);
    // And how many calls passed those bytes: their mean size says whether it buffers.
    EXPECT_EQ(io->read_calls, 10);
    EXPECT_EQ(io->write_calls, 50);
    EXPECT_FALSE(read_proc_io(run_root, "4201")) << "an unreadable io file is unknown, not 0";
    const auto r = io_readings(*io);
    ASSERT_TRUE(r.value("storage_write_bytes"));
    EXPECT_EQ(*r.value("storage_write_bytes"), 50016256);
    EXPECT_EQ(r.find("write_call_bytes")->unit, "bytes");
    EXPECT_EQ(r.find("write_calls")->unit, "calls");
    EXPECT_EQ(*r.value("write_calls"), 50);
}

TEST(ProcIo, AFieldMissingOrMalformedStaysAbsentAndSumsStayUnknown) {
    const auto io = parse_proc_io("rchar: 12\nwchar: twelve\nread_bytes:\t7\n");
    EXPECT_EQ(io.read_call_bytes, 12);
    EXPECT_FALSE(io.write_call_bytes);
    EXPECT_EQ(io.storage_read_bytes, 7);
    EXPECT_FALSE(io.storage_write_bytes);
    const auto sum = add(io, parse_proc_io("rchar: 30\nwchar: 5\nread_bytes: 1\nwrite_bytes: 2\n"));
    EXPECT_EQ(sum.read_call_bytes, 42);
    EXPECT_FALSE(sum.write_call_bytes) << "unknown + 5 is unknown, never 5";
    EXPECT_FALSE(io_readings(sum).find("write_call_bytes"));
}

TEST(HostLoad, StealAndRunnableFromRecordedFiles) {
    const auto ticks = parse_host_cpu_ticks(*run_root.read_text("/proc/stat"));
    ASSERT_TRUE(ticks);
    // user nice system idle iowait irq softirq steal; guest time is inside user already.
    EXPECT_EQ(ticks->total, 771950 + 125 + 103187 + 75775 + 772 + 0 + 321 + 1286);
    EXPECT_EQ(ticks->steal, 1286);
    EXPECT_EQ(ticks->idle, 75775 + 772);
    EXPECT_EQ(ticks->busy(), 771950 + 125 + 103187 + 0 + 321);
    EXPECT_EQ(ticks->tasks_started, 13803);  // "processes": forks and clones since boot
    EXPECT_FALSE(parse_host_cpu_ticks("cpu  1 2 3 4 5 6 7 8\n")->tasks_started);
    EXPECT_FALSE(parse_host_cpu_ticks("cpu  1 2 3 4\n")) << "no steal column: unknown";
    EXPECT_FALSE(parse_host_cpu_ticks("intr 1 2\n"));
    EXPECT_EQ(parse_loadavg_runnable(*run_root.read_text("/proc/loadavg")), 11);
    EXPECT_FALSE(parse_loadavg_runnable("0.52 0.58 0.59"));
}

TEST(ProcStat, ReadsStartTimeAndReapedChildrensTime) {
    const auto s = parse_proc_stat(*run_root.read_text("/proc/4100/stat"));
    ASSERT_TRUE(s);
    EXPECT_EQ(s->start_ticks, 476914);
    EXPECT_EQ(s->cutime_ticks, 12);
    EXPECT_EQ(s->cstime_ticks, 4);
    EXPECT_EQ(s->rss_pages, 65536);
}

TEST(ProcessAccountingCollector, SeesFaultsOfNewlyTouchedMemory) {
    ProcessAccountingCollector c;
    ASSERT_TRUE(c.probe().available);
    const std::size_t bytes = 32u << 20;  // 8192 pages of 4 KiB
    c.start();
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    madvise(p, bytes, MADV_NOHUGEPAGE);
    std::memset(p, 1, bytes);
    const Readings r = c.stop();
    munmap(p, bytes);
    ASSERT_TRUE(r.value("wall_s"));
    EXPECT_GT(*r.value("wall_s"), 0);
    ASSERT_TRUE(r.value("minor_faults"));
    EXPECT_GE(*r.value("minor_faults"), 8192 * 0.9);
}

TEST(FsRoot, ReadsListsAndReportsErrors) {
    EXPECT_EQ(spr_root.read_int("/proc/sys/kernel/perf_event_paranoid"), 2);
    const auto missing = spr_root.read("/proc/nope");
    EXPECT_FALSE(missing.content);
    EXPECT_EQ(missing.error, ENOENT);
    const auto devices = spr_root.list("/sys/bus/event_source/devices");
    EXPECT_NE(std::find(devices.begin(), devices.end(), "uncore_imc_0"), devices.end());
    EXPECT_TRUE(spr_root.list("/no/such/dir").empty());
}

TEST(Parsing, CpuListsAndNumbers) {
    EXPECT_EQ(parse_cpu_list("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
    EXPECT_EQ(parse_cpu_list("0,56"), (std::vector<int>{0, 56}));
    EXPECT_FALSE(parse_cpu_list("3-1"));
    EXPECT_EQ(parse_int("0x1f"), 31);
    EXPECT_EQ(parse_int(" -1\n"), -1);
    EXPECT_FALSE(parse_int("12abc"));
    EXPECT_DOUBLE_EQ(*parse_double("6.103515625e-5"), 6.103515625e-5);
}

}  // namespace
}  // namespace ceiling::collectors
