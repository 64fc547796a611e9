// Programs whose process-level behaviour is known, for `ceiling run`'s accounting tests:
//   process_target write DIR BYTES        writes BYTES to a new file in DIR, fsyncs, removes it
//   process_target touch BYTES            touches BYTES of fresh memory once, then holds it as
//                                         long as that took
//   process_target churn BYTES ROUNDS     ROUNDS times: map BYTES, touch every page, unmap
//   process_target keep BYTES ROUNDS      ROUNDS times, 25 ms apart: map BYTES, touch, keep
//                                         (a cache that never evicts)
//   process_target spin THREADS SECONDS   THREADS threads of pure arithmetic for SECONDS
//   process_target nap COUNT SECONDS      COUNT sleeps of SECONDS each (blocked, not busy)
//   process_target flush DIR COUNT        COUNT 4 KiB records appended to a new file in DIR,
//                                         fdatasync after each (a log's commits), then removed
//   process_target bytewise DIR COUNT     COUNT writes of one byte each to a new file in DIR
//                                         (unbuffered: a system call per byte), then removed
//   process_target turns THREADS SECONDS  THREADS threads passing one token round, each
//                                         computing 2 ms on its turn: one runs at a time
//   process_target oneafter THREADS SECONDS  THREADS threads started one after another,
//                                         each computing SECONDS / THREADS alone
// Memory is mapped with mmap, not malloc, so that no allocator keeps pages between rounds,
// and transparent huge pages are refused so that faults count base pages.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "take_turns.hpp"

namespace {

std::size_t page_bytes() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

char* map_fresh(std::size_t bytes) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        std::perror("mmap");
        std::exit(1);
    }
    ::madvise(p, bytes, MADV_NOHUGEPAGE);
    return static_cast<char*>(p);
}

void touch(char* p, std::size_t bytes) {
    for (std::size_t i = 0; i < bytes; i += page_bytes()) p[i] = 1;
}

int write_file(const std::string& dir, long long bytes) {
    const std::string path = dir + "/process_target.out";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        std::perror(path.c_str());
        return 1;
    }
    std::vector<char> block(1 << 20, 'x');
    for (long long left = bytes; left > 0;) {
        const auto n = static_cast<std::size_t>(std::min<long long>(left, block.size()));
        const ssize_t w = ::write(fd, block.data(), n);
        if (w <= 0) {
            std::perror("write");
            return 1;
        }
        left -= w;
    }
    const int synced = ::fsync(fd);
    ::close(fd);
    ::unlink(path.c_str());
    return synced == 0 ? 0 : 1;
}

// COUNT records of SIZE bytes appended one call each to a new file at PATH (fdatasync after
// each where `sync`: a log's commits), then the file removed. 0, or 1 with the failed call
// said.
int write_records(const std::string& path, std::size_t size, long count, bool sync) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        std::perror(path.c_str());
        return 1;
    }
    const std::vector<char> record(size, 'r');
    for (long i = 0; i < count; ++i)
        if (::write(fd, record.data(), size) != static_cast<ssize_t>(size) ||
            (sync && ::fdatasync(fd) != 0)) {
            std::perror("write");
            return 1;
        }
    ::close(fd);
    ::unlink(path.c_str());
    return 0;
}

volatile double sink = 0;

// Pure arithmetic for `seconds` of wall time.
void burn(double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    double x = 1.0;
    while (std::chrono::steady_clock::now() < end)
        for (int i = 0; i < 10000; ++i) x = x * 1.0000001 + 1e-9;
    sink = x;
}

void spin(int threads, double seconds) {
    std::vector<std::thread> team;
    for (int t = 0; t < threads; ++t) team.emplace_back([seconds] { burn(seconds); });
    for (auto& t : team) t.join();
}

void one_after_another(int threads, double seconds) {
    for (int t = 0; t < threads; ++t) std::thread([&] { burn(seconds / threads); }).join();
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    const char* a = argc > 2 ? argv[2] : "0";
    const char* b = argc > 3 ? argv[3] : "0";
    if (mode == "write") return write_file(a, std::atoll(b));
    if (mode == "touch") {
        const auto bytes = static_cast<std::size_t>(std::atoll(a));
        const auto start = std::chrono::steady_clock::now();
        touch(map_fresh(bytes), bytes);
        // Held as long as touching took, and 200 ms at least, so that the last samples see
        // the whole footprint and it reads as touched once: on a loaded 2-vCPU host faulting
        // 256 MiB in took most of the run, which then read as memory growing all along.
        const auto took = std::chrono::steady_clock::now() - start;
        std::this_thread::sleep_for(std::max<std::chrono::steady_clock::duration>(took, std::chrono::milliseconds(200)));
        return 0;
    }
    if (mode == "churn") {
        const auto bytes = static_cast<std::size_t>(std::atoll(a));
        for (int round = 0; round < std::atoi(b); ++round) {
            char* p = map_fresh(bytes);
            touch(p, bytes);
            ::munmap(p, bytes);
        }
        return 0;
    }
    if (mode == "keep") {
        const auto bytes = static_cast<std::size_t>(std::atoll(a));
        for (int round = 0; round < std::atoi(b); ++round) {
            touch(map_fresh(bytes), bytes);
            std::this_thread::sleep_for(std::chrono::milliseconds(25));
        }
        return 0;
    }
    if (mode == "spin") {
        spin(std::atoi(a), std::atof(b));
        return 0;
    }
    if (mode == "turns") {
        take_turns(std::atoi(a), std::atof(b), [] { burn(0.002); });
        return 0;
    }
    if (mode == "oneafter") {
        one_after_another(std::atoi(a), std::atof(b));
        return 0;
    }
    if (mode == "flush")
        return write_records(std::string(a) + "/process_target.log", 4096, std::atol(b), true);
    if (mode == "bytewise")
        return write_records(std::string(a) + "/process_target.bytes", 1, std::atol(b), false);
    if (mode == "threadper") {  // a thread started and joined per tiny task
        std::atomic<long> sum{0};
        for (int i = 0; i < std::atoi(a); ++i) std::thread([&sum, i] { sum += i; }).join();
        return sum > 0 ? 0 : 1;
    }
    if (mode == "nap") {
        for (int i = 0; i < std::atoi(a); ++i)
            std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(b)));
        return 0;
    }
    std::fprintf(stderr,
                 "usage: process_target write DIR BYTES | touch BYTES | churn BYTES ROUNDS "
                 "| spin THREADS SECONDS | nap COUNT SECONDS | threadper COUNT | flush DIR COUNT "
                 "| bytewise DIR COUNT "
                 "| turns THREADS SECONDS "
                 "| oneafter THREADS SECONDS\n");
    return 64;
}
