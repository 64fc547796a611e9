// Readers of files the user names, driven through the real binary where the finding lives in
// the command rather than in a parser (see tests/unit/*/..._fuzz_findings_test.cpp for the
// parsers' own findings).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/integration/process.hpp"

namespace ceiling {
namespace {

namespace fs = std::filesystem;

TEST(ReaderFindings, BudgetFileThatIsAFifoIsRefusedNotWaitedOn) {
    // Found while fuzzing the budget reader: run opened --budget with std::ifstream, so a FIFO
    // (or a path like /dev/stdin) hung it before the program ever started; thresholds files
    // were already read through store::read_input_file. `timeout` turns a hang into 124.
    const fs::path fifo = fs::temp_directory_path() / ("ceiling-budget-fifo-" + std::to_string(::getpid()));
    fs::remove(fifo);
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const fs::path record = fifo.string() + ".json";
    const auto r = testing::run_process(
        {"timeout", "20", CEILING_BINARY, "run", "-q", "-o", record.string(), "--budget", fifo.string(), "--", "true"});
    fs::remove(fifo);
    fs::remove(record);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("budget file " + fifo.string() + ": is a FIFO"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ceiling
