#include "diagnosis/doctor_report.hpp"

namespace ceiling {

const DoctorItem* DoctorReport::find(std::string_view id) const {
    for (const auto& i : items)
        if (i.id == id) return &i;
    return nullptr;
}

nlohmann::json to_json(const DoctorReport& r) {
    nlohmann::json j;
    j["schema_version"] = DoctorReport::schema_version;
    j["host"] = r.host;
    j["kernel"] = r.kernel;
    j["cpu"] = r.cpu;
    j["virtual_machine"] = r.virtual_machine;
    j["hypervisor"] = r.hypervisor.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.hypervisor);
    j["perf_event_paranoid"] =
        r.perf_event_paranoid ? nlohmann::json(*r.perf_event_paranoid) : nlohmann::json(nullptr);
    nlohmann::json items = nlohmann::json::array();
    for (const auto& i : r.items) {
        nlohmann::json e;
        e["id"] = i.id;
        e["title"] = i.title;
        e["available"] = i.available;
        // "reason" when unavailable, "detail" when available: what a script checks first.
        e[i.available ? "detail" : "reason"] = i.detail;
        e["fix"] = i.fix.empty() ? nlohmann::json(nullptr) : nlohmann::json(i.fix);
        e["facts"] = i.facts;
        items.push_back(std::move(e));
    }
    j["items"] = std::move(items);
    return j;
}

}  // namespace ceiling
