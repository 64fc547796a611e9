#pragma once
// Runs a command (no shell) for integration tests and captures what it printed and how it
// ended. Shared by every integration test that drives the real `ceiling` binary.

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ceiling::testing {

struct ProcessResult {
    int exit_code = -1;  // exit status, or 128 + signal when killed
    std::string out;
    std::string err;
};

inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Runs argv[0] with argv (PATH lookup), stdout and stderr captured to files, optional
// extra environment entries "NAME=value".
inline ProcessResult run_process(const std::vector<std::string>& argv,
                                 const std::vector<std::string>& env = {}) {
    static int counter = 0;
    const auto dir = std::filesystem::temp_directory_path();
    const std::string stem = "ceiling-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
    const auto out_path = dir / (stem + ".out"), err_path = dir / (stem + ".err");
    const pid_t pid = fork();
    if (pid == 0) {
        const int o = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        const int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(o, 1);
        dup2(e, 2);
        for (const auto& kv : env) putenv(const_cast<char*>(kv.c_str()));
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execvp(args[0], args.data());
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ProcessResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out_path);
    r.err = slurp(err_path);
    std::filesystem::remove(out_path);
    std::filesystem::remove(err_path);
    return r;
}

// Runs the ceiling binary under test with the given arguments.
inline ProcessResult run_ceiling(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    std::vector<std::string> argv{CEILING_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv, env);
}

// A fresh empty directory for one test's files, removed when it goes out of scope.
class TempDir {
public:
    TempDir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "ceiling-test-XXXXXX").string();
        path_ = mkdtemp(tmpl.data());
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

private:
    std::filesystem::path path_;
};

}  // namespace ceiling::testing
