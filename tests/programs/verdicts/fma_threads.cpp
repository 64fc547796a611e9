// Labelled program: compute bound. A range pushed on the main thread around an fp32 FMA
// loop that runs on threads it starts, one per CPU (as a thread pool or intra-op threads
// do): the thread that recorded the range does none of the work.
// Prints "truth busy_cores=B": the work threads' CPU time over the range's wall time.
// `fma_threads K` starts K threads per CPU (a pool sized past the CPUs, or pools nested);
// `fma_threads 1 uneven` gives the first thread three times the others' share (a team
// that waits for its slowest thread).
#include <cstdlib>
#include <thread>
#include <vector>

#include "verdict_work.hpp"

int main(int argc, char** argv) {
    using namespace verdicts;
    const int per_cpu = argc > 1 ? std::max(1, std::atoi(argv[1])) : 1;
    const int threads = cpus() * per_cpu;
    const bool uneven = argc > 2 && std::string(argv[2]) == "uneven";
    const std::int64_t iterations = fma_iterations_for(0.25);
    const auto share = [&](int i) { return uneven && i == 0 ? 3 * iterations : iterations; };
    double ops = 0;
    for (int i = 0; i < threads; ++i)
        ops += fma_ops_per_iteration() * static_cast<double>(share(i));
    std::vector<double> cpu(static_cast<std::size_t>(threads), 0.0);
    std::vector<float> keep(static_cast<std::size_t>(threads), 0.0f);

    nvtxRangePushA(declared("fma", ops, 0).c_str());
    const double t0 = now_s();
    std::vector<std::thread> team;
    for (int i = 0; i < threads; ++i)
        team.emplace_back([&, i] {
            const double c0 = thread_cpu_s();
            keep[static_cast<std::size_t>(i)] = fma_loop(share(i), static_cast<float>(i));
            cpu[static_cast<std::size_t>(i)] = thread_cpu_s() - c0;
        });
    for (auto& t : team) t.join();
    const double wall = now_s() - t0;
    nvtxRangePop();

    double busy = 0, sum = 0;
    for (int i = 0; i < threads; ++i)
        busy += cpu[static_cast<std::size_t>(i)], sum += keep[static_cast<std::size_t>(i)];
    std::printf("truth busy_cores=%.4f threads=%d checksum=%g\n", busy / wall, threads, sum);
    return 0;
}
