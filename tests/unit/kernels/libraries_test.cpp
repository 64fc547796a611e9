#include "kernels/common/libraries.hpp"

#include <vector>

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include "kernels/parallel.hpp"

namespace ceiling::kernels {
namespace {

int thread_cpus() {
    cpu_set_t s;
    CPU_ZERO(&s);
    pthread_getaffinity_np(pthread_self(), sizeof s, &s);
    return CPU_COUNT(&s);
}

// run_on_threads pins its caller only while the region runs: pinned for good, the caller
// would confine what it runs next (OpenCV's TBB then sized its pool to 0 workers and ran
// single-threaded). Workers stay pinned, each to its own CPU.
TEST(RunOnThreads, LeavesTheCallersCpuMaskAsItWas) {
    if (available_cpus() < 2) GTEST_SKIP() << "one CPU: nothing to pin";
    const int before = thread_cpus();
    std::vector<int> inside(2);
    run_on_threads(2, [&](int t) { inside[static_cast<std::size_t>(t)] = thread_cpus(); });
    EXPECT_EQ(inside[0], 1) << "the caller runs pinned inside the region";
    EXPECT_EQ(inside[1], 1);
    EXPECT_EQ(thread_cpus(), before);
}

// Which OpenBLAS cores are fit for a CPU, and what to suggest otherwise.
TEST(OpenBlasCore, AdviceTable) {
    EXPECT_EQ(openblas_better_core("Prescott", true, true), "SkylakeX");
    EXPECT_EQ(openblas_better_core("Haswell", true, true), "SkylakeX");
    EXPECT_EQ(openblas_better_core("SkylakeX", true, true), "");
    EXPECT_EQ(openblas_better_core("Cooperlake", true, true), "");
    EXPECT_EQ(openblas_better_core("Prescott", false, true), "Haswell");
    EXPECT_EQ(openblas_better_core("Haswell", false, true), "");
    EXPECT_EQ(openblas_better_core("Prescott", false, false), "");  // nothing better exists
}

TEST(Libraries, InfoSaysWhatWasFound) {
#ifdef CEILING_HAVE_OPENBLAS
    EXPECT_TRUE(openblas_info().available);
    EXPECT_NE(openblas_info().description.find("core "), std::string::npos)
        << openblas_info().description;
#else
    EXPECT_FALSE(openblas_info().available);
#endif
#ifdef CEILING_HAVE_DNNL
    EXPECT_NE(dnnl_info().description.find("oneDNN"), std::string::npos);
#endif
#ifdef CEILING_HAVE_OPENCV
    EXPECT_NE(opencv_info().description.find("OpenCV"), std::string::npos);
#endif
}

}  // namespace
}  // namespace ceiling::kernels
