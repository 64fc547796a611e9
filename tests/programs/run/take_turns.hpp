#pragma once
// A lock held while working, handed on fairly (as Python's GIL is, every 5 ms): `threads`
// threads pass one token round for `seconds`, each calling work() on its turn, so they share
// the work but never run at once. Shared by the test programs of this folder.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

template <class Work>
void take_turns(int threads, double seconds, Work work) {
    std::mutex m;
    std::condition_variable cv;
    int turn = 0;
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    std::vector<std::thread> team;
    for (int t = 0; t < threads; ++t)
        team.emplace_back([&, t] {
            std::unique_lock lock(m);
            for (;;) {
                cv.wait(lock, [&] { return turn == t; });
                const bool done = std::chrono::steady_clock::now() >= end;
                if (!done) work();
                turn = (turn + 1) % threads;
                cv.notify_all();
                if (done) return;
            }
        });
    for (auto& t : team) t.join();
}
