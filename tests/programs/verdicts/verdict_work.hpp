#pragma once
// What the labelled programs of the acceptance corpus share: ordinary code of the kinds
// people annotate with NVTX (an FMA loop with independent accumulators, a stream, a chase),
// sized at run time to a fixed duration on this machine, each declaring the work it does
// in its range message ("name {ops=... bytes=...}"), computed from the loop counts it runs.
// Nothing here knows the roofs: the verdict must follow from the method.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>

#include <immintrin.h>
#include <nvtx3/nvToolsExt.h>
#include <sched.h>
#include <unistd.h>

namespace verdicts {

// The CPUs this process may run on: a "use every CPU" program starts one thread per CPU.
inline int cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    return CPU_COUNT(&set) > 0 ? CPU_COUNT(&set) : 1;
}

inline double now_s() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

inline double thread_cpu_s() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// The last-level cache, for working sets that must live in DRAM; 32 MiB when unknown. From
// sysfs first: in a VM glibc's sysconf can report the host's (384 MiB on a Zen 5 guest whose
// sysfs says 32 MiB), which made the triad's arrays 2.3 GB and each run seconds of page
// faults.
inline std::size_t llc_bytes() {
    std::size_t largest = 0;
    for (int i = 0; i < 16; ++i) {
        const std::string path =
            "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size";
        std::FILE* f = std::fopen(path.c_str(), "r");
        if (!f) continue;
        unsigned long kib = 0;
        char unit = 0;
        if (std::fscanf(f, "%lu%c", &kib, &unit) == 2 && unit == 'K')
            largest = std::max<std::size_t>(largest, kib << 10);
        std::fclose(f);
    }
    if (largest > 0) return largest;
    for (int name : {_SC_LEVEL4_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
        const long v = sysconf(name);
        if (v > 0) return static_cast<std::size_t>(v);
    }
    return std::size_t{32} << 20;
}

// "name {ops=... bytes=... working_set=...}" as the NVTX message; amounts in full, zero
// bytes and working set left out.
inline std::string declared(const std::string& name, double ops, double bytes,
                            double working_set = 0) {
    char buf[256];
    if (working_set > 0)
        std::snprintf(buf, sizeof buf, "%s {ops=%.0f bytes=%.0f working_set=%.0f}", name.c_str(),
                      ops, bytes, working_set);
    else if (bytes > 0)
        std::snprintf(buf, sizeof buf, "%s {ops=%.0f bytes=%.0f}", name.c_str(), ops, bytes);
    else  // work in registers: no compulsory bytes to declare
        std::snprintf(buf, sizeof buf, "%s {ops=%.0f}", name.c_str(), ops);
    return buf;
}

// fp32 multiply-adds over 12 independent accumulators (an FMA's latency is several cycles,
// so one chain would measure latency, not throughput), in the widest vectors the CPU has.
// The chains are unrolled so that the accumulators live in registers (as an array indexed
// in a loop they would go through memory, and the loop would measure stores).
// Returns a value the caller keeps so the loop cannot be removed. Operations per iteration:
// fma_ops_per_iteration() (an FMA counts 2).
constexpr int fma_chains = 12;

__attribute__((target("avx512f"))) inline float fma_loop_avx512(std::int64_t iterations,
                                                                float seed) {
    __m512 acc[fma_chains];
    for (int i = 0; i < fma_chains; ++i) acc[i] = _mm512_set1_ps(seed + static_cast<float>(i));
    const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
    for (std::int64_t k = 0; k < iterations; ++k)
#pragma GCC unroll 16
        for (int i = 0; i < fma_chains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    __m512 s = acc[0];
    for (int i = 1; i < fma_chains; ++i) s = _mm512_add_ps(s, acc[i]);
    alignas(64) float out[16];
    _mm512_store_ps(out, s);
    float sum = 0;
    for (float v : out) sum += v;
    return sum;
}

__attribute__((target("avx2,fma"))) inline float fma_loop_avx2(std::int64_t iterations,
                                                               float seed) {
    __m256 acc[fma_chains];
    for (int i = 0; i < fma_chains; ++i) acc[i] = _mm256_set1_ps(seed + static_cast<float>(i));
    const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    for (std::int64_t k = 0; k < iterations; ++k)
#pragma GCC unroll 16
        for (int i = 0; i < fma_chains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    __m256 s = acc[0];
    for (int i = 1; i < fma_chains; ++i) s = _mm256_add_ps(s, acc[i]);
    alignas(32) float out[8];
    _mm256_store_ps(out, s);
    float sum = 0;
    for (float v : out) sum += v;
    return sum;
}

inline bool has_avx512() { return __builtin_cpu_supports("avx512f"); }

inline double fma_ops_per_iteration() { return 2.0 * fma_chains * (has_avx512() ? 16 : 8); }

inline float fma_loop(std::int64_t iterations, float seed) {
    return has_avx512() ? fma_loop_avx512(iterations, seed) : fma_loop_avx2(iterations, seed);
}

// Iterations of fma_loop that take about `seconds` on one thread here.
inline std::int64_t fma_iterations_for(double seconds) {
    std::int64_t n = 1 << 16;
    volatile float keep = 0;
    for (;;) {
        const double t0 = now_s();
        keep = keep + fma_loop(n, 1.0f);
        const double t = now_s() - t0;
        if (t > 0.02) return static_cast<std::int64_t>(static_cast<double>(n) * seconds / t);
        n *= 4;
    }
}

}  // namespace verdicts
