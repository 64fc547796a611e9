// Labelled program: bandwidth bound. a[i] = b[i] + s * c[i] on one thread per CPU over three
// arrays that together span the far end of `ceiling machine`'s sweep (4x the last-level
// cache, at least 512 MiB), so every pass streams from DRAM, even past cache a VM does not
// show (at 2x the shown cache each, a Zen 5 guest still ran partly from it). Each thread
// touches its own slice first (outside the range), as a parallel initialisation does. The
// arrays are on 2 MiB pages where the kernel allows (MADV_HUGEPAGE), as in a tuned streaming
// program and as ceiling's roofs are measured: on 4 KiB pages in a VM, page walks hold a
// stream well below the machine's bandwidth (0.6 of it measured here), a different bound.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <thread>
#include <vector>

#include <sys/mman.h>

#include "verdict_work.hpp"

namespace {

void for_slices(int threads, std::size_t n, const auto& body) {
    std::vector<std::thread> team;
    for (int t = 0; t < threads; ++t)
        team.emplace_back([&, t] {
            const std::size_t begin =
                n * static_cast<std::size_t>(t) / static_cast<std::size_t>(threads);
            const std::size_t end =
                n * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(threads);
            body(begin, end);
        });
    for (auto& th : team) th.join();
}

struct Free {
    void operator()(float* p) const { std::free(p); }
};

std::unique_ptr<float[], Free> huge_page_floats(std::size_t n) {
    constexpr std::size_t page = std::size_t{2} << 20;
    const std::size_t bytes = (n * sizeof(float) + page - 1) / page * page;
    auto* p = static_cast<float*>(std::aligned_alloc(page, bytes));
    if (!p) std::abort();
    madvise(p, bytes, MADV_HUGEPAGE);  // advisory: fine where THP is off
    return std::unique_ptr<float[], Free>(p);
}

}  // namespace

// `overcount`: the range declares twice the bytes the loop moves, a miscount the corpus must
// catch (verdicts_test.cpp: VerdictsOverCount), never set aside as the host's drift.
int main(int argc, char** argv) {
    using namespace verdicts;
    const double declared_per_moved = argc > 1 && std::string_view(argv[1]) == "overcount" ? 2 : 1;
    const int threads = cpus();
    const std::size_t n =
        std::max<std::size_t>(4 * llc_bytes(), std::size_t{512} << 20) / 3 / sizeof(float);
    const auto a = huge_page_floats(n), b = huge_page_floats(n), c = huge_page_floats(n);
    for_slices(threads, n, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) a[i] = 0, b[i] = 1, c[i] = 2;
    });
    const float s = 0.5f;
    auto pass = [&] {
        for_slices(threads, n, [&](std::size_t begin, std::size_t end) {
            float* __restrict x = a.get();
            const float* __restrict y = b.get();
            const float* __restrict z = c.get();
            const float k = s;
            for (std::size_t i = begin; i < end; ++i) x[i] = y[i] + k * z[i];
        });
    };
    // Passes for ~0.25 s here, from one timed pass.
    const double t0 = now_s();
    pass();
    const int passes = std::clamp(static_cast<int>(0.25 / std::max(now_s() - t0, 1e-6)), 3, 200);

    const double elements = static_cast<double>(n) * passes;
    // Per element: two loads and a store of 4 bytes, a multiply and an add.
    nvtxRangePushA(declared("triad", 2 * elements, declared_per_moved * 12 * elements,
                            12.0 * static_cast<double>(n))
                       .c_str());
    for (int p = 0; p < passes; ++p) pass();
    nvtxRangePop();
    std::printf("threads=%d passes=%d check=%g\n", threads, passes, static_cast<double>(a[n / 2]));
    return a[n / 2] == 2.0f ? 0 : 1;
}
