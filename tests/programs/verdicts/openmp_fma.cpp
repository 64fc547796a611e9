// Labelled program: compute bound. An OpenMP parallel region (one thread per CPU) running
// an fp32 FMA loop inside a range pushed by the thread that starts the region. The team
// already exists (a first parallel region made it), as in a program that has run for a while.
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

    const std::int64_t iterations = fma_iterations_for(0.25);
    const double ops = fma_ops_per_iteration() * static_cast<double>(iterations) * threads;
    nvtxRangePushA(declared("omp fma", ops, 0).c_str());
#pragma omp parallel
    {
        const int i = omp_get_thread_num();
        keep[static_cast<std::size_t>(i)] = fma_loop(iterations, static_cast<float>(i));
    }
    nvtxRangePop();
    float sum = 0;
    for (float v : keep) sum += v;
    std::printf("threads=%d checksum=%g\n", threads, sum);
    return 0;
}
