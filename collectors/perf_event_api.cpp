#include "collectors/perf_event_api.hpp"

#include <cerrno>

#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ceiling::collectors {

namespace {

class SystemPerfEventApi final : public PerfEventApi {
  public:
    int open(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd,
             unsigned long flags) override {
        // No glibc wrapper exists for perf_event_open.
        const long fd = syscall(SYS_perf_event_open, &attr, pid, cpu, group_fd, flags);
        return fd < 0 ? -errno : static_cast<int>(fd);
    }
    int read(int fd, RawCount& out) override {
        std::uint64_t buf[3] = {};
        for (;;) {
            const ssize_t n = ::read(fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) return -errno;
            if (n != static_cast<ssize_t>(sizeof buf)) return -EIO;
            break;
        }
        out = {buf[0], buf[1], buf[2]};
        return 0;
    }
    int ioctl(int fd, unsigned long request) override {
        return ::ioctl(fd, request, 0) < 0 ? -errno : 0;
    }
    void close(int fd) override { ::close(fd); }
};

}  // namespace

PerfEventApi& system_perf_event_api() {
    static SystemPerfEventApi api;
    return api;
}

}  // namespace ceiling::collectors
