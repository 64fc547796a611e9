#pragma once
// The clock a compute roof really runs at. A roof kernel gives instructions per second;
// the chained variants of its loop (kernels/roofs/chained_x86.cpp) add a dependent chain
// of L one-cycle adds per iteration. While the roof's instructions bind, an iteration
// takes the roof's time; from the first L where the chain binds it takes L cycles, so
// L / time is the clock at (nearly) the roof's own instruction density: the clock heavy
// 512-bit or AMX code really gets, which a separate clock loop at another density misses.
// That point, timed beside each repeat of the roof, gives the theoretical value its clock.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/roofs/compute.hpp"

namespace ceiling::measure {

struct BindingChain {
    const kernels::ChainedRun* run = nullptr;
    double density = 0;  // roof instruction rate at this point / the roof's own rate
};

// Walks the chain lengths upwards on `threads` threads and returns the first one whose
// iteration time exceeds the roof's by `binds_above` and whose clock the next length
// confirms (in the chain-bound range the clock barely moves with L; while the roof's
// instructions still bind, L / time grows with L). `reps` short runs per point, the
// fastest kept: a chain cannot run faster than one add per cycle, so noise only slows.
// nullopt with `why` when no length binds (an instruction slower than the longest chain).
// `shortest` is the shortest chain worth trying: a team on distinct cores binds at the
// length one thread bound at (cycles per iteration are a property of one core), and a
// shorter pick, a slowed point taken for a binding one, would read the clock low.
std::optional<BindingChain> find_binding_chain(
    const kernels::ComputeKernel& k, int threads,
    const std::vector<std::unique_ptr<kernels::RoofOperands>>& ops, std::int64_t iterations,
    int reps, std::string& why, int shortest = 0);

inline constexpr double binds_above = 1.08;
// Two chain-bound lengths read the same clock within this (a lower density may only raise
// it); a next length reading lower than this was slowed by the host and is timed again.
inline constexpr double confirm_below = 0.05;

}  // namespace ceiling::measure
