// A process tree with known CPU work, for the inheritance test: the main process runs
// THREADS threads that each burn BURN_MS of CPU time, and a grandchild process (fork +
// exec of this program in "burn" mode) that burns GRANDCHILD_MS and touches TOUCH_MIB of
// fresh memory. Counters opened on the main process with inheritance must see all of it.
//
//   ceiling_spawn_tree tree THREADS BURN_MS GRANDCHILD_MS TOUCH_MIB
//   ceiling_spawn_tree burn BURN_MS TOUCH_MIB

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

double thread_cpu_s() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Burns `ms` milliseconds of this thread's CPU time (not wall time: a descheduled thread
// keeps burning until it has had its share).
void burn(int ms) {
    const double end = thread_cpu_s() + ms * 1e-3;
    volatile double x = 1.0;
    while (thread_cpu_s() < end)
        for (int i = 0; i < 10000; ++i) x = x * 1.0000001 + 1e-9;
}

// Touches `mib` MiB of fresh anonymous memory one 4 KiB page at a time (no transparent
// huge pages, so each page is one fault).
void touch(int mib) {
    if (mib <= 0) return;
    const std::size_t bytes = static_cast<std::size_t>(mib) << 20;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) std::exit(3);
    madvise(p, bytes, MADV_NOHUGEPAGE);
    auto* c = static_cast<volatile char*>(p);
    for (std::size_t i = 0; i < bytes; i += 4096) c[i] = 1;
    munmap(p, bytes);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 4 && std::strcmp(argv[1], "burn") == 0) {
        burn(std::atoi(argv[2]));
        touch(std::atoi(argv[3]));
        return 0;
    }
    if (argc != 6 || std::strcmp(argv[1], "tree") != 0) {
        std::fprintf(stderr, "usage: %s tree THREADS BURN_MS GRANDCHILD_MS TOUCH_MIB\n", argv[0]);
        return 2;
    }
    const int threads = std::atoi(argv[2]), burn_ms = std::atoi(argv[3]);
    std::string grandchild_ms = argv[4], touch_mib = argv[5];

    const pid_t pid = fork();
    if (pid == 0) {
        std::string self = "/proc/self/exe", mode = "burn";
        char* args[] = {self.data(), mode.data(), grandchild_ms.data(), touch_mib.data(), nullptr};
        execv(args[0], args);
        _exit(127);
    }
    std::vector<std::thread> team;
    for (int t = 0; t < threads; ++t) team.emplace_back(burn, burn_ms);
    for (auto& t : team) t.join();
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 4;
}
