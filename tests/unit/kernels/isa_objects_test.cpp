// One binary runs on every x86-64 because code compiled for an ISA (the *_avx2, *_avx512
// and *_amx files, kernels/CMakeLists.txt) runs only after the run-time CPU check. Two ways
// such code runs before any check, each read here from the built library's objects:
// - a dynamic initialiser (a .init_array entry): it runs at start-up. A GemmImpl built at
//   start-up in gemm_avx512.cpp killed every ceiling binary on an AVX2-only Zen 3 with
//   SIGILL (the ISA files' constants are constinit since);
// - a weak definition (an inline function or template instantiation outside an anonymous
//   namespace): the linker keeps one copy for the whole program, maybe the ISA file's, which
//   baseline code then calls.
#include <cstdio>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

std::vector<std::string> lines_of(const std::string& cmd) {
    std::vector<std::string> out;
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
    if (!pipe) return out;
    char buf[4096];
    while (fgets(buf, sizeof buf, pipe.get())) out.emplace_back(buf);
    return out;
}

const std::regex isa_member(R"((_avx2|_avx512|_amx)\.cpp\.o$)");

TEST(IsaObjects, RunNothingBeforeTheCpuCheck) {
    // "archive:member:address type name" for every defined symbol.
    const auto symbols =
        lines_of(std::string("nm -A --defined-only ") + CEILING_KERNELS_ARCHIVE + " 2>&1");
    ASSERT_FALSE(symbols.empty()) << "nm printed nothing for " << CEILING_KERNELS_ARCHIVE;
    std::set<std::string> members;
    std::vector<std::string> weak;
    const std::regex line(R"(^[^:]+:([^:]+):[0-9a-f]* ([A-Za-z]) (\S+))");
    for (const auto& l : symbols) {
        std::smatch m;
        if (!std::regex_search(l, m, line) || !std::regex_search(m[1].str(), isa_member)) continue;
        members.insert(m[1]);
        const char type = m[2].str()[0];
        // W/V: weak, u: unique global (inline variables, local statics of inline functions).
        if (type == 'W' || type == 'V' || type == 'u')
            weak.push_back(m[1].str() + ": " + m[3].str());
        // A file's C++ dynamic initialisation (GCC's and Clang's name for it).
        if (m[3].str().starts_with("_GLOBAL__sub_I_"))
            ADD_FAILURE() << m[1] << " has a dynamic initialiser: " << m[3];
    }
    // The ISA files exist (gemm, gemv, conv, nms, resize, the bandwidth roofs): finding none
    // means this test reads the wrong thing, not that all is well.
    EXPECT_GE(members.size(), 10u) << "ISA objects found: " << members.size();
    for (const auto& w : weak) ADD_FAILURE() << "weak definition in an ISA object: " << w;

    // objdump -h: "member:     file format ..." then that member's sections.
    const auto sections = lines_of(std::string("objdump -h ") + CEILING_KERNELS_ARCHIVE + " 2>&1");
    std::string member;
    int seen = 0;
    const std::regex header(R"(^(\S+\.o):\s+file format)");
    const std::regex unprioritised(R"(\s(\.init_array|\.ctors)\s)");
    for (const auto& l : sections) {
        std::smatch m;
        if (std::regex_search(l, m, header)) {
            member = m[1];
            if (std::regex_search(member, isa_member)) ++seen;
            continue;
        }
        if (!std::regex_search(member, isa_member)) continue;
        // Unprioritised constructors (a dynamic initialiser, __attribute__((constructor))).
        // The sanitizer builds' module constructor, which registers the file's globals (a
        // few calls, no vector code: read in its disassembly), comes at priority 99, in
        // .init_array.00099.
        if (std::regex_search(l, unprioritised))
            ADD_FAILURE() << member << " has a start-up initialiser: " << l;
    }
    EXPECT_EQ(static_cast<std::size_t>(seen), members.size());
}

}  // namespace
