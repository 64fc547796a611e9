// A stand-in for a user's program under `ceiling run`: ends in a chosen way, prints, burns
// CPU in threads and forked children, or sleeps until interrupted.
//   run_target exit N | segv | sigkill | print TEXT | sleep SECONDS | busy SECONDS
//   run_target work M                 M million iterations of arithmetic (fixed CPU work)
//   run_target fork-threads M         the same work in 2 threads and 1 forked child each
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

volatile double sink = 0;

void busy(double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    double x = 1.0;
    while (std::chrono::steady_clock::now() < end)
        for (int i = 0; i < 10000; ++i) x = x * 1.0000001 + 1e-9;
    sink = x;
}

// A fixed amount of CPU work: unlike busy(), it takes the same CPU time however many other
// threads compete for the cores.
void work(double millions) {
    double x = 1.0;
    const auto n = static_cast<long>(millions * 1e6);
    for (long i = 0; i < n; ++i) x = x * 1.0000001 + 1e-9;
    sink = x;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: run_target MODE [ARG]\n");
        return 64;
    }
    const std::string mode = argv[1];
    const char* arg = argc > 2 ? argv[2] : "0";
    if (mode == "exit") return std::atoi(arg);
    if (mode == "segv") {
        // A real invalid access, through a pointer the compiler cannot see is null.
        volatile int* p = reinterpret_cast<int*>(std::strtoul(arg, nullptr, 10));
        *p = 1;
        return 0;
    }
    if (mode == "sigkill") raise(SIGKILL);
    if (mode == "print") {
        std::printf("%s\n", arg);
        std::fprintf(stderr, "to stderr: %s\n", arg);
        return 0;
    }
    if (mode == "sleep") {
        std::printf("ready\n");
        std::fflush(stdout);
        std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(arg)));
        return 0;
    }
    if (mode == "busy") {
        busy(std::atof(arg));
        return 0;
    }
    if (mode == "work") {
        work(std::atof(arg));
        return 0;
    }
    if (mode == "fork-threads") {
        const double m = std::atof(arg);
        const pid_t child = fork();
        if (child == 0) {
            work(m);
            _exit(0);
        }
        std::vector<std::thread> threads;
        for (int i = 0; i < 2; ++i) threads.emplace_back([m] { work(m); });
        for (auto& t : threads) t.join();
        int status = 0;
        waitpid(child, &status, 0);
        return 0;
    }
    std::fprintf(stderr, "run_target: unknown mode %s\n", mode.c_str());
    return 64;
}
