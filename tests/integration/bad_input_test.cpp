// Bad input and hostile paths, as a table: each row runs the real binary and states the
// exit status, a phrase the first line of stderr must hold, and that nothing in the test's
// directory changed except the file the row names as its output. One line of error, the
// documented status, never a hang, never a replaced device/FIFO/link, never raw bytes.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include "diagnosis/machine_profile.hpp"
#include "tests/integration/process.hpp"

namespace ceiling {
namespace {

namespace fs = std::filesystem;
using testing::run_ceiling;
using testing::TempDir;

// What a directory holds: each entry's type, size and modification time.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        struct stat st {};
        lstat(e.path().c_str(), &st);
        out[e.path().string()] = std::to_string(st.st_mode) + " " + std::to_string(st.st_size) +
                                 " " + std::to_string(st.st_mtim.tv_sec) + "." +
                                 std::to_string(st.st_mtim.tv_nsec);
    }
    return out;
}

struct Case {
    std::vector<std::string> args;  // "@" stands for the test directory
    int status;
    std::string stderr_has;  // in the first line of stderr
    std::string changes;     // the one file (relative to the directory) allowed to change
};

class BadInput : public ::testing::Test {
  protected:
    void SetUp() override {
        const fs::path d = dir.path();
        // A valid run record to damage and to feed as input.
        const auto r =
            run_ceiling({"-q", "run", "-o", (d / "good.json").string(), "--", "/bin/true"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        auto j = nlohmann::json::parse(testing::slurp(d / "good.json"));
        j["executions"][0]["wall_s"] = -1;
        std::ofstream(d / "negative.json") << j.dump();
        j["executions"][0]["wall_s"] = "fast";
        std::ofstream(d / "wrongtype.json") << j.dump();
        std::ofstream(d / "profile.json")
            << R"({"schema_version": 1, "host": {}, "compute_roofs": []})";
        std::ofstream(d / "binary.json") << std::string("{\"a\":\0\xff\xfe}", 9);
        std::ofstream(d / "target.html") << "old";
        fs::create_symlink("target.html", d / "link.html");
        std::ofstream(d / "victim") << "precious";
        fs::create_symlink(d / "victim", d / "planted.json");
        fs::copy_file(d / "good.json", d / "other.json");
        ASSERT_EQ(mkfifo((d / "fifo").c_str(), 0600), 0);
        fs::create_directory(d / "folder");
        fs::copy_file(fs::path(CEILING_TEST_DATA) / "profile_synthetic.json", d / "synthetic.json");
        std::ofstream(d / "prog.sh") << "#!/bin/sh\nexit 0\n";
        fs::permissions(d / "prog.sh", fs::perms::owner_all);
    }
    TempDir dir;
};

TEST_F(BadInput, EachCaseEndsWithItsStatusAndOneLineAndTouchesNothingElse) {
    const std::vector<Case> cases = {
        // No output replaces an input, the profile in use, the program or another output.
        {{"report", "--html", "@/good.json", "@/good.json"}, 2, "is also a record to report", ""},
        {{"report", "@/good.json", "--csv", "@/good.json"}, 2, "is also a record to report", ""},
        {{"run", "-o", "@/x.json", "--trace", "@/x.json", "--", "/bin/true"}, 2, "is also --trace", ""},
        {{"run", "-o", "@/x.json", "--csv", "@/x.json", "--", "/bin/true"}, 2, "is also --csv", ""},
        {{"run", "--profile", "@/synthetic.json", "-o", "@/synthetic.json", "--", "/bin/true"},
         2,
         "is also the machine profile in use",
         ""},
        {{"run", "-o", "@/prog.sh", "--", "@/prog.sh"}, 2, "is also the program being run", ""},
        // Reading: only regular text files, no hang on a FIFO or a device.
        {{"report", "@/fifo"}, 2, "is a FIFO, not a regular file", ""},
        {{"report", "/dev/zero"}, 2, "is a device, not a regular file", ""},
        {{"report", "@/folder"}, 2, "is a directory", ""},
        {{"report", "@/missing.json"}, 2, "no such file", ""},
        {{"report", "@/binary.json"}, 2, "binary data, not a text file", ""},
        {{"report", "@/profile.json"}, 2, "this is a machine profile, not a run record", ""},
        // Impossible values: the field is named.
        {{"report", "@/negative.json"}, 2, "executions[0].wall_s = -1", ""},
        {{"diff", "@/good.json", "@/negative.json"}, 2, "executions[0].wall_s = -1", ""},
        // A value of the wrong type: the field is named, not only the JSON library's words.
        {{"report", "@/wrongtype.json"}, 2, "executions[0].wall_s: type must be number, but is string", ""},
        // Writing: a FIFO or a device is refused before anything runs.
        {{"report", "--html", "@/fifo", "@/good.json"}, 2, "is a FIFO, not a regular file", ""},
        {{"report", "--html", "@/folder", "@/good.json"}, 2, "is a directory", ""},
        {{"machine", "--quick", "--output", "@/fifo"}, 2, "is a FIFO, not a regular file", ""},
        {{"run", "-o", "@/fifo", "--", "/bin/true"}, 2, "is a FIFO, not a regular file", ""},
        {{"run", "-o", "@/folder", "--", "/bin/true"}, 2, "is a directory", ""},
        // report replaces only its own outputs: a record taken for --html's value, another
        // file, a link, unless --force (which replaces the link, never its target).
        {{"report", "--html", "@/other.json", "@/good.json"}, 2, "exists and is not an HTML report", ""},
        {{"report", "--csv", "@/victim", "@/good.json"}, 2, "exists and is not a region table", ""},
        {{"report", "--html", "@/link.html", "@/good.json"}, 2, "exists and is not an HTML report", ""},
        {{"report", "--html", "@/link.html", "--force", "@/good.json"}, 0, "", "link.html"},
        {{"report", "--html", "@/link.html", "@/good.json"}, 0, "", "link.html"},  // its own page now
        // A link planted where -o writes is replaced, never followed.
        {{"run", "-q", "-o", "@/planted.json", "--", "/bin/true"}, 0, "", "planted.json"},
        // Numbers: negative, overflowing, or given to a command that ignores them.
        {{"bound", "--flops", "-1", "--bytes", "1"}, 2, "--flops: '-1' must not be negative", ""},
        {{"bound", "--flops", "1e308", "--bytes", "1"}, 2, "'1e308' is out of range", ""},
        {{"bound", "llm", "--params", "1e308"}, 2, "--params: '1e308' is out of range", ""},
        // A bare number where the unit decides the meaning (10 s or 10 ms?).
        {{"run", "--interval", "10", "--", "/bin/true"}, 2, "'10' is not a duration: a unit is needed", ""},
        {{"run", "--latency-budget", "12", "--", "/bin/true"}, 2, "e.g. '12ms'", ""},
        // An empty value (an unset variable in a CI script) is refused: the gate would pass.
        {{"run", "--latency-budget", "", "--fail-on-budget", "--", "/bin/true"}, 2, "an empty value", ""},
        {{"run", "--budget", "", "--fail-on-budget", "--", "/bin/true"}, 2, "an empty value", ""},
        // A bare 5 read as 500 %: a gate that never fires.
        {{"diff", "--fail-on-regression=5", "@/good.json", "@/good.json"}, 2, "would mean 500% slower", ""},
        {{"bound", "llm", "--params", "7B", "--flops", "1e9"},
         2,
         "--flops is an option of `bound`",
         ""},
    };
    const fs::path d = dir.path();
    for (const auto& c : cases) {
        std::vector<std::string> args;
        std::string shown;
        for (const auto& a : c.args) {
            args.push_back(a.rfind("@", 0) == 0 ? d.string() + a.substr(1) : a);
            shown += a + " ";
        }
        auto before = snapshot(d);
        const auto t0 = std::chrono::steady_clock::now();
        const auto r = run_ceiling(args);
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        EXPECT_EQ(r.exit_code, c.status) << shown << "\n" << r.err;
        EXPECT_LT(s, 30) << shown << ": took " << s << " s";
        const std::string first = r.err.substr(0, r.err.find('\n'));
        if (c.status != 0) {
            EXPECT_NE(first.find(c.stderr_has), std::string::npos) << shown << "\n" << r.err;
            EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << shown << ": not one line:\n" << r.err;
            for (unsigned char ch : r.err)
                EXPECT_TRUE(ch == '\n' || (ch >= 0x20 && ch < 0x7f)) << shown;
        }
        auto after = snapshot(d);
        if (!c.changes.empty()) {
            EXPECT_NE(before[(d / c.changes).string()], after[(d / c.changes).string()]) << shown;
            before.erase((d / c.changes).string());
            after.erase((d / c.changes).string());
        }
        EXPECT_EQ(before, after) << shown << ": changed files it was not asked to write";
    }
    // The links became files; what they pointed to is untouched.
    EXPECT_FALSE(fs::is_symlink(d / "link.html"));
    EXPECT_NE(testing::slurp(d / "link.html").find("<html"), std::string::npos);
    EXPECT_EQ(testing::slurp(d / "target.html"), "old");
    EXPECT_FALSE(fs::is_symlink(d / "planted.json"));
    EXPECT_EQ(testing::slurp(d / "victim"), "precious");
    EXPECT_EQ(fs::status(d / "fifo").type(), fs::file_type::fifo);
}

// Output that could not be written is a failed output: report, diff, bound, machine --show
// and doctor printed into /dev/full and exited 0.
TEST(BadInputOutput, StandardOutputThatCannotBeWrittenIsAFailure) {
    if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full here";
    const std::string ceiling = CEILING_BINARY;
    TempDir dir;
    const std::string record = (dir / "r.json").string();
    ASSERT_EQ(run_ceiling({"-q", "run", "-o", record, "--", "/bin/true"}).exit_code, 0);
    const std::string profile = std::string(CEILING_TEST_DATA) + "/profile_synthetic.json";
    for (const std::string args : {std::string("bound --flops 1e9 --bytes 1e6"),
                                   std::string("bound --flops 1e9 --bytes 1e6 --json"),
                                   std::string("doctor --no-self-test --json"), "report " + record,
                                   "report --json " + record, "diff " + record + " " + record,
                                   "machine --show --output " + profile}) {
        const auto r = testing::run_process({"/bin/sh", "-c", ceiling + " " + args + " > /dev/full"});
        EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.err;
        EXPECT_NE(r.err.find("cannot write standard output"), std::string::npos) << args << "\n" << r.err;
    }
}

TEST(BadInputCache, AProfileThatCannotBeCachedIsStillUsedAndTheResultPrinted) {
    TempDir dir;
    const auto blocker = dir / "file";
    { std::ofstream(blocker) << "x"; }
    // The cache directory's parent is a regular file: the quick profile cannot be saved.
    const auto r = run_ceiling({"bound", "--flops", "1e9", "--bytes", "1e6"},
                               {"XDG_CACHE_HOME=" + blocker.string(), "CEILING_PROFILE="});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("Floor"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("used for this command only"), std::string::npos) << r.err;
}

// The cache file of this hostname holding another CPU's profile (a VM whose instance type
// changed): a command that needs a profile measures one for this host and saves it there.
TEST(BadInputCache, AnotherCpusCachedProfileIsMeasuredAgainForThisHost) {
    TempDir dir;
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    const auto cached = dir / "ceiling" / ("machine-" + std::string(host) + ".json");
    fs::create_directories(cached.parent_path());
    fs::copy_file(std::string(CEILING_TEST_DATA) + "/profile_synthetic.json", cached);
    const auto r = run_ceiling({"bound", "--flops", "1e9", "--bytes", "1e6"},
                               {"XDG_CACHE_HOME=" + dir.path().string(), "CEILING_PROFILE="});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("measured on Synthetic 4-core test machine"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("measuring a quick one for this host"), std::string::npos) << r.err;
    const MachineProfile now = parse_machine_profile(testing::slurp(cached));
    EXPECT_NE(now.host.cpu_model, "Synthetic 4-core test machine");
    EXPECT_TRUE(now.quick);
}

}  // namespace
}  // namespace ceiling
