// How `ceiling run` starts the program and what it does with the signals meant for it:
// a script without "#!" runs as a shell runs it; SIGTERM reaches the grandchildren; a
// program that ignores it is killed by a second one after the grace period, or by a
// second Ctrl-C at once; a stopped child is said and can be ended; a SIGKILLed ceiling
// takes its child with it and the next run removes the capture directory it left.
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "tests/integration/run_support.hpp"

namespace ceiling::testing {
namespace {

namespace fs = std::filesystem;

// The pid a test program printed after "ready ".
pid_t ready_pid(const std::string& out) {
    const auto at = out.find("ready ");
    return at == std::string::npos ? 0 : static_cast<pid_t>(std::stol(out.substr(at + 6)));
}

// Gone, or a zombie nobody reaps yet: either way it runs no more. Waits up to 5 s.
bool ends(pid_t pid) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < end) {
        const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
        const auto paren = stat.rfind(')');
        if (stat.empty() || (paren != std::string::npos && stat.substr(paren + 2, 1) == "Z")) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(pid, SIGKILL);  // leave nothing behind
    return false;
}

TEST(RunLaunch, AScriptWithoutAShebangRunsWithShAsAShellRunsIt) {
    TempDir dir;
    const auto script = dir / "noshebang";
    std::ofstream(script) << "echo \"args: $*\"\nexit 3\n";
    fs::permissions(script, fs::perms::owner_all);
    const auto r = ceiling_run(dir / "r.json", {"-q"}, {script.string(), "a", "b"});
    EXPECT_EQ(r.exit_code, 3) << r.err;  // the script's status, not 126
    EXPECT_EQ(r.out, "args: a b\n");
    EXPECT_EQ(read_record(dir / "r.json").end.exit_code, 3);
    // A binary exec refuses stays refused: sh is not handed machine code.
    const auto binary = dir / "binary";
    std::ofstream(binary) << std::string("\x7f" "ELF\x02\x01\x01\0\0\0", 10) << "garbage";
    fs::permissions(binary, fs::perms::owner_all);
    const auto b = ceiling_run(dir / "b.json", {"-q"}, {binary.string()});
    EXPECT_EQ(b.exit_code, 126) << b.err;
    EXPECT_NE(b.err.find("Exec format error"), std::string::npos) << b.err;
}

TEST(RunSignals, TermSentToCeilingReachesTheGrandchildren) {
    TempDir dir;
    Background bg({"run", "-q", "-o", (dir / "r.json").string(), "--", "/bin/sh", "-c",
                   "sleep 30 & echo \"ready $!\"; wait"},
                  dir.path());
    ASSERT_TRUE(bg.wait_for_output("ready")) << bg.err();
    const pid_t grandchild = ready_pid(bg.out());
    ASSERT_GT(grandchild, 0);
    bg.signal(SIGTERM);
    EXPECT_EQ(bg.wait_for(10), 128 + SIGTERM) << bg.err();
    EXPECT_TRUE(ends(grandchild)) << "the shell's sleep outlived the SIGTERM sent to ceiling";
    EXPECT_TRUE(read_record(dir / "r.json").partial);
}

// A program that ignores SIGTERM (and its children): a second SIGTERM inside the grace
// period is forwarded again; one after it kills them all, and the record is still written.
TEST(RunSignals, ASecondTermAfterTheGracePeriodKillsAProgramThatIgnoresIt) {
    TempDir dir;
    Background bg({"run", "-q", "-o", (dir / "r.json").string(), "--", "/bin/sh", "-c",
                   "trap '' INT TERM HUP; sleep 30 & echo \"ready $!\"; wait"},
                  dir.path());
    ASSERT_TRUE(bg.wait_for_output("ready")) << bg.err();
    const pid_t grandchild = ready_pid(bg.out());
    bg.signal(SIGTERM);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    bg.signal(SIGTERM);  // within the grace period: a duplicate, not insistence
    EXPECT_FALSE(bg.wait_for(0.5).has_value()) << bg.err();
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));
    bg.signal(SIGTERM);
    EXPECT_EQ(bg.wait_for(10), 128 + SIGKILL) << bg.err();
    EXPECT_NE(bg.err().find("killing the program"), std::string::npos) << bg.err();
    EXPECT_TRUE(ends(grandchild));
    const RunRecord rec = read_record(dir / "r.json");
    EXPECT_TRUE(rec.partial);
    EXPECT_EQ(rec.end.signal_name, "SIGKILL");
}

// ceiling on a terminal of its own, as a shell runs it: a Ctrl-C typed there reaches its
// whole foreground process group, ceiling included.
class OnTerminal {
  public:
    OnTerminal(const std::vector<std::string>& args, const fs::path& dir) : err_(dir / "tty.err") {
        master_ = ::posix_openpt(O_RDWR | O_NOCTTY);
        if (master_ < 0 || ::grantpt(master_) != 0 || ::unlockpt(master_) != 0) return;
        const std::string terminal = ::ptsname(master_);
        const std::string out = (dir / "tty.out").string();
        out_ = out;
        pid_ = ::fork();
        if (pid_ == 0) {
            ::setsid();
            const int t = ::open(terminal.c_str(), O_RDWR);
            ::ioctl(t, TIOCSCTTY, 0);
            ::dup2(t, 0);
            ::dup2(::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600), 1);
            ::dup2(::open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600), 2);
            std::vector<std::string> copy = args;
            std::vector<char*> argv;
            std::string bin = CEILING_BINARY;
            argv.push_back(bin.data());
            for (auto& a : copy) argv.push_back(a.data());
            argv.push_back(nullptr);
            ::execv(argv[0], argv.data());
            ::_exit(127);
        }
    }
    ~OnTerminal() {
        if (pid_ > 0 && !reaped_) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        if (master_ >= 0) ::close(master_);
    }
    bool started() const { return pid_ > 0; }
    void type_ctrl_c() { [[maybe_unused]] const auto n = ::write(master_, "\x03", 1); }
    bool wait_for_output(const std::string& text) {
        for (int i = 0; i < 1000; ++i) {
            if (slurp(out_).find(text) != std::string::npos) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return false;
    }
    std::optional<int> wait_for(double timeout_s) {
        const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
        int status = 0;
        while (::waitpid(pid_, &status, WNOHANG) == 0) {
            if (std::chrono::steady_clock::now() > end) return std::nullopt;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        reaped_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::string err() const { return slurp(err_); }

  private:
    fs::path out_, err_;
    int master_ = -1;
    pid_t pid_ = -1;
    bool reaped_ = false;
};

TEST(RunSignals, ASecondCtrlCKillsAProgramThatIgnoresTheFirst) {
    TempDir dir;
    OnTerminal tty({"run", "-q", "-o", (dir / "r.json").string(), "--", "/bin/sh", "-c",
                    "trap '' INT; echo ready; exec sleep 30"},
                   dir.path());
    ASSERT_TRUE(tty.started()) << "no pseudo-terminal here";
    ASSERT_TRUE(tty.wait_for_output("ready")) << tty.err();
    tty.type_ctrl_c();
    EXPECT_FALSE(tty.wait_for(0.5).has_value()) << "the program ignores SIGINT: " << tty.err();
    tty.type_ctrl_c();  // at once: typed, it needs no grace period
    EXPECT_EQ(tty.wait_for(10), 128 + SIGKILL) << tty.err();
    EXPECT_TRUE(read_record(dir / "r.json").partial);
}

TEST(RunSignals, AStoppedChildIsSaidAndCanStillBeEnded) {
    TempDir dir;
    Background bg({"run", "-q", "-o", (dir / "r.json").string(), "--", "/bin/sh", "-c",
                   "echo \"ready $$\"; exec sleep 30"},
                  dir.path());
    ASSERT_TRUE(bg.wait_for_output("ready")) << bg.err();
    const pid_t child = ready_pid(bg.out());
    ASSERT_GT(child, 0);
    ::kill(child, SIGSTOP);
    for (int i = 0; i < 250 && bg.err().find("is stopped by SIGSTOP") == std::string::npos; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_NE(bg.err().find("the program (pid " + std::to_string(child) + ") is stopped by SIGSTOP"),
              std::string::npos)
        << bg.err();
    // Stopped, it could not act on a SIGTERM: ceiling continues it after forwarding one.
    bg.signal(SIGTERM);
    EXPECT_EQ(bg.wait_for(10), 128 + SIGTERM) << bg.err();
    EXPECT_EQ(read_record(dir / "r.json").end.signal_name, "SIGTERM");
}

TEST(RunSignals, ASigkilledCeilingTakesItsChildAndTheNextRunRemovesItsCaptures) {
    TempDir dir;
    const auto captures = dir / "captures";
    fs::create_directory(captures);
    ::setenv("CEILING_TMPDIR", captures.c_str(), 1);
    Background bg({"run", "-q", "-o", (dir / "r.json").string(), "--", "/bin/sh", "-c",
                   "echo \"ready $$\"; exec sleep 30"},
                  dir.path());
    ::unsetenv("CEILING_TMPDIR");
    ASSERT_TRUE(bg.wait_for_output("ready")) << bg.err();
    const pid_t child = ready_pid(bg.out());
    bg.signal(SIGKILL);
    EXPECT_EQ(bg.wait_for(10), 128 + SIGKILL);
    EXPECT_TRUE(ends(child)) << "the program outlived a SIGKILLed ceiling";
    // Its capture directory stayed (nothing runs after SIGKILL); a minute later the next run
    // finds it unlocked and removes it.
    int left = 0;
    for (const auto& e : fs::directory_iterator(captures)) {
        ++left;
        const auto old = fs::file_time_type::clock::now() - std::chrono::minutes(2);
        fs::last_write_time(e.path(), old);
    }
    ASSERT_EQ(left, 1);
    const auto r = run_ceiling({"run", "-q", "-o", (dir / "next.json").string(), "--", "/bin/true"},
                               {"CEILING_TMPDIR=" + captures.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::is_empty(captures));
}

}  // namespace
}  // namespace ceiling::testing
