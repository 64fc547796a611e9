// The scripts the tests never run whole (the benchmarks, the GPU check, the fresh-machine
// check) must at least parse: an apostrophe in a comment inside bench-kernels' single-quoted
// jq program once ended the quote, and the script failed at once until someone ran it.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/integration/process.hpp"

namespace ceiling {
namespace {

TEST(Scripts, EveryBashScriptParses) {
    const auto dir =
        std::filesystem::path(CEILING_TEST_DATA).parent_path().parent_path() / "scripts";
    int parsed = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (!entry.is_regular_file()) continue;
        std::ifstream in(entry.path());
        std::string first;
        std::getline(in, first);
        if (first.find("bash") == std::string::npos && entry.path().extension() != ".sh") continue;
        const auto r = testing::run_process({"bash", "-n", entry.path().string()});
        EXPECT_EQ(r.exit_code, 0) << entry.path() << ": " << r.err;
        ++parsed;
    }
    EXPECT_GE(parsed, 5) << "too few bash scripts found in " << dir;
}

}  // namespace
}  // namespace ceiling
