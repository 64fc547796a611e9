// What the system did while a region was open beside its declared work (region_system.cpp):
// ceiling's own recording inside short ranges, and the working set a region's footprint
// bounds where it declares none. The records are synthetic (judged_records.hpp), judged
// against the synthetic profile.
#include <algorithm>

#include <gtest/gtest.h>

#include "agent/judge/judge_record.hpp"
#include "tests/unit/agent/judged_records.hpp"

namespace ceiling::judge {
namespace {

using namespace judged;

// Ranges so short that the half of a range's recording cost between its clock reads is a
// tenth or more of the median instance are said to time ceiling too; longer ones are not,
// and nothing is said where the cost was not timed.
TEST(RecordingCost, RangesThisShortAreSaidToTimeCeilingToo) {
    RunRecord rec = record_of(
        {timed_region("tiny", fp32(40, 0), 80e-9), timed_region("step", fp32(1e6, 0), 1e-5)}, 1.0);
    judge_record(rec);
    const auto noted = [&](const std::string& path) {
        for (const auto& f : verdict(rec, path).findings)
            if (f.detail.find("ceiling's recording is inside its timing") != std::string::npos)
                return f.detail;
        return std::string();
    };
    EXPECT_EQ(noted("tiny"), "") << "no cost timed: nothing said";
    rec.executions.front().counters.push_back(
        {"nvtx_range_cost_s", 64e-9, "s", Source::timing, std::nullopt, false});
    judge_record(rec);
    EXPECT_NE(noted("tiny").find("about 32 ns of each range's 64 ns cost"), std::string::npos)
        << noted("tiny");
    EXPECT_NE(noted("tiny").find("40% of its median instance (80 ns)"), std::string::npos)
        << noted("tiny");
    EXPECT_EQ(noted("step"), "");
}

// A run whose largest process held `resident` bytes at its peak (exact unless `rough`) and
// moved `calls` bytes through read and write calls, with one region declaring bytes only.
RunRecord footprint_run(double resident, double calls, bool rough = false, double working_set = 0) {
    Work w = fp32(1e6, 1e9);
    w.working_set_bytes = working_set;
    RunRecord rec = record_of({busy_region("scan", w, 0.1, 1.0)}, 1.0);
    auto& counters = rec.executions.front().counters;
    counters.push_back(
        {"peak_rss_bytes", resident, "bytes", Source::software, std::nullopt, rough});
    counters.push_back({"read_call_bytes", calls, "bytes", Source::software, std::nullopt, false});
    counters.push_back({"write_call_bytes", 0, "bytes", Source::software, std::nullopt, false});
    return rec;
}

// Without a declared working set, a region is compared with the level that holds its largest
// process's peak resident memory where that is inside the outermost (it cannot read more
// than it holds), and said; not where the peak is a lower bound, system calls moved more than
// it held (reads from the page cache), or a working set was declared.
TEST(FootprintBound, AWorkingSetNotDeclaredIsAtMostWhatItsProcessHeld) {
    const auto level_of = [](RunRecord rec) {
        judge_record(rec);
        const auto& d = verdict(rec, "scan");
        const bool said = std::any_of(d.findings.begin(), d.findings.end(), [](const Finding& f) {
            return f.detail.find("working set not declared: at most") != std::string::npos;
        });
        return d.level.value_or("?") + (said ? " (said)" : "");
    };
    EXPECT_EQ(level_of(footprint_run(8 << 20, 1 << 20)), "L3 (said)");
    EXPECT_EQ(level_of(footprint_run(512 << 10, 1 << 10)), "L2 (said)");
    EXPECT_EQ(level_of(footprint_run(600 << 10, 1 << 10)), "L3 (said)") << "L2 holds it once";
    EXPECT_EQ(level_of(footprint_run(9 << 20, 1 << 20)), "DRAM") << "L3 holds it once";
    EXPECT_EQ(level_of(footprint_run(100 << 20, 1 << 20)), "DRAM");
    EXPECT_EQ(level_of(footprint_run(8 << 20, 1 << 20, true)), "DRAM");
    EXPECT_EQ(level_of(footprint_run(8 << 20, 64 << 20)), "DRAM");
    EXPECT_EQ(level_of(footprint_run(8 << 20, 1 << 20, false, 16 << 10)), "L1");
    // Its own process waited: its work ran where this footprint says nothing.
    RunRecord waited = footprint_run(8 << 20, 1 << 20);
    waited.regions.front().busy_cores = 0.1;
    EXPECT_EQ(level_of(waited), "DRAM");
}

}  // namespace
}  // namespace ceiling::judge
