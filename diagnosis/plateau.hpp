#pragma once
// Finds the bandwidth plateaus of a working-set sweep and names them by memory level.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace ceiling {

struct SweepSample {
    double working_set_bytes = 0;
    double value = 0;  // e.g. median bytes/s at this size
};

struct Plateau {
    std::size_t first = 0;  // indices into the (size-sorted) samples, inclusive
    std::size_t last = 0;
    double median = 0;      // of the values on the plateau
    double min = 0;
    double max = 0;
    std::size_t points() const { return last - first + 1; }
};

struct PlateauOptions {
    // A point belongs to the current plateau while it is within this fraction of the
    // plateau's running median.
    double tolerance = 0.15;
    std::size_t min_points = 3;
};

// Samples must be sorted by working_set_bytes (throws std::invalid_argument otherwise).
// Values are first smoothed by a running median of three (one stray point, e.g. a
// neighbour's burst on a shared machine, cannot split a plateau); then greedy left-to-
// right segmentation extends a segment while the next smoothed point stays within
// tolerance of the segment's median, keeping segments of at least min_points. Plateau
// statistics come from the raw values.
std::vector<Plateau> detect_plateaus(std::span<const SweepSample> samples,
                                     const PlateauOptions& options = {});

// Capacity of one memory level as seen by the threads of the sweep (private caches
// multiply by the threads that use them). Listed from the innermost level outwards.
struct LevelCapacity {
    std::string level;  // "L1", "L2", "L3"
    double capacity_bytes = 0;
};

struct LabelledPlateau {
    std::string level;  // a LevelCapacity name or "DRAM"
    Plateau plateau;
};

// Names each plateau by the innermost level that holds the middle of its extent (geometric
// mean of its first and last size); beyond the outermost level it is "DRAM", and so is a
// last plateau that reaches past the outermost cache (a VM may show the host's whole L3
// while its share is far smaller). When two plateaus fall in one level the one with more
// points wins. Where no plateau holds the sweep's last point and that point lies beyond the
// outermost cache, memory is the tail of trailing points beyond it within the tolerance of
// the last one (fewer than min_points, maybe one): the bandwidth still falling at the end of
// the sweep (a host whose caches the VM does not show, such as two vCPUs on two L3s), or
// moving with the host, still has a memory roof, and one measured at the largest working
// sets rather than none (which would leave it to be guessed from another thread count).
// A plateau that spans cache levels (one as fast beyond a capacity as within it) gives a
// cache level without a plateau of its own the min_points or more of its points that lie
// inside that level, and keeps the rest; memory's plateau gives none. Ordered inner to outer.
std::vector<LabelledPlateau> label_plateaus(std::span<const SweepSample> samples,
                                            std::span<const Plateau> plateaus,
                                            std::span<const LevelCapacity> levels,
                                            const PlateauOptions& options = {});

}  // namespace ceiling
