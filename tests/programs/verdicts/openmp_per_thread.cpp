// Labelled program: compute bound. Every thread of an OpenMP parallel region (one per CPU)
// pushes its own range around its own share of an fp32 FMA loop, declaring that share: the
// region's instances run side by side, each one thread's work, while the process keeps
// every core busy. Judged one instance at a time against the cores busy, each read as
// 1/threads of the roof (latency bound) before instances side by side were summed.
#include <vector>

#include <omp.h>

#include "verdict_work.hpp"

int main() {
    using namespace verdicts;
    const int threads = cpus();
    omp_set_num_threads(threads);
    std::vector<float> keep(static_cast<std::size_t>(threads), 0.0f);
#pragma omp parallel
    keep[static_cast<std::size_t>(omp_get_thread_num())] = fma_loop(1000, 1.0f);

    const std::int64_t iterations = fma_iterations_for(0.05);
    const std::string share =
        declared("thread fma", fma_ops_per_iteration() * static_cast<double>(iterations), 0);
    for (int round = 0; round < 5; ++round) {
#pragma omp parallel
        {
            const int i = omp_get_thread_num();
            nvtxRangePushA(share.c_str());
            keep[static_cast<std::size_t>(i)] +=
                fma_loop(iterations, static_cast<float>(i + round));
            nvtxRangePop();
        }
    }
    float sum = 0;
    for (float v : keep) sum += v;
    std::printf("threads=%d checksum=%g\n", threads, sum);
    return 0;
}
