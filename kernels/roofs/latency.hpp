#pragma once
// Memory latency by dependent pointer chase: each load's address is the previous load's
// value, so loads cannot overlap and time per step is the latency of the level that
// holds the chain. The chain visits every cache line of the buffer in random order, so
// hardware prefetchers cannot guess the next line.

#include <cstddef>
#include <cstdint>

namespace ceiling::kernels {

// Links one pointer per `stride` bytes of [buf, buf + bytes) into one random cycle.
// Returns the number of links (bytes / stride). stride >= sizeof(void*).
std::size_t build_chase(std::byte* buf, std::size_t bytes, std::size_t stride, std::uint64_t seed);

// Follows `steps` links from start and returns where it stopped (keeps the loads live).
void* chase(void* start, std::int64_t steps);

}  // namespace ceiling::kernels
