#pragma once
// Shared by the kernel tests: set up a case at a small shape, run it once, verify it.

#include <gtest/gtest.h>

#include <string>

#include "kernels/registry.hpp"

namespace ceiling::kernels::test {

// Runs kernel/problem/variant/shape once and expects its verification to pass; skips
// (with the reason) when the case is unavailable on this machine or build.
inline void expect_verifies(std::string_view kernel, std::string_view problem, Variant variant,
                            std::string_view shape, int threads = 2) {
    const KernelCase c = make_case(kernel, problem, variant, shape);
    SCOPED_TRACE(c.name());
    if (!c.unavailable.empty()) GTEST_SKIP() << c.name() << ": " << c.unavailable;
    SetupOptions o;
    o.threads = threads;
    std::unique_ptr<PreparedKernel> k;
    try {
        k = prepare(c, o);
    } catch (const KernelUnavailable& e) {
        GTEST_SKIP() << e.what();
    }
    k->run();
    const Verification v = k->verify();
    EXPECT_TRUE(v.ok) << c.name() << ": " << v.detail;
    EXPECT_LE(v.max_error, v.tolerance) << v.detail;
    // A second run (on the next buffer set when rotated) must verify too.
    k->run();
    EXPECT_TRUE(k->verify().ok) << c.name() << " second run: " << k->verify().detail;
}

}  // namespace ceiling::kernels::test
