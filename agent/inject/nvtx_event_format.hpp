#pragma once
// The files the NVTX injection library (libceiling_inject_nvtx.so) leaves for `ceiling run`,
// shared by the writer (agent/inject/nvtx_inject.cpp) and the reader (agent/run/region).
//
// Why files and not a pipe: each thread appends fixed-size events to its own memory-mapped
// file, so recording is a few stores (no system call, no lock) and whatever a crashing
// program recorded is already in the page cache when it dies.
//
// In the directory named by CEILING_NVTX_DIR, per loaded image (process, or new program
// image after exec) "IMAGE" = "<pid>-<load time ns>":
//   IMAGE.str           strings: repeated {u32 id, u32 length, bytes}; ids start at 1
//   IMAGE.peak          at exit (not where killed or left by _exit): a u64, the process's
//                       peak resident set in bytes (VmHWM)
//   IMAGE-<tid>-<n>.evt  thread tid's n-th chunk: EventFileHeader, then Events up to
//                        `capacity`; an Event whose kind is 0 ends the valid ones (the file
//                        is created zero-filled and `kind` is stored last, a release; the
//                        header's `magic` likewise), so `ceiling run` reads the chunks while
//                        the program writes them
// Times are CLOCK_MONOTONIC nanoseconds, the clock `ceiling run` uses for its own timing.
// cpu_time events come from any thread of the image, at most one per cpu_read_interval_ns:
// together they are the image's CPU-time timeline, which the reader interpolates at each
// range's ends (agent/run/region.cpp) to get the cores the process kept busy.
// thread_cpu_time events come from a thread that records ranges, at most one per
// cpu_read_interval_ns per thread: its own CPU time, so that what its ranges used can be told
// from what ranges open beside them on other threads used (a pipeline's stages).

#include <cstdint>

namespace ceiling::inject {

inline constexpr char nvtx_dir_env[] = "CEILING_NVTX_DIR";
inline constexpr std::uint32_t event_file_magic = 0x564e4543;  // "CENV" little-endian
inline constexpr std::uint32_t event_format_version = 1;
// Reading the process's CPU time is a system call (~1.5 us in a VM, where recording a range
// costs ~0.1 us): once per 100 us bounds it to ~1.5 % of one thread even for back-to-back
// ranges, and every range event then has a read at most this long before it.
inline constexpr std::int64_t cpu_read_interval_ns = 100'000;

enum class EventKind : std::uint8_t {
    none = 0,         // end of the valid events
    push = 1,         // push/pop range opened: string = message, domain
    pop = 2,          // innermost push/pop range of this thread (and domain) closed
    start = 3,        // start/end range opened: range_id, string, domain
    end = 4,          // start/end range range_id closed (possibly on another thread)
    mark = 5,         // instant: string, domain
    thread_name = 6,  // nvtxNameOsThread: range_id holds the named thread id, string the name
    cpu_time = 7,     // CPU time of the whole process (all its threads) at t_ns: range_id, in ns
    thread_cpu_time = 8,  // CPU time of this chunk's thread at t_ns: range_id, in ns
};

struct EventFileHeader {
    std::uint32_t magic = event_file_magic;
    std::uint32_t version = event_format_version;
    std::int32_t pid = 0;
    std::int32_t tid = 0;
    std::uint64_t load_ns = 0;   // the image's load time: with pid, names the image
    std::uint64_t capacity = 0;  // Events this chunk holds after the header
    std::uint32_t chunk = 0;     // 0, 1, ... per thread
    std::uint32_t event_bytes = 0;  // sizeof(Event), checked by the reader
    // What recording costs in this image, timed by the injection library once, at the
    // program's first NVTX call (calibrate_recording, nvtx_inject.cpp); 0 = not timed (a
    // capture from before these fields). range_ns: one push and its pop, with the name's
    // lookup; cpu_read_ns: one read of the process's CPU time (a cpu_time event);
    // calibration_ns: the timing itself, once per image (0 in a forked child, which
    // inherits its parent's costs).
    float range_ns = 0;
    float cpu_read_ns = 0;
    float calibration_ns = 0;
    // Events this thread could not record once the capture's file system ran out of space
    // (a small /dev/shm): counted here, in the chunk it was writing, while the program runs
    // on. 0 in captures from before it (the bytes were reserved, zero).
    std::uint32_t dropped_events = 0;
    std::uint8_t reserved[8] = {};
};
static_assert(sizeof(EventFileHeader) == 64);

struct Event {
    std::int64_t t_ns;
    std::uint64_t range_id;  // start/end: the nvtxRangeId_t; thread_name: the thread id
    std::uint32_t string;    // id in IMAGE.str; 0 = no message
    std::uint32_t domain;    // string id of the domain's name; 0 = default domain
    std::uint8_t kind;       // EventKind, stored last
    std::uint8_t reserved[7];
};
static_assert(sizeof(Event) == 32);

}  // namespace ceiling::inject
