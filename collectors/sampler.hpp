#pragma once
// Reads counters at a fixed period while a workload runs (`ceiling run --interval`), on a
// thread of its own, so achieved rates can be shown over time. Deadlines are absolute:
// a slow read does not shift later samples, missed ticks are skipped, not bunched.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "collectors/reading.hpp"

namespace ceiling::collectors {

struct Sample {
    double t_s = 0;  // since start()
    Readings readings;
};

class Sampler {
  public:
    using ReadFn = std::function<Readings()>;
    Sampler(std::chrono::nanoseconds period, ReadFn read);
    ~Sampler();
    Sampler(const Sampler&) = delete;
    Sampler& operator=(const Sampler&) = delete;

    void start();
    // Stops the thread (at once, not at the next tick) and returns the samples taken.
    std::vector<Sample> stop();

  private:
    void loop();
    std::chrono::nanoseconds period_;
    ReadFn read_;
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::vector<Sample> samples_;
};

}  // namespace ceiling::collectors
