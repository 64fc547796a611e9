// Labelled program: a region whose work runs in processes it starts. The parent opens
// `workers fma` declaring the work of all of them, forks one worker process per CPU (each an
// fp32 FMA loop on one thread, no range of its own, as a multiprocessing pool's map or a
// subprocess would run), and waits: its own process is idle inside the region, the workers
// keep every CPU busy. Compute bound, judged at the workers' cores (not its own process's
// one, where it would read above that roof).
#include <vector>

#include <sys/wait.h>

#include "verdict_work.hpp"

int main() {
    using namespace verdicts;
    const int workers = cpus();
    const std::int64_t iterations = fma_iterations_for(0.25);
    const double ops = fma_ops_per_iteration() * static_cast<double>(iterations) * workers;
    nvtxRangePushA(declared("workers fma", ops, 0).c_str());
    std::vector<pid_t> pids;
    for (int i = 0; i < workers; ++i) {
        const pid_t pid = fork();
        if (pid == 0) {
            const float kept = fma_loop(iterations, static_cast<float>(i));
            std::printf("worker checksum=%g\n", static_cast<double>(kept));
            std::fflush(stdout);
            _exit(0);
        }
        if (pid > 0) pids.push_back(pid);
    }
    int failed = 0;
    for (const pid_t pid : pids) {
        int status = 0;
        waitpid(pid, &status, 0);
        failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    nvtxRangePop();
    return failed == 0 && static_cast<int>(pids.size()) == workers ? 0 : 1;
}
