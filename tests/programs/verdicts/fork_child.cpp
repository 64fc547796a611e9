// Labelled program: regions in a child process. The parent opens `launch` (no declared
// work) and forks; the child runs an fp32 FMA loop on one thread per CPU inside its own
// range, so its CPU time is the child's, and the parent waits. Compute bound.
#include <thread>
#include <vector>

#include <sys/wait.h>

#include "verdict_work.hpp"

int main() {
    using namespace verdicts;
    const int threads = cpus();
    const std::int64_t iterations = fma_iterations_for(0.25);
    nvtxRangePushA("launch");
    const pid_t child = fork();
    if (child == 0) {
        const double ops = fma_ops_per_iteration() * static_cast<double>(iterations) * threads;
        std::vector<float> keep(static_cast<std::size_t>(threads), 0.0f);
        nvtxRangePushA(declared("child fma", ops, 0).c_str());
        std::vector<std::thread> team;
        for (int i = 0; i < threads; ++i)
            team.emplace_back([&, i] {
                keep[static_cast<std::size_t>(i)] = fma_loop(iterations, static_cast<float>(i));
            });
        for (auto& t : team) t.join();
        nvtxRangePop();
        std::printf("child checksum=%g\n", static_cast<double>(keep[0]));
        std::fflush(stdout);
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    nvtxRangePop();
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
