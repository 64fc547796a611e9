#pragma once
// The seam over the perf_event system calls. Everything above it (event sets, the PMU
// and software collectors, multiplexing) is tested with a fake that returns recorded
// counts; the real one is four system calls.

#include <cstdint>

#include <linux/perf_event.h>
#include <sys/types.h>

namespace ceiling::collectors {

// One counter's value as read with PERF_FORMAT_TOTAL_TIME_ENABLED | _RUNNING: when the
// kernel multiplexes more events than the PMU has counters, time_running < time_enabled.
struct RawCount {
    std::uint64_t value = 0;
    std::uint64_t time_enabled = 0;  // ns
    std::uint64_t time_running = 0;  // ns
};

class PerfEventApi {
  public:
    virtual ~PerfEventApi() = default;
    // perf_event_open(2). Returns a file descriptor, or -errno.
    virtual int open(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd,
                     unsigned long flags) = 0;
    // Reads one counter opened with the read_format above. Returns 0 or -errno.
    virtual int read(int fd, RawCount& out) = 0;
    // PERF_EVENT_IOC_ENABLE / _DISABLE / _RESET. Returns 0 or -errno.
    virtual int ioctl(int fd, unsigned long request) = 0;
    virtual void close(int fd) = 0;
};

// The kernel's.
PerfEventApi& system_perf_event_api();

}  // namespace ceiling::collectors
