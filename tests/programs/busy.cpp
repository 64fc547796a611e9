// A CPU-bound program with a fixed amount of work (not a fixed time), so that any
// overhead added by measuring it shows up as a longer run: scripts/bench-collectors.
//
//   ceiling_busy ITERATIONS

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s ITERATIONS\n", argv[0]);
        return 2;
    }
    const long long n = std::atoll(argv[1]);
    // A dependent chain: one iteration per few cycles, no memory traffic.
    unsigned long long x = 88172645463325252ULL;
    for (long long i = 0; i < n; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    // xorshift never reaches 0 from a non-zero seed, but the compiler cannot know: the
    // loop's result is used, so the loop stays.
    if (x == 0) std::puts("0");
    return 0;
}
