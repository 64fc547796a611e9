#include "collectors/sampler.hpp"

#include <stdexcept>

namespace ceiling::collectors {

Sampler::Sampler(std::chrono::nanoseconds period, ReadFn read)
    : period_(period), read_(std::move(read)) {
    if (period_.count() <= 0) throw std::invalid_argument("sampling period must be positive");
}

Sampler::~Sampler() { stop(); }

void Sampler::start() {
    if (thread_.joinable()) return;
    stopping_ = false;
    samples_.clear();
    thread_ = std::thread([this] { loop(); });
}

std::vector<Sample> Sampler::stop() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    return std::move(samples_);
}

void Sampler::loop() {
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    auto next = t0 + period_;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        if (wake_.wait_until(lock, next, [this] { return stopping_; })) return;
        lock.unlock();
        Sample s;
        s.readings = read_();
        const auto now = clock::now();
        s.t_s = std::chrono::duration<double>(now - t0).count();
        lock.lock();
        samples_.push_back(std::move(s));
        while (next <= now) next += period_;
    }
}

}  // namespace ceiling::collectors
