#pragma once
// Shared by the `run`, `report` and `diff` integration tests: the wrapped test programs,
// running ceiling in the background (to interrupt it), and reading what it wrote.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/store/run_store.hpp"
#include "tests/integration/process.hpp"

namespace ceiling::testing {

inline const std::string run_target = CEILING_RUN_TARGET;
#ifdef CEILING_NVTX_TARGET
inline const std::string nvtx_target = CEILING_NVTX_TARGET;
#define CEILING_NEED_NVTX() (void)0
#else
inline const std::string nvtx_target;
#define CEILING_NEED_NVTX() GTEST_SKIP() << "built without NVTX headers: no injection library"
#endif

inline nlohmann::json read_json(const std::filesystem::path& p) { return nlohmann::json::parse(slurp(p)); }

inline RunRecord read_record(const std::filesystem::path& p) { return parse_run_record(slurp(p)); }

// `ceiling run --detail --output OUT [extra...] -- argv...`: the whole summary, whose findings
// these tests read (the default answer has its own tests, run_answer_test.cpp).
inline ProcessResult ceiling_run(const std::filesystem::path& out, std::vector<std::string> options,
                                 const std::vector<std::string>& argv,
                                 const std::vector<std::string>& env = {}) {
    std::vector<std::string> args = {"run", "--detail", "--output", out.string()};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back("--");
    args.insert(args.end(), argv.begin(), argv.end());
    return run_ceiling(args, env);
}

// ceiling started in the background with stdout and stderr to files, for tests that signal
// it while the wrapped program runs.
class Background {
public:
    Background(const std::vector<std::string>& args, const std::filesystem::path& dir)
        : out_(dir / "bg.out"), err_(dir / "bg.err") {
        pid_ = fork();
        if (pid_ == 0) {
            const int o = open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            const int e = open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            dup2(o, 1);
            dup2(e, 2);
            // Its own process group, as a job a shell starts: the test's signals reach only
            // ceiling, which must forward them.
            setpgid(0, 0);
            std::vector<char*> argv;
            std::string bin = CEILING_BINARY;
            argv.push_back(bin.data());
            std::vector<std::string> copy = args;
            for (auto& a : copy) argv.push_back(a.data());
            argv.push_back(nullptr);
            execv(argv[0], argv.data());
            _exit(127);
        }
    }
    ~Background() {
        if (pid_ > 0 && !reaped_) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
    }
    // Waits until stdout contains `text` (the wrapped program said it is ready).
    bool wait_for_output(const std::string& text, double timeout_s = 20) {
        const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
        while (std::chrono::steady_clock::now() < end) {
            if (slurp(out_).find(text) != std::string::npos) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return false;
    }
    void signal(int sig) { kill(pid_, sig); }
    pid_t pid() const { return pid_; }
    // Its exit status once it ended within `timeout_s`; nothing (it still runs) otherwise.
    std::optional<int> wait_for(double timeout_s) {
        const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
        int status = 0;
        while (waitpid(pid_, &status, WNOHANG) == 0) {
            if (std::chrono::steady_clock::now() > end) return std::nullopt;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        reaped_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::string out() const { return slurp(out_); }
    int wait() {
        int status = 0;
        waitpid(pid_, &status, 0);
        reaped_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::string err() const { return slurp(err_); }

private:
    std::filesystem::path out_, err_;
    pid_t pid_ = -1;
    bool reaped_ = false;
};

}  // namespace ceiling::testing
