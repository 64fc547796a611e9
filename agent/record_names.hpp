#pragma once
// Names and constants of the run record that the measuring rooms write and the judging and
// rendering rooms read: kept here, below all of them, so no reader includes a measurer to
// learn a counter's name.

#include <cstddef>
#include <string>
#include <string_view>

#include "collectors/blocked_call.hpp"

namespace ceiling {

// The window over which the sampler counts how many threads were busy together (the run's
// "threads at once" figure): long enough to hold several 10 ms looks, short enough that
// threads taking turns are not seen as running together.
inline constexpr double thread_window_s = 0.5;

// The record's counter of one kind of wait's thread-seconds: "waiting_storage_flush_thread_s".
inline std::string waiting_counter(collectors::WaitKind k) {
    return "waiting_" + std::string(collectors::wait_kind_names[static_cast<std::size_t>(k)]) +
           "_thread_s";
}

// The counter of a region's operation calls per instance (a PyTorch model's op calls per call
// of it), which the tiny-ops finding reads.
inline constexpr std::string_view ops_per_call_counter = "op_calls_per_call";

}  // namespace ceiling
