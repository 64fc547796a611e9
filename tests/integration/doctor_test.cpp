// `ceiling doctor` end to end on this machine: it reports (exit 0) what can be measured,
// with reasons for what cannot, as text and as JSON.

#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/integration/process.hpp"

namespace ceiling {
namespace {

using testing::run_ceiling;

const nlohmann::json* find_item(const nlohmann::json& report, const std::string& id) {
    for (const auto& i : report["items"])
        if (i["id"] == id) return &i;
    return nullptr;
}

bool cpu_pmu_registered() {
    for (const char* name : {"cpu", "cpu_core", "cpu_atom"})
        if (std::filesystem::exists(std::filesystem::path("/sys/bus/event_source/devices") / name))
            return true;
    return false;
}

TEST(DoctorCommand, JsonReportsThisMachine) {
    const auto r = run_ceiling({"doctor", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto report = nlohmann::json::parse(r.out);
    EXPECT_EQ(report["schema_version"], 1);
    for (const auto& i : report["items"]) {
        ASSERT_TRUE(i.contains("id") && i.contains("available") && i.contains("fix")) << i.dump();
        // Every unavailable item says why.
        if (!i["available"].get<bool>()) {
            ASSERT_TRUE(i["reason"].is_string()) << i.dump();
            EXPECT_FALSE(i["reason"].get<std::string>().empty()) << i.dump();
        }
    }
    for (const char* id :
         {"cpu_pmu", "perf_event_paranoid", "software_events", "libpfm4", "papi", "uncore",
          "energy", "cuda_driver", "gpus", "cupti", "gpu_counters", "amx", "pmu_self_validation"})
        EXPECT_NE(find_item(report, id), nullptr) << "missing item " << id;

    // Software events work in VMs and containers alike.
    const auto* sw = find_item(report, "software_events");
    ASSERT_NE(sw, nullptr);
    EXPECT_TRUE((*sw)["available"].get<bool>()) << sw->dump();

    // The CPU PMU: where the kernel registers none (this VM), unavailable with the reason.
    const auto* pmu = find_item(report, "cpu_pmu");
    ASSERT_NE(pmu, nullptr);
    if (!cpu_pmu_registered()) {
        EXPECT_FALSE((*pmu)["available"].get<bool>());
        if (report["virtual_machine"].get<bool>()) {
            EXPECT_NE((*pmu)["reason"].get<std::string>().find("no CPU PMU exposed in this VM"),
                      std::string::npos)
                << pmu->dump();
            EXPECT_NE((*pmu)["fix"].get<std::string>().find("virtual PMU"), std::string::npos);
        }
        const auto* validation = find_item(report, "pmu_self_validation");
        EXPECT_FALSE((*validation)["available"].get<bool>());
        // PAPI lists the counters of the CPU model, not those the kernel lets it open: never
        // "yes" beside a CPU PMU that is not there.
        const auto* papi = find_item(report, "papi");
        EXPECT_FALSE((*papi)["available"].get<bool>()) << papi->dump();
    }

    // No GPU here (no NVIDIA device node): the GPU items say so.
    if (!std::filesystem::exists("/dev/nvidia0")) {
        const auto* gpus = find_item(report, "gpus");
        EXPECT_FALSE((*gpus)["available"].get<bool>()) << gpus->dump();
        EXPECT_EQ((*gpus)["facts"]["count"], 0);
    }
    EXPECT_EQ(report["perf_event_paranoid"].is_number(),
              std::filesystem::exists("/proc/sys/kernel/perf_event_paranoid"));
}

TEST(DoctorCommand, TextListsItemsWithFixes) {
    const auto r = run_ceiling({"doctor", "--no-self-test"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("perf_event software events"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("CPU PMU (hardware counters)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" available."), std::string::npos) << r.out;
    if (!cpu_pmu_registered()) {
        EXPECT_NE(r.out.find("fix: "), std::string::npos) << r.out;
    }
}

TEST(DoctorCommand, UnknownOptionIsUsageError) {
    const auto r = run_ceiling({"doctor", "--frobnicate"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("frobnicate"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ceiling
