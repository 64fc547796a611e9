// Roof kernels: each computes exactly what it claims (checked on the CPU that runs the
// test), its loop body holds exactly the instructions it claims (read from the
// disassembly of the built library), and it agrees with the diagnosis ISA table.

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "diagnosis/peak_table.hpp"
#include "kernels/buffer.hpp"
#include "kernels/cpu_features.hpp"
#include "kernels/roofs/bandwidth.hpp"
#include "kernels/roofs/compute.hpp"
#include "kernels/roofs/latency.hpp"

namespace ceiling::kernels {
namespace {

bool runnable(bool (*supported)(const CpuFeatures&), bool needs_amx) {
    if (!supported(cpu_features())) return false;
    return !needs_amx || request_amx_permission().empty();
}

TEST(ComputeRoofKernels, ComputeExactlyWhatTheyClaim) {
    int ran = 0;
    for (const auto& k : compute_kernels()) {
        if (!runnable(k.supported, k.needs_amx_permission)) continue;
        EXPECT_EQ(verify_compute_kernel(k), "") << k.roof;
        ++ran;
    }
    if (ran == 0) GTEST_SKIP() << "no roof kernel runs on this CPU";
}

TEST(ComputeRoofKernels, CheckDetectsAWrongResult) {
    // The check must be able to fail: a kernel that does nothing is caught.
    for (const auto& k : compute_kernels()) {
        if (!runnable(k.supported, k.needs_amx_permission)) continue;
        ComputeKernel broken = k;
        broken.run = [](std::int64_t, RoofOperands*) {};
        EXPECT_NE(verify_compute_kernel(broken), "") << k.roof;
        return;
    }
    GTEST_SKIP() << "no roof kernel runs on this CPU";
}

TEST(ComputeRoofKernels, AgreeWithTheIsaTable) {
    for (const auto& k : compute_kernels()) {
        const auto* cls = find_instruction_class(k.roof);
        ASSERT_NE(cls, nullptr) << k.roof << " missing from diagnosis/peak_table.cpp";
        EXPECT_DOUBLE_EQ(cls->ops_per_instruction, k.ops_per_instruction) << k.roof;
    }
    EXPECT_EQ(compute_kernels().size(), instruction_classes().size());
}

// Disassembly of the kernels library, one vector of instruction lines per symbol.
std::map<std::string, std::vector<std::string>> disassemble() {
    const std::string cmd = std::string("objdump -d --no-show-raw-insn ") + CEILING_KERNELS_ARCHIVE;
    std::map<std::string, std::vector<std::string>> out;
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) return out;
    char line[4096];
    std::string current;
    while (fgets(line, sizeof line, pipe)) {
        std::string s(line);
        const auto lt = s.find('<'), gt = s.find(">:");
        if (lt != std::string::npos && gt != std::string::npos && s[0] != ' ')
            current = s.substr(lt + 1, gt - lt - 1);
        else if (!current.empty() && s.find(':') != std::string::npos && s[0] == ' ')
            out[current].push_back(s);
    }
    pclose(pipe);
    return out;
}

// Instructions in the loop body: between the backward branch's target and the branch.
std::vector<std::string> loop_body(const std::vector<std::string>& lines) {
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::istringstream in(lines[i]);
        std::string addr, mnemonic, target;
        in >> addr >> mnemonic >> target;
        if (mnemonic != "jne") continue;
        for (std::size_t j = 0; j < i; ++j) {
            std::string a = lines[j].substr(0, lines[j].find(':'));
            a.erase(0, a.find_first_not_of(' '));
            if (a == target) return {lines.begin() + static_cast<std::ptrdiff_t>(j),
                                     lines.begin() + static_cast<std::ptrdiff_t>(i)};
        }
    }
    return {};
}

std::size_t count(const std::vector<std::string>& body, const std::string& mnemonic,
                  const std::string& reg) {
    std::size_t n = 0;
    for (const auto& l : body) {
        std::istringstream in(l);
        std::string addr, m, operands;
        in >> addr >> m;
        if (!m.empty() && m.front() == '{') in >> m;  // encoding prefix such as {vex}
        in >> operands;
        if (m == mnemonic && operands.find(reg) != std::string::npos) ++n;
    }
    return n;
}

TEST(ComputeRoofKernels, LoopBodyHoldsTheClaimedInstructions) {
    const auto dis = disassemble();
    if (dis.empty()) GTEST_SKIP() << "objdump unavailable";
    for (const auto& k : compute_kernels()) {
        const auto it = dis.find(std::string(k.symbol));
        ASSERT_NE(it, dis.end()) << k.symbol << " not in " << CEILING_KERNELS_ARCHIVE;
        const auto body = loop_body(it->second);
        ASSERT_FALSE(body.empty()) << k.symbol << ": no loop found";
        // The loop holds the claimed instructions and nothing else but the counter.
        EXPECT_EQ(count(body, std::string(k.mnemonic), "%" + std::string(k.reg)),
                  static_cast<std::size_t>(k.instructions_per_iteration))
            << k.symbol;
        EXPECT_EQ(body.size(), static_cast<std::size_t>(k.instructions_per_iteration) + 1)
            << k.symbol << ": unexpected instructions in the loop";
    }
}

TEST(ClockKernels, ChainLengthMatchesTheDisassembly) {
    const auto dis = disassemble();
    if (dis.empty()) GTEST_SKIP() << "objdump unavailable";
    // Scalar and AMX chains use `add reg, reg`; vector widths use vpaddd on register 13.
    const std::map<std::string, std::pair<std::string, std::string>> chain = {
        {"scalar", {"add", "%r"}}, {"amx", {"add", "%r"}}, {"128", {"vpaddd", "%xmm13"}},
        {"256", {"vpaddd", "%ymm13"}}, {"512", {"vpaddd", "%zmm13"}}};
    for (const auto& ck : clock_kernels()) {
        const auto it = dis.find(std::string(ck.symbol));
        ASSERT_NE(it, dis.end()) << ck.symbol;
        const auto body = loop_body(it->second);
        ASSERT_FALSE(body.empty()) << ck.symbol;
        const auto& [m, reg] = chain.at(std::string(ck.width));
        EXPECT_EQ(count(body, m, reg), static_cast<std::size_t>(ck.chain_per_iteration)) << ck.symbol;
    }
}

TEST(ClockKernels, RunWhereSupported) {
    auto ops = std::make_unique<RoofOperands>();
    fill_check_operands(*find_compute_kernel("fp32_fma128"), *ops);
    int ran = 0;
    for (const auto& ck : clock_kernels()) {
        if (!runnable(ck.supported, ck.needs_amx_permission)) continue;
        ck.run(100, ops.get());
        ++ran;
    }
    EXPECT_GE(ran, 1);  // the scalar chain runs everywhere
}

class BandwidthKernels : public ::testing::TestWithParam<const BandwidthImpl*> {};

TEST_P(BandwidthKernels, ComputeTheRightValues) {
    const BandwidthImpl& impl = *GetParam();
    if (!impl.supported(cpu_features())) GTEST_SKIP() << impl.isa << " not supported here";
    const std::size_t n = 3 * bandwidth_block_floats;
    Buffer buf(bandwidth_footprint_floats(n, 3) * sizeof(float));
    float* a = buf.floats();
    float* b = a + n + bandwidth_array_pad_floats;
    float* c = b + n + bandwidth_array_pad_floats;
    for (std::size_t i = 0; i < n; ++i) {
        a[i] = static_cast<float>(i % 7);
        b[i] = static_cast<float>(i % 5);
        c[i] = static_cast<float>(i % 3);
    }
    // read: sum of a over 2 passes
    const double want = 2.0 * std::accumulate(a, a + n, 0.0);
    EXPECT_DOUBLE_EQ(run_bandwidth_kernel(impl, "read", a, n, 2), want);
    // triad: a = b + 0.5 c
    run_bandwidth_kernel(impl, "triad", a, n, 1);
    for (std::size_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(a[i], b[i] + 0.5f * c[i]) << i;
    // copy: second array = first
    run_bandwidth_kernel(impl, "copy", a, n, 1);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(b[i], a[i]) << i;
    // write: last pass writes its pass index
    run_bandwidth_kernel(impl, "write", a, n, 3);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(a[i], 2.0f) << i;
    EXPECT_THROW(run_bandwidth_kernel(impl, "read", a, n + 1, 1), std::invalid_argument);
    EXPECT_THROW(run_bandwidth_kernel(impl, "scan", a, n, 1), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(AllIsas, BandwidthKernels, ::testing::ValuesIn(bandwidth_impls().begin(), bandwidth_impls().end()),
                         [](const auto& param_info) { return std::string(param_info.param->isa); });

TEST(PointerChase, VisitsEveryLineInOneCycle) {
    constexpr std::size_t lines = 1000, stride = 64;
    Buffer buf(lines * stride);
    ASSERT_EQ(build_chase(buf.data(), lines * stride, stride, 7), lines);
    std::vector<bool> seen(lines);
    void* p = buf.data();
    for (std::size_t i = 0; i < lines; ++i) {
        const auto idx = static_cast<std::size_t>(static_cast<std::byte*>(p) - buf.data()) / stride;
        ASSERT_FALSE(seen[idx]) << "cycle shorter than the buffer";
        seen[idx] = true;
        p = chase(p, 1);
    }
    EXPECT_EQ(p, buf.data());  // back at the start after exactly `lines` steps
    EXPECT_EQ(chase(buf.data(), static_cast<std::int64_t>(lines) * 3), buf.data());
    EXPECT_THROW(build_chase(buf.data(), stride, stride, 1), std::invalid_argument);
}

TEST(CpuFeatures, NamesRoundTrip) {
    const auto& f = cpu_features();
    EXPECT_FALSE(f.vendor.empty());
    for (const auto& name : f.names()) EXPECT_TRUE(f.has(name)) << name;
    EXPECT_FALSE(f.has("no_such_feature"));
    EXPECT_TRUE(f.sse2);  // x86-64 baseline
}

}  // namespace
}  // namespace ceiling::kernels
