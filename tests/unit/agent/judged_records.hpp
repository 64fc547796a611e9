#pragma once
// Synthetic run records for the tests that judge regions (region_judging_test) and those that
// attribute work to them before judging (region_attribution_test): regions of five timed
// instances with declared work, a record of them against the synthetic profile, and the
// verdict and findings of one region.

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "diagnosis/run_record.hpp"
#include "diagnosis/statistics.hpp"
#include "tests/unit/diagnosis/diagnosis_fixtures.hpp"

namespace ceiling::judge::judged {

inline RunRecord record_of(std::vector<RecordedRegion> regions, double wall_s) {
    RunRecord rec;
    rec.kind = RecordKind::run;
    rec.machine_profile = testing::synthetic_profile();
    rec.whole.durations_s = {wall_s};
    rec.whole.duration_s = summarize(rec.whole.durations_s);
    Execution e;
    e.wall_s = wall_s;
    rec.executions.push_back(e);
    rec.regions = std::move(regions);
    return rec;
}

inline RecordedRegion timed_region(const std::string& path, std::optional<Work> work,
                                   double seconds) {
    RecordedRegion r;
    r.path = r.name = path;
    r.instances = 5;
    r.threads = 1;
    r.processes = 1;
    r.total_s_per_execution = {5 * seconds};
    r.measurement.name = path;
    r.measurement.work = work;
    r.measurement.durations_s = std::vector<double>(5, seconds);
    r.measurement.duration_s = summarize(r.measurement.durations_s);
    return r;
}

// A timed region whose process kept `busy` cores busy (to 0.001) while the host's other
// processes kept 0.05: the usual start of a judging test.
inline RecordedRegion busy_region(const std::string& path, std::optional<Work> work, double seconds,
                                  double busy) {
    RecordedRegion r = timed_region(path, work, seconds);
    r.busy_cores = busy;
    r.busy_cores_error = 0.001;
    r.other_busy_cores = 0.05;
    return r;
}

inline Work fp32(double ops, double bytes) {
    Work w;
    w.ops = ops;
    w.compulsory_bytes = bytes;
    return w;
}

inline const Diagnosis& verdict(const RunRecord& rec, const std::string& path) {
    for (const auto& v : rec.region_diagnoses)
        if (v.path == path) return v.diagnosis;
    throw std::runtime_error("no verdict for " + path);
}

inline bool has_finding(const Diagnosis& d, const std::string& words) {
    return std::any_of(d.findings.begin(), d.findings.end(),
                       [&](const Finding& f) { return f.detail.find(words) != std::string::npos; });
}

}  // namespace ceiling::judge::judged
