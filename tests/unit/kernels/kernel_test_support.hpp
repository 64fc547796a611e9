#pragma once
// Shared by the kernel tests: set up a case at a small shape, run it once, verify it; find
// a kernel's loop in its disassembly.

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

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

// One disassembled instruction: its address and its text ("vfmadd231ps %zmm1,...").
using Instruction = std::pair<unsigned long, std::string>;

// The instructions of an `objdump -d --no-show-raw-insn` line ("  4a0:\tvmovups ..."), or
// false for any other line.
inline bool parse_instruction(const std::string& line, Instruction& out) {
    const auto colon = line.find(":\t");
    if (colon == std::string::npos) return false;
    try {
        out = {std::stoul(line.substr(0, colon), nullptr, 16), line.substr(colon + 2)};
    } catch (...) {
        return false;
    }
    if (!out.second.empty() && out.second.back() == '\n') out.second.pop_back();
    return true;
}

struct LoopCheck {
    int count = -1;       // `mnemonic` instructions on `reg` registers in the loop's body
    bool spills = false;  // a `reg` register to or from the stack inside it
};

// Of a function's innermost loops (a backward jump with no other backward jump inside), the
// one whose body holds the most `mnemonic` instructions on `reg` registers ("%zmm"): a
// kernel's main loop. (An outer jump, such as a prefetch program's way back into the loop,
// spans several loops.) An accumulator array the compiler failed to keep in registers shows
// as `reg` operands on (%rsp).
inline LoopCheck busiest_inner_loop(const std::vector<Instruction>& lines,
                                    const std::string& mnemonic, const std::string& reg) {
    std::vector<std::pair<std::size_t, unsigned long>> back;  // (jump's index, target)
    for (std::size_t j = 0; j < lines.size(); ++j) {
        const auto& text = lines[j].second;
        if (text.rfind("j", 0) != 0) continue;
        const auto sp = text.find_first_of(" \t");
        if (sp == std::string::npos) continue;
        try {
            const unsigned long target =
                std::stoul(text.substr(text.find_first_not_of(" \t", sp)), nullptr, 16);
            if (target < lines[j].first) back.emplace_back(j, target);
        } catch (...) {
        }
    }
    LoopCheck best;
    for (const auto& [j, target] : back) {
        const bool nested = std::any_of(back.begin(), back.end(), [&](const auto& o) {
            return o.first != j && lines[o.first].first >= target && o.first < j;
        });
        if (nested) continue;
        LoopCheck loop{0, false};
        for (std::size_t i = 0; i <= j; ++i) {
            if (lines[i].first < target) continue;
            const auto& text = lines[i].second;
            if (text.find(mnemonic) != std::string::npos && text.find(reg) != std::string::npos)
                ++loop.count;
            if (text.find("(%rsp)") != std::string::npos && text.find(reg) != std::string::npos)
                loop.spills = true;
        }
        if (loop.count > best.count) best = loop;
    }
    return best;
}

}  // namespace ceiling::kernels::test
