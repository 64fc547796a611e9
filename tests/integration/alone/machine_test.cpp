// `ceiling machine` end to end: measures, prints, saves a valid profile; bad input gets
// the documented exit status and leaves no partial file.

#include <algorithm>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "diagnosis/machine_profile.hpp"
#include "tests/integration/process.hpp"

namespace ceiling {
namespace {

using testing::run_ceiling;
using testing::TempDir;

TEST(MachineCommand, QuickRunOverwritesACorruptProfileWithAValidOne) {
    TempDir dir;
    const auto file = dir / "profile.json";
    { std::ofstream(file) << "{ this is not a profile"; }

    // A corrupt saved profile: a clear error naming the file, exit 2.
    auto shown = run_ceiling({"machine", "--show", "--output", file.string()});
    EXPECT_EQ(shown.exit_code, 2) << shown.err;
    EXPECT_NE(shown.err.find(file.string()), std::string::npos) << shown.err;
    EXPECT_EQ(shown.err.find('\n'), shown.err.size() - 1) << "not one line: " << shown.err;

    // ... and `ceiling machine` can overwrite it.
    const auto r = run_ceiling({"-q", "machine", "--quick", "--output", file.string(),
                                "--storage-dir", dir.path().string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("Compute roofs"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Bandwidth roofs"), std::string::npos) << r.out;

    MachineProfile p = parse_machine_profile(testing::slurp(file));
    // The storage under the directory given: measured, or said why not (a tmpfs /tmp);
    // either way its test file is gone.
    const auto storage_absence = std::find_if(p.absent.begin(), p.absent.end(),
                                              [](const Absence& a) { return a.what == "storage"; });
    if (p.storage) {
        EXPECT_EQ(storage_absence, p.absent.end());
        EXPECT_GT(p.storage->read_bytes_per_s.median, 0);
        EXPECT_GT(p.storage->write_bytes_per_s.median, 0);
        EXPECT_EQ(p.storage->file_bytes, 64u << 20);
        EXPECT_NE(r.out.find("Storage under "), std::string::npos) << r.out;
    } else {
        ASSERT_NE(storage_absence, p.absent.end()) << "no storage roof and no reason";
        EXPECT_FALSE(storage_absence->reason.empty());
    }
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1)
        << "only the profile is left";
    EXPECT_TRUE(p.quick);
    // Bandwidth roofs inner level first within each thread count, DRAM last (a level one
    // kernel lacked had printed its row after DRAM's).
    for (std::size_t i = 1; i < p.bandwidth_roofs.size(); ++i) {
        const auto& a = p.bandwidth_roofs[i - 1];
        const auto& b = p.bandwidth_roofs[i];
        if (a.threads == b.threads) {
            EXPECT_FALSE(a.level == "DRAM" && b.level != "DRAM") << b.level;
        }
        if (a.threads == b.threads && a.level.size() == 2 && b.level.size() == 2) {
            EXPECT_LE(a.level, b.level);  // "L1" < "L2" < "L3"
        }
    }
    EXPECT_GE(p.host.threads_used, 1);
    EXPECT_FALSE(p.host.caches.empty());
    // --show renders the saved file without measuring.
    shown = run_ceiling({"machine", "--show", "--output", file.string()});
    EXPECT_EQ(shown.exit_code, 0) << shown.err;
    EXPECT_NE(shown.out.find("Compute roofs"), std::string::npos);

    // The scalar clock and the scalar FMA roof exist on every x86-64 machine with FMA.
    ASSERT_NE(p.clock("scalar", 1), nullptr);
#if defined(__SANITIZE_ADDRESS__)
    // A sanitizer build (Debug, instrumented loads and stores) checks that measuring is
    // memory-safe; its timings have no shape to check: caches do not show as plateaus.
    GTEST_SKIP() << "sanitizer build: the profile's physics is checked in the release build";
#endif
    EXPECT_GT(p.clock("scalar", 1)->hz.median, 1e8);
    // Every roof has its clock, but a matrix (tile) roof may instead say why not: the tile
    // unit is shared with the SMT sibling, and on a Xeon VM a neighbour there held it at half
    // rate for seconds at a time, too long for the chain search to tell (the profile's
    // "not measured here" names the roof and the reason). Scalar and vector roofs never.
    for (const auto& roof : p.compute_roofs) {
        EXPECT_GT(roof.ops_per_s.median, 0) << roof.name;
        EXPECT_LE(roof.ops_per_s.min, roof.ops_per_s.median) << roof.name;
        if (roof.clock_hz) continue;
        const std::string what = "clock of " + roof.name + " at " +
                                 (roof.threads == 1 ? std::string("1 thread")
                                                    : std::to_string(roof.threads) + " threads");
        const auto said = std::ranges::find_if(
            p.absent, [&](const auto& a) { return a.what == what && !a.reason.empty(); });
        EXPECT_TRUE(roof.engine == Engine::matrix && said != p.absent.end())
            << roof.name << " at " << roof.threads << " threads: no clock at the roof's own density"
            << (said == p.absent.end() ? ", and no reason given as \"" + what + "\"" : "");
    }
    // On a CPU the table knows, an FMA roof (a core's FMA units, clocked as they ran) lands
    // within 85-105 % of its theoretical value: below means the table claims units the core
    // does not use or a clock read too fast, above a table or clock that is too low. An
    // all-thread roof is held to it only where it scaled (>= 75 % of linear, as `machine`
    // reports): threads that compete for one core's units (vCPUs a host placed on one core)
    // measure the placement, not the table.
    // Roofs of this profile outside 85-105 % of their theoretical value (those compared).
    auto outside_theory = [](const MachineProfile& prof) {
        std::string out;
        for (const auto& roof : prof.compute_roofs) {
            // A count the measurement chose agrees with it by construction: not compared.
            if (!roof.theoretical_ops_per_s || roof.theoretical_from_measurement ||
                (roof.name.find("fma") == std::string::npos &&
                 roof.name.find("scalar") == std::string::npos))
                continue;
            const ComputeRoof* one = nullptr;
            for (const auto& other : prof.compute_roofs)
                if (other.name == roof.name && other.threads == 1) one = &other;
            if (roof.threads > 1 &&
                (!one || roof.ops_per_s.median < 0.75 * roof.threads * one->ops_per_s.median))
                continue;
            const double f = roof.ops_per_s.median / *roof.theoretical_ops_per_s;
            if (f < 0.85 || f > 1.05) out += " " + roof.name + "@" + std::to_string(roof.threads);
        }
        return out;
    };
    // A shared host can slow the clock chain or the roof in one moment and not the other (a
    // 2-thread fp64 roof read 1.36 x theory once here, then 1.00 in the next runs): one more
    // profile after a miss; a wrong table or a misread clock misses in both.
    // Likewise a level whose sweep points a busy neighbour scattered (the profile lists it
    // as absent, with that reason).
    const auto levels_missing = [](const MachineProfile& prof) {
        return !prof.best_bandwidth_roof("L1", 1) || !prof.best_bandwidth_roof("DRAM", 1);
    };
    if ((!p.host.microarchitecture.empty() && !outside_theory(p).empty()) || levels_missing(p)) {
        const auto again = run_ceiling({"-q", "machine", "--quick", "--output", file.string()});
        ASSERT_EQ(again.exit_code, 0) << again.err;
        p = parse_machine_profile(testing::slurp(file));
    }
    if (!p.host.microarchitecture.empty()) {
        int checked = 0;
        for (const auto& roof : p.compute_roofs) {
            if (roof.name.find("fma") == std::string::npos &&
                roof.name.find("scalar") == std::string::npos)
                continue;
            ASSERT_TRUE(roof.theoretical_ops_per_s) << roof.name << ": " << roof.theoretical_source;
            // Where the table lists two counts the measurement picked one: no agreement to check.
            if (roof.theoretical_from_measurement) continue;
            if (roof.threads > 1) {
                const ComputeRoof* one = nullptr;
                for (const auto& other : p.compute_roofs)
                    if (other.name == roof.name && other.threads == 1) one = &other;
                if (!one || roof.ops_per_s.median < 0.75 * roof.threads * one->ops_per_s.median)
                    continue;
            }
            const double f = roof.ops_per_s.median / *roof.theoretical_ops_per_s;
            EXPECT_GE(f, 0.85) << roof.name << " at " << roof.threads
                               << " threads: " << roof.theoretical_source;
            EXPECT_LE(f, 1.05) << roof.name << " at " << roof.threads
                               << " threads: " << roof.theoretical_source;
            ++checked;
        }
        EXPECT_GE(checked, 2) << "no FMA roof compared with theory on " << p.host.microarchitecture;
    }
    // Every roof kernel either ran or is listed as absent with a reason.
    EXPECT_GE(p.compute_roofs.size() / static_cast<std::size_t>(p.host.threads_used > 1 ? 2 : 1) +
                  p.absent.size(),
              14u);
    ASSERT_NE(p.best_bandwidth_roof("L1", 1), nullptr);
    ASSERT_NE(p.best_bandwidth_roof("DRAM", 1), nullptr);
    // Caches are faster than memory.
    EXPECT_GT(p.best_bandwidth_roof("L1", 1)->bytes_per_s.median,
              p.best_bandwidth_roof("DRAM", 1)->bytes_per_s.median);
    ASSERT_GE(p.latencies.size(), 2u);
    EXPECT_LT(p.latencies.front().seconds.median, p.latencies.back().seconds.median);
    EXPECT_FALSE(p.sweep.empty());
}

TEST(MachineCommand, UnwritableOutputFailsBeforeMeasuringAndLeavesNothing) {
    TempDir dir;
    const auto blocker = dir / "file";
    { std::ofstream(blocker) << "x"; }
    const auto target = blocker / "profile.json";  // parent is a regular file
    const auto r = run_ceiling({"machine", "--quick", "--output", target.string()});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(target.string()), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

TEST(MachineCommand, BadUsageExitsTwoWithUsage) {
    for (const auto& args :
         std::vector<std::vector<std::string>>{{"machine", "--no-such-option"},
                                               {"no-such-command"},
                                               {},
                                               {"machine", "--threads", "0"},
                                               {"machine", "--threads", "many"}}) {
        const auto r = run_ceiling(args);
        EXPECT_EQ(r.exit_code, 2) << r.err;
        EXPECT_NE(r.err.find("--help"), std::string::npos) << r.err;
    }
    const auto too_many = run_ceiling({"machine", "--threads", "4096", "--output", "/dev/null"});
    EXPECT_EQ(too_many.exit_code, 2) << too_many.err;
    TempDir dir;
    const auto no_dir = run_ceiling(
        {"machine", "--storage-dir", "/no/such/dir", "--output", (dir / "p.json").string()});
    EXPECT_EQ(no_dir.exit_code, 2) << no_dir.err;
    EXPECT_NE(no_dir.err.find("--storage-dir /no/such/dir: not a directory"), std::string::npos)
        << no_dir.err;
}

TEST(MachineCommand, HelpExplainsOptionsAndExitsZero) {
    const auto r = run_ceiling({"machine", "--help"});
    EXPECT_EQ(r.exit_code, 0);
    for (const char* word :
         {"--quick", "--threads", "--output", "--json", "--show", "--storage-dir", "--no-storage"})
        EXPECT_NE(r.out.find(word), std::string::npos) << word;
    // Defaults are shown with their options.
    const auto run = run_ceiling({"run", "--help"});
    EXPECT_NE(run.out.find("--interval TEXT=10ms"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("--repeat INT:INT in [1 - 100000]=1"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace ceiling
