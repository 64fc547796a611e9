// Roof kernels: each computes exactly what it claims (checked on the CPU that runs the
// test), its loop body holds exactly the instructions it claims (read from the
// disassembly of the built library), and it agrees with the diagnosis ISA table.

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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
    // -C: the chained kernels are template instantiations, named by their demangled names.
    const std::string cmd =
        std::string("objdump -d -C --no-show-raw-insn ") + CEILING_KERNELS_ARCHIVE;
    std::map<std::string, std::vector<std::string>> out;
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) return out;
    char line[4096];
    std::string current;
    while (fgets(line, sizeof line, pipe)) {
        std::string s(line);
        // "0000000000000000 <name>:" where a demangled name may hold '<' itself.
        const auto lt = s.find(" <"), gt = s.rfind(">:");
        if (lt != std::string::npos && gt != std::string::npos && s[0] != ' ')
            current = s.substr(lt + 2, gt - lt - 2);
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
            if (a == target)
                return {lines.begin() + static_cast<std::ptrdiff_t>(j),
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

// The distinct destination registers (the last operand) of the loop's `mnemonic` lines:
// the independent chains the loop keeps in flight.
std::size_t destinations(const std::vector<std::string>& body, const std::string& mnemonic) {
    std::set<std::string> regs;
    for (const auto& l : body) {
        std::istringstream in(l);
        std::string addr, m, operands;
        in >> addr >> m;
        if (!m.empty() && m.front() == '{') in >> m;
        in >> operands;
        if (m == mnemonic) regs.insert(operands.substr(operands.rfind(',') + 1));
    }
    return regs.size();
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
        // As many independent chains as the table's accumulators (the correctness check
        // reads that many): 24 in the 512-bit loops, whose latency x ports 12 did not
        // cover on Zen 5 (vdpbf16ps).
        EXPECT_EQ(destinations(body, std::string(k.mnemonic)),
                  static_cast<std::size_t>(k.accumulators))
            << k.symbol;
        if (k.reg == "zmm") EXPECT_GE(k.accumulators, 24) << k.symbol;
    }
}

// The symbol of a disassembled function whose demangled name starts with `prefix` (a
// function's name in objdump -C output is followed by its parameter list).
const std::vector<std::string>* find_symbol(
    const std::map<std::string, std::vector<std::string>>& dis, const std::string& prefix) {
    for (const auto& [name, lines] : dis)
        if (name.rfind(prefix, 0) == 0 &&
            (name.size() == prefix.size() || name[prefix.size()] == '('))
            return &lines;
    return nullptr;
}

TEST(ClockKernels, ChainLengthMatchesTheDisassembly) {
    const auto dis = disassemble();
    if (dis.empty()) GTEST_SKIP() << "objdump unavailable";
    // Every clock counts cycles with a chain of scalar `add reg, reg`: a vector chain
    // (vpaddd zmm) advances every 2 cycles on Zen 4 and read its clock at half.
    for (const auto& ck : clock_kernels()) {
        const auto* lines = find_symbol(dis, std::string(ck.symbol));
        ASSERT_NE(lines, nullptr) << ck.symbol;
        const auto body = loop_body(*lines);
        ASSERT_FALSE(body.empty()) << ck.symbol;
        EXPECT_EQ(count(body, "add", "%r"), static_cast<std::size_t>(ck.chain_per_iteration))
            << ck.symbol;
    }
}

TEST(ChainedRoofKernels, LoopIsTheRoofsLoopPlusTheChain) {
    const auto dis = disassemble();
    if (dis.empty()) GTEST_SKIP() << "objdump unavailable";
    for (const auto& k : compute_kernels()) {
        const auto runs = chained_runs(k.roof);
        ASSERT_FALSE(runs.empty()) << k.roof << " has no chained variants";
        for (std::size_t i = 1; i < runs.size(); ++i)
            EXPECT_LT(runs[i - 1].chain, runs[i].chain) << k.roof;
        for (const auto& r : runs) {
            const std::string name = "ceiling::kernels::chained::" + std::string(k.roof) + "<" +
                                     std::to_string(r.chain) + ">::run";
            const auto* lines = find_symbol(dis, name);
            ASSERT_NE(lines, nullptr) << name;
            const auto body = loop_body(*lines);
            ASSERT_FALSE(body.empty()) << name;
            EXPECT_EQ(count(body, std::string(k.mnemonic), "%" + std::string(k.reg)),
                      static_cast<std::size_t>(k.instructions_per_iteration))
                << name;
            EXPECT_EQ(count(body, "add", "%r"), static_cast<std::size_t>(r.chain)) << name;
            // Roof instructions, the chain and the loop counter, nothing else.
            EXPECT_EQ(body.size(),
                      static_cast<std::size_t>(k.instructions_per_iteration + r.chain) + 1)
                << name;
        }
    }
}

TEST(ChainedRoofKernels, TheChainSetsTheTimeOnceItIsLongEnough) {
    // The method itself: with a chain far longer than the roof's instructions need, an
    // iteration takes `chain` cycles, so doubling the chain doubles the time; below that the
    // roof's instructions bind. Checked on fp32 scalar FMAs (every x86-64 CPU with FMA).
    const auto* k = find_compute_kernel("fp32_scalar");
    if (!k || !runnable(k->supported, false)) GTEST_SKIP() << "no FMA on this CPU";
    auto ops = std::make_unique<RoofOperands>();
    fill_check_operands(*k, *ops);
    const auto time_of = [&](int chain) {
        for (const auto& r : chained_runs(k->roof))
            if (r.chain == chain) {
                double best = 1e30;
                for (int rep = 0; rep < 15; ++rep) {
                    timespec a{}, b{};
                    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
                    r.run(20000, ops.get());
                    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
                    best = std::min(best, static_cast<double>(b.tv_sec - a.tv_sec) +
                                              1e-9 * static_cast<double>(b.tv_nsec - a.tv_nsec));
                }
                return best;
            }
        ADD_FAILURE() << "no chain of " << chain;
        return 0.0;
    };
    const double t48 = time_of(48), t96 = time_of(96);
    // A ratio in one run, not a speed: shared hosts move absolute times.
    EXPECT_NEAR(t96 / t48, 2.0, 0.3);
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
    // update: a = 0.5 a + 1 in place, twice
    std::vector<float> before(b, b + n);
    run_bandwidth_kernel(impl, "update", b, n, 2);
    for (std::size_t i = 0; i < n; ++i)
        ASSERT_FLOAT_EQ(b[i], 0.5f * (0.5f * before[i] + 1) + 1) << i;
    // write: last pass writes its pass index
    run_bandwidth_kernel(impl, "write", a, n, 3);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(a[i], 2.0f) << i;
    EXPECT_THROW(run_bandwidth_kernel(impl, "read", a, n + 1, 1), std::invalid_argument);
    EXPECT_THROW(run_bandwidth_kernel(impl, "scan", a, n, 1), std::invalid_argument);
}

// An array larger than L2 is read as eight segments side by side (bandwidth_impl.hpp): every
// element still counts once per pass, the segments' ends included.
TEST_P(BandwidthKernels, ReadsAnArrayBeyondL2InSegments) {
    const BandwidthImpl& impl = *GetParam();
    if (!impl.supported(cpu_features())) GTEST_SKIP() << impl.isa << " not supported here";
    const std::size_t n =
        (cache_sizes().l2 / sizeof(float) / bandwidth_block_floats + 3) * bandwidth_block_floats;
    Buffer buf(n * sizeof(float));
    float* a = buf.floats();
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> small(-8, 8);  // integers: the sums are exact
    for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<float>(small(rng));
    a[n / 8 - 1] = 1000.0f;  // the last element of the first segment, and of the array
    a[n - 1] = -3000.0f;
    const double want = 3.0 * std::accumulate(a, a + n, 0.0);
    EXPECT_DOUBLE_EQ(run_bandwidth_kernel(impl, "read", a, n, 3), want);
}

INSTANTIATE_TEST_SUITE_P(AllIsas, BandwidthKernels,
                         ::testing::ValuesIn(bandwidth_impls().begin(), bandwidth_impls().end()),
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
