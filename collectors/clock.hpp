#pragma once
// The wall clock every measurement uses: monotonic, nanosecond resolution, unaffected by
// NTP steps (CLOCK_MONOTONIC; its resolution is reported by clock_getres, ~1 ns on Linux).

#include <cstdint>
#include <ctime>

namespace ceiling::collectors {

inline std::int64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline double now_s() { return static_cast<double>(now_ns()) * 1e-9; }

// CPU time consumed by the calling thread (CLOCK_THREAD_CPUTIME_ID): excludes the time the
// OS ran something else on this CPU, so on a shared machine it times what the hardware did
// while we ran. A system call (~0.2 us), so read it around work, not inside it.
inline std::int64_t thread_cpu_ns() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// CPU time consumed by the whole calling process, every thread (CLOCK_PROCESS_CPUTIME_ID).
inline std::int64_t process_cpu_ns() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Wall-clock seconds taken by fn().
template <typename F>
double time_s(F&& fn) {
    const std::int64_t t0 = now_ns();
    fn();
    return static_cast<double>(now_ns() - t0) * 1e-9;
}

}  // namespace ceiling::collectors
