#include "kernels/parallel.hpp"

#include <mutex>
#include <vector>

#include <omp.h>
#include <pthread.h>
#include <sched.h>

namespace ceiling::kernels {
namespace {

std::vector<int> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus.push_back(c);
    if (cpus.empty()) cpus.push_back(0);
    return cpus;
}

const std::vector<int>& cpus() {
    static const std::vector<int> c = allowed_cpus();
    return c;
}

void pin_to(int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
}

// Pin OpenMP worker i (i >= 1) to the i-th allowed CPU for good; done once per team size.
// The calling thread (OpenMP thread 0) is pinned only while a region runs (MasterPin):
// pinned for good it would also confine everything else the program runs on it, e.g.
// TBB inside OpenCV then sees one CPU and starts no workers.
void pin_team(int threads) {
    static std::mutex m;
    static int pinned = 0;
    std::lock_guard lock(m);
    if (threads <= pinned) return;
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num();
        if (t > 0) pin_to(cpus()[static_cast<std::size_t>(t) % cpus().size()]);
    }
    pinned = threads;
}

// Pins the calling thread to the first allowed CPU and restores its mask afterwards.
class MasterPin {
  public:
    MasterPin() {
        saved_ok_ = pthread_getaffinity_np(pthread_self(), sizeof saved_, &saved_) == 0;
        pin_to(cpus().front());
    }
    ~MasterPin() {
        if (saved_ok_) pthread_setaffinity_np(pthread_self(), sizeof saved_, &saved_);
    }
    MasterPin(const MasterPin&) = delete;
    MasterPin& operator=(const MasterPin&) = delete;

  private:
    cpu_set_t saved_{};
    bool saved_ok_ = false;
};

}  // namespace

int available_cpus() { return static_cast<int>(cpus().size()); }

std::vector<int> team_cpus(int threads) {
    std::vector<int> out;
    for (int t = 0; t < threads; ++t)
        out.push_back(cpus()[static_cast<std::size_t>(t) % cpus().size()]);
    return out;
}

void run_on_threads(int threads, const std::function<void(int)>& fn) {
    if (threads <= 1) {
        fn(0);
        return;
    }
    pin_team(threads);
    const MasterPin master;
#pragma omp parallel num_threads(threads)
    fn(omp_get_thread_num());
}

void empty_parallel_region(int threads) {
#pragma omp parallel num_threads(threads)
    { asm volatile("" ::: "memory"); }
}

extern "C" __attribute__((noinline)) void ceiling_empty_call() { asm volatile(""); }

}  // namespace ceiling::kernels
