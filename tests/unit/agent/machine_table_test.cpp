// The machine table says when compute roofs did not scale with threads (threads sharing a
// core), naming the roofs and their measured scaling, and stays quiet when they did.
#include "agent/output/machine_table.hpp"

#include <sstream>

#include <gtest/gtest.h>

namespace ceiling::output {
namespace {

ComputeRoof roof(const std::string& name, int threads, double ops) {
    ComputeRoof r;
    r.name = name;
    r.threads = threads;
    r.ops_per_s = summarize({ops, ops, ops});
    return r;
}

std::string rendered(const MachineProfile& p) {
    std::ostringstream out;
    render_machine_profile(p, out);
    return out.str();
}

TEST(MachineTable, RoofsThatDidNotScaleWithThreadsAreNamed) {
    MachineProfile p;
    p.compute_roofs = {roof("fp32_fma512", 1, 1.75e11), roof("fp32_fma512", 2, 3.46e11),
                       roof("bf16_amx", 1, 2.30e12), roof("bf16_amx", 2, 2.09e12)};
    const auto s = rendered(p);
    EXPECT_NE(s.find("Scaling from 1 to 2 threads below 75% of linear: bf16_amx x0.91."),
              std::string::npos)
        << s;
    EXPECT_EQ(s.find("fp32_fma512 x"), std::string::npos) << "fp32 scaled x1.98:\n" << s;
}

TEST(MachineTable, NoScalingNoteWhenRoofsScale) {
    MachineProfile p;
    p.compute_roofs = {roof("fp32_fma512", 1, 1.75e11), roof("fp32_fma512", 2, 3.46e11)};
    EXPECT_EQ(rendered(p).find("Scaling from"), std::string::npos);
}

// A cache level whose latency is DRAM-like did not keep its working set: flagged, not
// printed as that cache's latency (the quick profile called 197 ns "L3" here).
TEST(MachineTable, DramLikeCacheLatencyIsFlagged) {
    MachineProfile p;
    auto lat = [](const std::string& level, double s) {
        LatencyMeasurement m;
        m.level = level;
        m.working_set_bytes = 1 << 20;
        m.seconds = summarize({s, s, s});
        return m;
    };
    p.latencies = {lat("L1", 1.2e-9), lat("L2", 4e-9), lat("L3", 197e-9), lat("DRAM", 210e-9)};
    const auto s = rendered(p);
    EXPECT_NE(s.find("L3 (DRAM-like)"), std::string::npos) << s;
    EXPECT_EQ(s.find("L2 (DRAM-like)"), std::string::npos) << s;
    EXPECT_NE(s.find("did not stay in that"), std::string::npos) << s;
    p.latencies = {lat("L1", 1.2e-9), lat("L3", 40e-9), lat("DRAM", 210e-9)};
    EXPECT_EQ(rendered(p).find("DRAM-like"), std::string::npos);
}

// A theoretical value whose per-cycle count the measurement chose says so, and its
// measured/theoretical is no percentage: it would read as agreement the table never gave.
TEST(MachineTable, TheoryFromTheMeasurementIsMarkedAndNotCompared) {
    MachineProfile p;
    ComputeRoof table = roof("fp32_fma512", 1, 1.22e11);
    table.theoretical_ops_per_s = 1.25e11;
    ComputeRoof inferred = roof("fp32_fma256", 1, 6.1e10);
    inferred.theoretical_ops_per_s = 6.24e10;
    inferred.theoretical_from_measurement = true;
    p.compute_roofs = {table, inferred};
    const auto s = rendered(p);
    const auto line = [&](const std::string& name) {
        const auto at = s.find("\n" + name + " ");
        return at == std::string::npos ? std::string() : s.substr(at + 1, s.find('\n', at + 1) - at - 1);
    };
    EXPECT_NE(line("fp32_fma256").find("(from measurement)"), std::string::npos) << s;
    EXPECT_NE(line("fp32_fma256").find("n/a"), std::string::npos) << s;
    EXPECT_EQ(line("fp32_fma256").find("98%"), std::string::npos) << s;
    EXPECT_EQ(line("fp32_fma512").find("from measurement"), std::string::npos) << s;
    EXPECT_NE(line("fp32_fma512").find("98%"), std::string::npos) << s;
    EXPECT_NE(s.find("(from measurement): the peak table does not know"), std::string::npos) << s;
    p.compute_roofs = {table};
    EXPECT_EQ(rendered(p).find("from measurement"), std::string::npos);
}

}  // namespace
}  // namespace ceiling::output
