// Which standard cases a suite run takes: quick within default within full, --kernels and
// --variants filter, unknown names list the valid ones.
#include "agent/suite/suite.hpp"

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace ceiling::measure {
namespace {

std::set<std::string> names(const std::vector<kernels::KernelCase>& cases) {
    std::set<std::string> out;
    for (const auto& c : cases) out.insert(c.kernel + "/" + c.problem + "/" + std::string(kernels::to_string(c.variant)) + "/" + c.shape);
    return out;
}

TEST(SuiteCases, QuickWithinStandardWithinFull) {
    const auto quick = names(select_cases({}, {}, CaseSet::quick));
    const auto standard = names(select_cases({}, {}, CaseSet::standard));
    const auto full = names(select_cases({}, {}, CaseSet::full));
    for (const auto& n : quick) EXPECT_TRUE(standard.count(n)) << n;
    for (const auto& n : standard) EXPECT_TRUE(full.count(n)) << n;
    EXPECT_LT(quick.size(), standard.size());
    // The on-request cases: only --full runs them.
    for (const char* n : {"gemm/fp32/library/4096x4096x4096", "gemm/fp32/naive/1024x1024x1024"}) {
        EXPECT_TRUE(full.count(n)) << n;
        EXPECT_FALSE(standard.count(n)) << n;
    }
}

TEST(SuiteCases, KernelsAndVariantsFilter) {
    for (const auto& c : select_cases({"gemm"}, {"optimized", "library"}, CaseSet::full)) {
        EXPECT_EQ(c.kernel, "gemm");
        EXPECT_NE(c.variant, kernels::Variant::naive);
    }
    EXPECT_THROW(select_cases({"gem"}, {}, CaseSet::standard), std::invalid_argument);
    EXPECT_THROW(select_cases({}, {"fast"}, CaseSet::standard), std::invalid_argument);
}

// The variants of one shape run back to back (their ratio is a comparison, and the host
// drifts between cases run seconds apart), each shape once, in the families' shape order.
TEST(SuiteCases, VariantsOfOneShapeRunBackToBack) {
    const auto cases = select_cases({}, {}, CaseSet::full);
    std::vector<std::string> groups;
    std::set<std::string> done;
    for (const auto& c : cases) {
        const std::string g = c.kernel + "/" + c.problem + "/" + c.shape + "/" +
                              std::string(kernels::to_string(c.work.device));
        if (!groups.empty() && groups.back() == g) continue;
        EXPECT_FALSE(done.count(g)) << g << " comes back after other shapes";
        done.insert(g);
        groups.push_back(g);
    }
    // GEMM fp32 512^3: naive, optimized, library adjacent.
    std::vector<std::string> at_512;
    for (const auto& c : cases)
        if (c.kernel == "gemm" && c.problem == "fp32" && c.shape == "512x512x512")
            at_512.emplace_back(kernels::to_string(c.variant));
    EXPECT_EQ(at_512, (std::vector<std::string>{"naive", "optimized", "library"}));
}

}  // namespace
}  // namespace ceiling::measure
