#pragma once
// What `ceiling doctor` found: one item per thing ceiling can measure, each available or
// not with the reason and the fix, plus the context that explains them (VM, paranoid).
// The machine room's survey fills it (agent/machine/pmu_survey.hpp); it is saved as JSON
// (schema_version 1) for machines and rendered as a table (agent/output/doctor_report.hpp).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ceiling {

struct DoctorItem {
    std::string id;     // stable key for --json: "cpu_pmu", "software_events", ...
    std::string title;  // for people: "CPU PMU (hardware counters)"
    bool available = false;
    std::string detail;  // available: what it gives; unavailable: why not
    std::string fix;     // unavailable: how to enable it (empty when nothing can be done)
    nlohmann::json facts = nlohmann::json::object();  // numbers and names, for machines
};

struct DoctorReport {
    static constexpr int schema_version = 1;
    std::string host;
    std::string kernel;
    std::string cpu;
    bool virtual_machine = false;
    std::string hypervisor;
    std::optional<int> perf_event_paranoid;
    std::vector<DoctorItem> items;

    const DoctorItem* find(std::string_view id) const;
};

nlohmann::json to_json(const DoctorReport& r);

}  // namespace ceiling
