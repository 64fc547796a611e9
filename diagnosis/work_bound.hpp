#pragma once
// The bound before the code: the time floor of a given amount of work on this machine.
// Compute floor = operations / compute roof; memory floor per level = bytes / that level's
// bandwidth; the floor is the larger of the compute floor and the memory floor of the level
// the working set lives in, which also names the bound (intensity vs ridge point).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "diagnosis/decision.hpp"
#include "diagnosis/diagnosis.hpp"
#include "diagnosis/machine_profile.hpp"
#include "diagnosis/roofline.hpp"
#include "diagnosis/work.hpp"

namespace ceiling {

struct LevelFloor {
    LevelRoof roof;
    double floor_s = 0;              // compulsory bytes / this level's bandwidth
    bool holds_working_set = false;  // the level the working set lives in
};

struct WorkBound {
    Work work;
    int threads = 1;
    std::optional<double> intensity_ops_per_byte;  // absent with zero bytes
    ComputeCeiling compute;
    double compute_floor_s = 0;
    std::vector<LevelFloor> levels;  // inner to outer: the hierarchical roofline
    std::string level;               // where the working set lives
    double memory_floor_s = 0;       // at that level
    double floor_s = 0;              // max(compute floor, memory floor)
    double ridge_ops_per_byte = 0;   // at that level
    double attainable_ops_per_s = 0;
    Bound bound =
        Bound::compute;  // compute when the compute floor is the larger (at the ridge too)
    std::string first_move;
    std::vector<LeverAdvice> levers;
    std::vector<Finding> findings;  // roofs derived from other thread counts, assumptions
};

// Throws std::invalid_argument (one line) for negative or non-finite work, no work at all,
// or a profile without the needed compute or bandwidth roof (naming what it has).
// A working set of 0 means "the compulsory bytes" (each byte touched once).
WorkBound bound_work(const MachineProfile& profile, const Work& work, int threads);

// Threads a command uses by default: the profile's all-core thread count.
int default_threads(const MachineProfile& profile);

// The compute roofs a profile has for a precision, in words ("fp32 vector, fp32 scalar"),
// for error messages.
std::string available_engines(const MachineProfile& profile, Precision precision);

void to_json(nlohmann::json& j, const LevelFloor& l);
void to_json(nlohmann::json& j, const WorkBound& b);

}  // namespace ceiling
