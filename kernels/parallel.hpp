#pragma once
// The thread team every multi-threaded kernel runs on (OpenMP underneath), with each
// thread pinned to its own CPU of the process's affinity set so that "all threads"
// means one thread per core and repeated runs use the same cores.

#include <functional>
#include <vector>

namespace ceiling::kernels {

// CPUs in this process's affinity mask (what "all threads" means).
int available_cpus();

// The CPUs a team of `threads` runs on, thread i on element i (some may repeat when
// threads exceed the allowed CPUs): what "cores in use" is counted from.
std::vector<int> team_cpus(int threads);

// Runs fn(thread_index) once on each of `threads` threads and returns when all are done.
void run_on_threads(int threads, const std::function<void(int)>& fn);

// An empty parallel region on `threads` threads: the fork/join cost of the team.
void empty_parallel_region(int threads);

// Declared noinline and called through a pointer: the cost of one call.
extern "C" void ceiling_empty_call();

}  // namespace ceiling::kernels
