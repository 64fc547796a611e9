#pragma once
// The context a run record keeps beside its measurements: when and where it ran, which
// ceiling, which rank of a multi-process job, and the performance-relevant environment
// variables (an allowlist: the environment is where secrets live, so never all of it).

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "diagnosis/run_record.hpp"

namespace ceiling::measure {

// Variables that change how fast a program runs: thread counts, BLAS/oneDNN core and ISA
// selection, visible devices, allocator settings.
std::span<const std::string_view> environment_allowlist();

struct RankInfo {
    int rank = 0;
    std::optional<int> world_size;
    std::string source;  // the variable it came from
};
// The rank from the launcher's environment (Open MPI, PMI/MPICH, Slurm), first match wins.
// `getenv` is injectable for tests.
std::optional<RankInfo> detect_rank(const std::function<const char*(const char*)>& getenv);

// Fills created_at, hostname, working_directory, versions, environment and rank.
void fill_record_context(RunRecord& record);

// "out.json" with rank 3 -> "out.rank3.json" (every rank of a job writes its own file).
std::string with_rank(const std::string& path, std::optional<int> rank);

// "ceiling-run-20260101-120000.json": the default name, local time now; the n-th candidate
// for that second (n > 1) is "ceiling-run-20260101-120000-n.json", so that records made in
// the same second never replace each other.
std::string default_record_name(const std::string& stem, std::optional<int> rank, int n = 1);

// The first default_record_name candidate that names nothing yet.
std::string unused_record_name(const std::string& stem, std::optional<int> rank);

// Current UTC time as ISO 8601.
std::string iso8601_now();

}  // namespace ceiling::measure
