#include "diagnosis/work_bound.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "diagnosis/json_support.hpp"

namespace ceiling {

int default_threads(const MachineProfile& p) {
    if (p.host.threads_used > 0) return p.host.threads_used;
    return std::max(p.host.logical_cpus, 1);
}

std::string available_engines(const MachineProfile& p, Precision precision) {
    std::string out;
    for (std::size_t e = 0; e < engine_names.size(); ++e) {
        for (const auto& r : p.compute_roofs) {
            if (r.precision == precision && r.engine == static_cast<Engine>(e)) {
                out += (out.empty() ? "" : ", ") + std::string(engine_names[e]);
                break;
            }
        }
    }
    return out.empty() ? "none" : out;
}

WorkBound bound_work(const MachineProfile& profile, const Work& work, int threads) {
    if (!std::isfinite(work.ops) || work.ops < 0)
        throw std::invalid_argument("operations must be a non-negative number");
    if (!std::isfinite(work.compulsory_bytes) || work.compulsory_bytes < 0)
        throw std::invalid_argument("bytes must be a non-negative number");
    if (!std::isfinite(work.working_set_bytes) || work.working_set_bytes < 0)
        throw std::invalid_argument("working set must be a non-negative number");
    if (work.ops == 0 && work.compulsory_bytes == 0)
        throw std::invalid_argument("no work: operations and bytes are both 0");
    if (threads < 1) throw std::invalid_argument("threads must be at least 1");

    const Roofline roofline = make_roofline(profile, work.precision, work.engine, threads);
    if (!roofline.compute) {
        throw std::invalid_argument(
            "the machine profile has no " + std::string(to_string(work.precision)) + " " +
            std::string(to_string(work.engine)) + " compute roof (" +
            std::string(to_string(work.precision)) +
            " engines measured: " + available_engines(profile, work.precision) + ")");
    }
    if (roofline.levels.empty())
        throw std::invalid_argument("the machine profile has no bandwidth roof");

    WorkBound b;
    b.work = work;
    if (b.work.working_set_bytes == 0) b.work.working_set_bytes = work.compulsory_bytes;
    b.threads = threads;
    b.compute = *roofline.compute;
    if (b.compute.basis == RoofBasis::scaled) {
        b.findings.push_back({FindingKind::assumption,
                              "compute roof " + b.compute.name + " at " +
                                  std::to_string(b.compute.threads) + " threads derived from its " +
                                  std::to_string(b.compute.measured_threads) +
                                  "-thread measurement"});
    }
    if (b.compute.threads != threads) {
        b.findings.push_back(
            {FindingKind::assumption, std::to_string(threads) + " threads exceed the " +
                                          std::to_string(b.compute.threads) +
                                          " CPUs of the profile: roofs at " +
                                          std::to_string(b.compute.threads) + " threads"});
    }
    if (work.compulsory_bytes > 0) b.intensity_ops_per_byte = work.ops / work.compulsory_bytes;
    b.compute_floor_s = work.ops / b.compute.ops_per_s;

    const LevelRoof* home = roofline.level_for(b.work.working_set_bytes);
    for (const auto& l : roofline.levels) {
        LevelFloor f;
        f.roof = l;
        f.floor_s = work.compulsory_bytes / l.bandwidth.bytes_per_s;
        f.holds_working_set = &l == home;
        b.levels.push_back(f);
    }
    b.level = home->bandwidth.level;
    if (home->bandwidth.basis == RoofBasis::scaled) {
        b.findings.push_back(
            {FindingKind::assumption,
             b.level + " bandwidth roof at " + std::to_string(home->bandwidth.threads) +
                 " threads derived from its " + std::to_string(home->bandwidth.measured_threads) +
                 "-thread measurement"});
    }
    b.memory_floor_s = work.compulsory_bytes / home->bandwidth.bytes_per_s;
    b.floor_s = std::max(b.compute_floor_s, b.memory_floor_s);
    b.ridge_ops_per_byte = ridge_ops_per_byte(b.compute.ops_per_s, home->bandwidth.bytes_per_s);
    b.attainable_ops_per_s =
        b.intensity_ops_per_byte
            ? attainable_ops_per_s(b.compute.ops_per_s, *b.intensity_ops_per_byte,
                                   home->bandwidth.bytes_per_s)
            : b.compute.ops_per_s;
    b.bound = b.compute_floor_s >= b.memory_floor_s ? Bound::compute : Bound::bandwidth;
    const DecisionRow& row = decision_row(b.bound);
    // Nothing was measured of a program: only moves the bound itself licenses.
    b.first_move = first_move_for(row, Evidence{});
    b.levers = levers_for(row, Evidence{});
    return b;
}

void to_json(nlohmann::json& j, const LevelFloor& l) {
    j = l.roof;
    j["floor_s"] = l.floor_s;
    j["holds_working_set"] = l.holds_working_set;
}

void to_json(nlohmann::json& j, const WorkBound& b) {
    j = {{"ops", b.work.ops},
         {"compulsory_bytes", b.work.compulsory_bytes},
         {"working_set_bytes", b.work.working_set_bytes},
         {"precision", b.work.precision},
         {"engine", b.work.engine},
         {"threads", b.threads},
         {"intensity_ops_per_byte", b.intensity_ops_per_byte},
         {"compute", b.compute},
         {"compute_floor_s", b.compute_floor_s},
         {"levels", b.levels},
         {"level", b.level},
         {"memory_floor_s", b.memory_floor_s},
         {"floor_s", b.floor_s},
         {"ridge_ops_per_byte", b.ridge_ops_per_byte},
         {"attainable_ops_per_s", b.attainable_ops_per_s},
         {"bound", b.bound},
         {"first_move", b.first_move},
         {"levers", b.levers},
         {"findings", b.findings}};
}

}  // namespace ceiling
