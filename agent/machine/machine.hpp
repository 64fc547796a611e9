#pragma once
// `ceiling machine`: measures this host's ceilings into a MachineProfile.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "diagnosis/machine_profile.hpp"

namespace ceiling::measure {

struct MachineOptions {
    bool quick = false;  // coarser sweep, fewer repeats: a profile in seconds
    int threads = 0;     // threads for the all-core roofs; 0 = every CPU we may run on
    // Called before each measured item with a short description (for progress display).
    std::function<void(const std::string&)> on_step;
    std::function<void(int)> add_steps;  // announces more items to come
    // Where the storage roof's test file goes (storage_roof.hpp); nullopt: not measured.
    std::optional<std::filesystem::path> storage_dir = std::filesystem::path(".");
};

MachineProfile measure_machine(const MachineOptions& options);

// The pieces, each appending to the profile (used by measure_machine, callable alone).
void measure_clocks(MachineProfile& p, const std::vector<int>& thread_counts,
                    const MachineOptions& o);
void measure_compute_roofs(MachineProfile& p, const std::vector<int>& thread_counts,
                           const MachineOptions& o);
void measure_bandwidth_roofs(MachineProfile& p, const std::vector<int>& thread_counts,
                             const MachineOptions& o);
void measure_latencies(MachineProfile& p, const MachineOptions& o);
// Progress steps of the two above, known before they run: the progress total is set once
// (it grew from 39 to 47 while `machine` ran).
int memory_steps(const MachineProfile& p, std::size_t thread_counts, bool quick);
// "1 thread", "2 threads": how the profile's steps and absences name a thread count.
std::string threads_label(int threads);
void measure_overheads(MachineProfile& p, int threads, const MachineOptions& o);
// The storage under o.storage_dir (storage_roof.hpp), or an absence saying why not.
void measure_storage_roof(MachineProfile& p, const MachineOptions& o);

// Whether a team's compute roof (`team`, on `cores` physical cores) is within a factor of
// 1 / scaling_floor of `cores` x one thread's (`single`). A compute roof is a property of each
// core, so a team on as many cores scales with them; turbo lowers the all-core clock (to ~0.6
// of the one-core clock with AVX-512 on a many-core Xeon), a busy SMT sibling on the host
// halves a core (invisible to a guest). measure_compute_roofs measures a roof outside this
// again and flags it noisy when it stays there.
inline constexpr double scaling_floor = 0.6;
bool scales_with_cores(double team, int cores, double single);

// Relative spread above which a roof is flagged noisy.
inline constexpr double noisy_spread = 0.10;

}  // namespace ceiling::measure
