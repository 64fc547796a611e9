// How long a step of ceiling's own work took, logged at debug level (`ceiling -v`): where
// its time goes after the program ends (reading captures, aggregating, judging, writing),
// which `scripts/bench-run` charges to it end to end.
#pragma once

#include <chrono>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

namespace ceiling::measure {

class PhaseTimer {
  public:
    explicit PhaseTimer(std::string what)
        : what_(std::move(what)), start_(std::chrono::steady_clock::now()) {}
    ~PhaseTimer() {
        const std::chrono::duration<double, std::milli> took =
            std::chrono::steady_clock::now() - start_;
        spdlog::debug("{} took {:.1f} ms", what_, took.count());
    }
    PhaseTimer(const PhaseTimer&) = delete;
    PhaseTimer& operator=(const PhaseTimer&) = delete;

  private:
    std::string what_;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace ceiling::measure
