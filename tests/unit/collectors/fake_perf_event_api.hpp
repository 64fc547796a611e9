#pragma once
// A PerfEventApi that records what was opened and returns chosen counts, so event sets,
// multiplexing and error explanations are tested without a PMU.

#include <cerrno>
#include <functional>
#include <map>
#include <vector>

#include "collectors/perf_event_api.hpp"

namespace ceiling::collectors::testing {

class FakePerfEventApi : public PerfEventApi {
  public:
    struct Opened {
        perf_event_attr attr;
        pid_t pid;
        int cpu;
        bool open = true;
        bool enabled = false;
    };
    // Decides the result of each open: an fd-worthy 0, or -errno.
    std::function<int(const perf_event_attr&, pid_t, int)> open_result =
        [](const perf_event_attr&, pid_t, int) { return 0; };
    // The count each opened counter reads, by (type, config).
    std::function<RawCount(const perf_event_attr&)> count = [](const perf_event_attr&) {
        return RawCount{1000, 100, 100};
    };

    int open(const perf_event_attr& attr, pid_t pid, int cpu, int, unsigned long) override {
        if (const int r = open_result(attr, pid, cpu); r < 0) return r;
        opened.push_back({attr, pid, cpu});
        return static_cast<int>(opened.size()) + 99;  // fds 100, 101, ...
    }
    int read(int fd, RawCount& out) override {
        out = count(at(fd).attr);
        return 0;
    }
    int ioctl(int fd, unsigned long request) override {
        if (request == PERF_EVENT_IOC_ENABLE) at(fd).enabled = true;
        if (request == PERF_EVENT_IOC_DISABLE) at(fd).enabled = false;
        return 0;
    }
    void close(int fd) override { at(fd).open = false; }

    std::size_t open_count() const {
        std::size_t n = 0;
        for (const auto& o : opened) n += o.open ? 1 : 0;
        return n;
    }
    Opened& at(int fd) { return opened.at(static_cast<std::size_t>(fd - 100)); }
    std::vector<Opened> opened;
};

}  // namespace ceiling::collectors::testing
