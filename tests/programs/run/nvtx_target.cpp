// An NVTX-annotated program for `ceiling run` tests and benchmarks (NVTX v3, CPU only).
//   nvtx_target nested            outer{inner,inner} 50+20+20 ms, a start/end range, a
//                                 worker thread's range, a domain range, a mark
//   nvtx_target preprocess N      N x (preprocess 40 ms busy, forward 5 ms busy)
//   nvtx_target startup N         300 ms busy before its first range (a script's imports),
//                                 N x forward 20 ms busy, 60 ms busy after the last
//   nvtx_target declared N        N x "gemm {ops=... bytes=...}" busy ranges
//   nvtx_target many              14 ranges with long names, each declaring work of its own
//                                 intensity (a roofline with more points than it shows)
//   nvtx_target calibrate         iterations of light work that take ~10 us
//   nvtx_target heavy R I         R push/pop ranges around I iterations each (100k/s at 10 us)
//   nvtx_target live R            two threads, each R x "t<thread> block <k / 5000>" around a
//                                 nested "step" (a new name every 5000, formatted into one
//                                 buffer; thread 1 sleeps 2 ms every 1000): written while
//                                 `ceiling run` reads the capture
//   nvtx_target crash             segfault inside an open range
//   nvtx_target names MSG...      one range per MSG, nested in order, 5 ms busy inside the
//                                 innermost (names with control characters, declared work)
//   nvtx_target fork              a range in the parent and one in a forked child
//   nvtx_target frames N          N x frame{model 2 ms busy (every 50th frame 8 ms), 1 ms busy}
//   nvtx_target serve SOCKET      a local server (not under ceiling): 20 ms busy per request
//                                 byte on a UNIX socket, until its one client hangs up
//   nvtx_target ask SOCKET N      its client: N x "infer {ops=...}" around a request
//   nvtx_target stages S          two threads for S seconds, each busy in ranges of its own,
//                                 "produce" and "consume" (5 ms each): a pipeline's stages
//   nvtx_target handoff N         a producer thread's N x "decode" (15 ms busy each) handed
//                                 one by one to the main thread's "infer" (5 ms busy): the
//                                 producer is the serial stage, the consumer waits for it
//   nvtx_target turns T S         "stage {ops=...}" around T threads handing one lock round
//                                 for S seconds, each 2 ms busy on its turn (one at a time)
//   nvtx_target beside S          S seconds of "model" ranges (5 ms busy each) on the main
//                                 thread beside a thread busy all along with no ranges
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <nvtx3/nvToolsExt.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "take_turns.hpp"

namespace {

volatile double sink = 0;

void busy(double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    double x = 1.0;
    while (std::chrono::steady_clock::now() < end)
        for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
    sink = x;
}

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// ~10 us of arithmetic: a range around it is the NVTX-heavy case (100k ranges/s).
void tiny_work(int iterations) {
    double x = sink;
    for (int i = 0; i < iterations; ++i) x = x * 1.0000001 + 1e-9;
    sink = x;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "nested";
    const char* arg = argc > 2 ? argv[2] : "1";
    if (mode == "nested") {
        nvtxNameOsThreadA(static_cast<uint32_t>(gettid()), "main thread");
        std::thread worker([] {
            nvtxRangePushA("worker");
            sleep_ms(40);
            nvtxRangePop();
        });
        const nvtxRangeId_t async = nvtxRangeStartA("async");
        nvtxRangePushA("outer");
        sleep_ms(50);
        nvtxMarkA("halfway");
        for (int i = 0; i < 2; ++i) {
            nvtxRangePushA("inner");
            sleep_ms(20);
            nvtxRangePop();
        }
        nvtxRangePop();
        nvtxRangeEnd(async);
        const nvtxDomainHandle_t domain = nvtxDomainCreateA("io");
        nvtxEventAttributes_t a{};
        a.version = NVTX_VERSION;
        a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        a.message.registered = nvtxDomainRegisterStringA(domain, "load");
        nvtxDomainRangePushEx(domain, &a);
        sleep_ms(10);
        nvtxDomainRangePop(domain);
        worker.join();
        return 0;
    }
    if (mode == "preprocess") {
        for (int i = 0, n = std::atoi(arg); i < n; ++i) {
            nvtxRangePushA("preprocess");
            busy(0.040);
            nvtxRangePop();
            nvtxRangePushA("forward");
            busy(0.005);
            nvtxRangePop();
        }
        return 0;
    }
    if (mode == "startup") {
        busy(0.300);
        for (int i = 0, n = std::atoi(arg); i < n; ++i) {
            nvtxRangePushA("forward");
            busy(0.020);
            nvtxRangePop();
        }
        busy(0.060);
        return 0;
    }
    if (mode == "stages") {
        const double seconds = std::atof(arg);
        const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        const auto stage = [&](const char* name) {
            while (std::chrono::steady_clock::now() < end) {
                nvtxRangePushA(name);
                busy(0.005);
                nvtxRangePop();
            }
        };
        std::thread producer(stage, "produce {ops=10M precision=fp64 engine=scalar}");
        stage("consume {ops=10M precision=fp64 engine=scalar}");
        producer.join();
        return 0;
    }
    if (mode == "handoff") {
        const int items = std::atoi(arg);
        std::mutex m;
        std::condition_variable ready;
        std::deque<int> queue;
        std::thread producer([&] {
            for (int i = 0; i < items; ++i) {
                nvtxRangePushA("decode");
                busy(0.015);
                nvtxRangePop();
                const std::lock_guard<std::mutex> lock(m);
                queue.push_back(i);
                ready.notify_one();
            }
        });
        for (int i = 0; i < items; ++i) {
            std::unique_lock<std::mutex> lock(m);
            ready.wait(lock, [&] { return !queue.empty(); });
            queue.pop_front();
            lock.unlock();
            nvtxRangePushA("infer");
            busy(0.005);
            nvtxRangePop();
        }
        producer.join();
        return 0;
    }
    if (mode == "beside") {
        const double seconds = std::atof(arg);
        const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        std::thread loader([&] {
            while (std::chrono::steady_clock::now() < end) busy(0.001);
        });
        while (std::chrono::steady_clock::now() < end) {
            nvtxRangePushA("model {ops=10M precision=fp64 engine=scalar}");
            busy(0.005);
            nvtxRangePop();
        }
        loader.join();
        return 0;
    }
    if (mode == "turns") {
        const int threads = std::atoi(arg);
        const double seconds = argc > 3 ? std::atof(argv[3]) : 1.0;
        nvtxRangePushA("stage {ops=10M precision=fp64 engine=scalar}");
        take_turns(threads, seconds, [] { busy(0.002); });
        nvtxRangePop();
        return 0;
    }
    if (mode == "declared") {
        for (int i = 0, n = std::atoi(arg); i < n; ++i) {
            nvtxRangePushA("gemm {ops=2G bytes=12M precision=fp32 engine=vector}");
            busy(0.010);
            nvtxRangePop();
        }
        return 0;
    }
    if (mode == "many") {
        // Times 1..14 ms at 0.1 Gop/s (well below any roof) and intensities 1/128 .. 64 op/B:
        // distinct points, of which the chart shows the longest.
        for (int i = 0; i < 14; ++i) {
            const unsigned ops_k = 100u * static_cast<unsigned>(i + 1);
            const double bytes_k = ops_k * std::ldexp(1.0, 7 - i);
            const std::string name = "stage " + std::to_string(i + 1) +
                                     ": a descriptive region name as real programs write them {ops=" +
                                     std::to_string(ops_k) + "K bytes=" +
                                     std::to_string(static_cast<long long>(bytes_k)) +
                                     "K precision=fp32 engine=vector}";
            nvtxRangePushA(name.c_str());
            busy(0.001 * (i + 1));
            nvtxRangePop();
        }
        return 0;
    }
    if (mode == "calibrate") {
        // Iterations of tiny_work that take ~10 us here, for `heavy` (scripts/bench-run).
        const auto t0 = std::chrono::steady_clock::now();
        tiny_work(2000000);
        const double per = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 2e6;
        std::printf("%d\n", per > 0 ? static_cast<int>(10e-6 / per) : 2000);
        return 0;
    }
    if (mode == "frames") {
        // A camera-like loop: the model's 2 ms inside a 3 ms frame, and a slow model step
        // every 50 frames (a p99 that a p50 hides).
        const long frames = std::atol(arg);
        for (long f = 1; f <= frames; ++f) {
            nvtxRangePushA("frame");
            nvtxRangePushA("model");
            busy(f % 50 == 0 ? 0.008 : 0.002);
            nvtxRangePop();
            busy(0.001);
            nvtxRangePop();
        }
        return 0;
    }
    if (mode == "heavy") {
        // RANGES push/pop ranges, each around ITERATIONS of arithmetic: a fixed amount of
        // work, so NVTX's cost shows as a longer run.
        const long ranges = std::atol(arg);
        const int iterations = argc > 3 ? std::atoi(argv[3]) : 2000;
        for (long k = 0; k < ranges; ++k) {
            nvtxRangePushA("step");
            tiny_work(iterations);
            nvtxRangePop();
        }
        return 0;
    }
    if (mode == "live") {
        const long ranges = std::atol(arg);
        auto thread = [ranges](int t) {
            char name[64];
            for (long k = 0; k < ranges; ++k) {
                std::snprintf(name, sizeof name, "t%d block %ld", t, k / 5000);
                nvtxRangePushA(name);
                nvtxRangePushA("step");
                tiny_work(200);
                nvtxRangePop();
                nvtxRangePop();
                // A CPU left idle now and then, for the reading to run in.
                if (t == 1 && k % 1000 == 999) std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
        };
        std::thread other(thread, 1);
        thread(0);
        other.join();
        return 0;
    }
    if (mode == "reuse") {
        // One buffer names every range, its text changed between them (a program formatting
        // names into a reused buffer): each range must keep the text it had when pushed.
        char name[64];
        const char* texts[] = {"first name", "second, longer name", "first", "first name"};
        for (int round = 0; round < 3; ++round)
            for (const char* t : texts) {
                std::snprintf(name, sizeof name, "%s", t);
                nvtxRangePushA(name);
                busy(0.0002);
                nvtxRangePop();
            }
        return 0;
    }
    if (mode == "deep") {
        // N ranges nested in one another (a recursion that pushes a range per call).
        const int n = argc > 2 ? std::atoi(argv[2]) : 5000;
        for (int i = 0; i < n; ++i) nvtxRangePushA(("level " + std::to_string(i) + " of a deep recursion").c_str());
        busy(0.005);
        for (int i = 0; i < n; ++i) nvtxRangePop();
        return 0;
    }
    if (mode == "names") {
        for (int i = 2; i < argc; ++i) nvtxRangePushA(argv[i]);
        busy(0.005);
        for (int i = 2; i < argc; ++i) nvtxRangePop();
        return 0;
    }
    if (mode == "crash") {
        nvtxRangePushA("doomed");
        sleep_ms(20);
        volatile int* p = reinterpret_cast<int*>(std::strtoul("0", nullptr, 10));
        *p = 1;
        return 0;
    }
    if (mode == "fork") {
        nvtxRangePushA("parent");
        const pid_t child = fork();
        if (child == 0) {
            nvtxRangePushA("child work");
            sleep_ms(30);
            nvtxRangePop();
            _exit(0);
        }
        int status = 0;
        waitpid(child, &status, 0);
        nvtxRangePop();
        return 0;
    }
    if (mode == "serve" || mode == "ask") {
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, arg, sizeof addr.sun_path - 1);
        const int s = socket(AF_UNIX, SOCK_STREAM, 0);
        char byte = 1;
        if (mode == "serve") {
            unlink(arg);
            if (bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(s, 1) != 0)
                return 1;
            const int c = accept(s, nullptr, nullptr);
            while (read(c, &byte, 1) == 1) {
                busy(0.020);
                if (write(c, &byte, 1) != 1) return 1;
            }
            unlink(arg);
            return 0;
        }
        if (connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return 1;
        for (int i = 0, n = argc > 3 ? std::atoi(argv[3]) : 10; i < n; ++i) {
            // The work of the server's answer, declared by its client (4 Gop in 20 ms).
            nvtxRangePushA("infer {ops=4G precision=fp32 engine=vector}");
            if (write(s, &byte, 1) != 1 || read(s, &byte, 1) != 1) return 1;
            nvtxRangePop();
        }
        return 0;
    }
    std::fprintf(stderr, "nvtx_target: unknown mode %s\n", mode.c_str());
    return 64;
}
