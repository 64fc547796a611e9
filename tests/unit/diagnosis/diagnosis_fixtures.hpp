#pragma once
// Shared by the diagnosis tests: the synthetic machine profile in tests/data (round
// numbers: fp32 FMA roof 143.7 GFLOP/s and DRAM triad 125.1 GB/s at 4 threads) and small
// builders for measurements.

#include <fstream>
#include <sstream>
#include <string>

#include "diagnosis/machine_profile.hpp"
#include "diagnosis/measurement.hpp"
#include "diagnosis/statistics.hpp"

namespace ceiling::testing {

inline std::string read_test_file(const std::string& name) {
    std::ifstream in(std::string(CEILING_TEST_DATA) + "/" + name, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

inline MachineProfile synthetic_profile() {
    return parse_machine_profile(read_test_file("profile_synthetic.json"));
}

// A DRAM roof of one sweep kernel at `threads`, its median `bytes_per_s`.
inline BandwidthRoof dram_roof(const std::string& kernel, int threads, double bytes_per_s) {
    BandwidthRoof r;
    r.level = "DRAM";
    r.kernel = kernel;
    r.threads = threads;
    r.bytes_per_s.median = bytes_per_s;
    return r;
}

// A summary of `count` identical samples: the median is exactly `seconds`, no spread.
inline Summary steady(double seconds, std::size_t count = 5) {
    return summarize(std::vector<double>(count, seconds));
}

// A piece of analytic work timed at `seconds` per execution.
inline Measurement timed_work(const Work& w, double seconds, int threads = 4) {
    Measurement m;
    m.name = "work";
    m.threads = threads;
    m.work = w;
    m.durations_s = std::vector<double>(5, seconds);
    m.duration_s = steady(seconds);
    return m;
}

}  // namespace ceiling::testing
