#include <nvtx3/nvToolsExt.h>
#include <vector>
int main() {
    const size_t n = 1 << 26;  // 3 arrays x 256 MiB: far beyond the caches
    std::vector<float> a(n), b(n, 1.0f), c(n, 2.0f);
    for (int pass = 0; pass < 5; ++pass) {
        nvtxRangePushA("triad {ops=134M bytes=805M}");
        for (size_t i = 0; i < n; ++i) a[i] = b[i] + 0.5f * c[i];
        nvtxRangePop();
    }
    return a[n / 2] == 2.0f ? 0 : 1;
}
