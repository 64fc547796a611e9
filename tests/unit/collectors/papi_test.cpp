// PAPI: its view of this machine turned into a capability with the reason, on a recorded
// status (this VM's) and on the real library; presets counted when a PMU exists.

#include <gtest/gtest.h>

#include "collectors/papi_api.hpp"

namespace ceiling::collectors {
namespace {

// What PAPI 7.0 reported on the 2-core KVM guest without a PMU (papi_component_avail).
PapiStatus kvm_guest_status() {
    PapiStatus s;
    s.initialised = true;
    s.version = "7.0.0.0";
    s.hardware_counters = 0;
    s.virtual_machine = true;
    s.vm_vendor = "KVMKVMKVM";
    s.components = {
        {"perf_event", "Linux perf_event CPU counters", true, "Error libpfm4 no default PMU found",
         0, 0},
        {"perf_event_uncore", "Linux perf_event CPU uncore and northbridge", true,
         "No uncore PMUs or events found", 0, 0},
        {"sysdetect", "System info detection component", false, "", 0, 0},
    };
    return s;
}

TEST(PapiCapability, NoPmuInAVmNamesTheDisabledComponentAndTheFix) {
    const Capability c = papi_capability(kvm_guest_status());
    EXPECT_FALSE(c.available);
    EXPECT_NE(c.reason.find("0 hardware counters"), std::string::npos) << c.reason;
    EXPECT_NE(c.reason.find("Error libpfm4 no default PMU found"), std::string::npos) << c.reason;
    EXPECT_NE(c.reason.find("no CPU PMU exposed in this VM (KVMKVMKVM)"), std::string::npos)
        << c.reason;
    EXPECT_NE(c.fix.find("virtual PMU"), std::string::npos);
}

TEST(PapiCapability, CountersAvailableOrLibraryMissing) {
    PapiStatus ok = kvm_guest_status();
    ok.virtual_machine = false;
    ok.hardware_counters = 10;
    ok.components[0].disabled = false;
    EXPECT_TRUE(papi_capability(ok).available);
    EXPECT_NE(papi_capability(ok).reason.find("10 hardware counters"), std::string::npos);

    PapiStatus absent;
    absent.error = "ceiling was built without PAPI";
    EXPECT_FALSE(papi_capability(absent).available);
    EXPECT_NE(papi_capability(absent).fix.find("libpapi-dev"), std::string::npos);
}

class FakePapi : public PapiApi {
  public:
    PapiStatus status() override { return {}; }
    bool event_exists(std::string_view name) override { return name != "PAPI_SP_OPS"; }
    int start(const std::vector<std::string>& events, bool& multiplexed, std::string&) override {
        started = events;
        multiplexed = events.size() > 2;  // pretend two counters
        return 7;
    }
    bool stop(int, std::vector<long long>& values, std::string&) override {
        values = {100, 200, 300};
        return true;
    }
    std::vector<std::string> started;
};

TEST(PapiCollector, CountsTheDefinedPresetsAndWarnsAboutTheRest) {
    FakePapi papi;
    PapiCollector c(&papi);
    c.start();
    EXPECT_EQ(papi.started,
              (std::vector<std::string>{"PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_DP_OPS"}));
    const Readings r = c.stop();
    ASSERT_EQ(r.values.size(), 3u);
    EXPECT_EQ(r.values[2].name, "papi:PAPI_DP_OPS");
    EXPECT_EQ(r.values[2].unit, "flop");
    EXPECT_EQ(r.values[2].value, 300);
    EXPECT_TRUE(r.values[2].low_confidence) << "multiplexed";
    bool undefined = false, multiplexed = false;
    for (const auto& w : r.warnings) {
        undefined |= w.find("PAPI_SP_OPS is not defined") != std::string::npos;
        multiplexed |= w.find("multiplexed") != std::string::npos;
    }
    EXPECT_TRUE(undefined);
    EXPECT_TRUE(multiplexed);
}

TEST(PapiOnThisMachine, ReportsUnavailableWithoutCrashingOrZeros) {
    auto papi = make_papi_api();
    const PapiStatus s = papi->status();
    const Capability c = papi_capability(s);
    if (c.available) GTEST_SKIP() << "PAPI counts hardware events here: " << c.reason;
    EXPECT_FALSE(c.reason.empty());
    if (s.initialised && s.virtual_machine) {
        EXPECT_NE(c.reason.find("no CPU PMU exposed"), std::string::npos) << c.reason;
    }
    PapiCollector collector;
    EXPECT_FALSE(collector.probe().available);
}

}  // namespace
}  // namespace ceiling::collectors
