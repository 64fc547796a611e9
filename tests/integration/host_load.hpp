#pragma once
// What the host did beside a test, for tests that skip or set a run aside when other work
// took the CPUs: the whole machine's busy CPU-seconds and this test's own reaped children's.
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace ceiling::testing {

// Busy and stolen CPU-seconds of the whole host so far (/proc/stat, USER_HZ ticks).
inline double host_busy_s() {
    std::ifstream in("/proc/stat");
    std::string cpu;
    double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
    return (user + nice + system + irq + softirq + steal) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// CPU-seconds of this test's reaped descendants: ceiling and the programs it ran.
inline double own_children_s() {
    rusage u{};
    getrusage(RUSAGE_CHILDREN, &u);
    auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
    return s(u.ru_utime) + s(u.ru_stime);
}

}  // namespace ceiling::testing
