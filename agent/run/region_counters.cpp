#include "agent/run/region_counters.hpp"

#include <algorithm>
#include <chrono>

#include "agent/run/cumulative_timeline.hpp"
#include "agent/machine/pmu_readings.hpp"
#include "collectors/clock.hpp"

namespace ceiling::measure {

namespace {

struct CountedQuantity {
    const char* reading;
    bool RegionCounting::*allowed;
    std::optional<CountedAmount> InstanceCounts::*slot;
};
constexpr CountedQuantity quantities[] = {
    {"fp_ops", &RegionCounting::flops, &InstanceCounts::ops},
    {"dram_bytes", &RegionCounting::bytes, &InstanceCounts::bytes},
};

}  // namespace

void attribute_counts(NvtxCapture& capture, const std::vector<CounterSample>& samples,
                      const RegionCounting& counting) {
    for (const auto& q : quantities) {
        if (!(counting.*q.allowed)) continue;
        std::vector<TimelinePoint> points;
        bool low_confidence = false;
        for (const auto& s : samples) {
            const collectors::Reading* r = s.readings.find(q.reading);
            if (!r) continue;
            points.push_back({s.t_ns, r->value});
            low_confidence = low_confidence || r->low_confidence || r->estimate;
        }
        if (points.empty()) continue;
        // No rate bound: a counter may count arbitrarily fast, only its samples bound it.
        const CumulativeTimeline timeline(std::move(points), std::nullopt);
        capture.counts.resize(capture.instances.size());
        for (std::size_t i = 0; i < capture.instances.size(); ++i) {
            const auto& inst = capture.instances[i];
            if (const auto e = timeline.between(inst.start_ns, inst.end_ns))
                capture.counts[i].*q.slot = CountedAmount{e->value, e->error, low_confidence};
        }
    }
}

RegionCounting plan_region_counting(const collectors::PmuBackends& backends,
                                    const PmuSelfValidationOptions& options) {
    RegionCounting out;
    const PmuSelfValidation v = run_pmu_self_validation(backends, options);
    if (!v.ran) return out;
    auto trusted = [](const std::optional<collectors::Validation>& c) {
        return c && c->verdict == collectors::Verdict::trusted;
    };
    out.flops = trusted(v.flops);
    out.bytes = trusted(v.bytes);
    if (!out.any()) {
        std::string why;
        for (const auto* c : {&v.flops, &v.bytes})
            if (*c) why += (why.empty() ? "" : "; ") + (*c)->explanation;
        out.why_not =
            "regions without declared work are not counted: the CPU PMU failed its "
            "self-validation" +
            (why.empty() ? std::string() : " (" + why + ")") +
            (v.from_cache ? "; checked earlier this boot (`ceiling doctor` checks again)" : "");
    }
    return out;
}

RegionCounterSampler::RegionCounterSampler(pid_t child, double interval_s,
                                           const collectors::PmuBackends& backends)
    : pmu_(collectors::CountTarget::exec_child(child), {}, backends), interval_s_(interval_s) {
    try {
        pmu_.start();
    } catch (const std::exception& e) {
        failure_ = std::string("regions without declared work are not counted: ") + e.what();
        return;
    }
    // The child has not exec'd yet, so every count is 0 now: the first point of each.
    opened_ns_ = collectors::now_ns();
}

RegionCounterSampler::~RegionCounterSampler() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
}

void RegionCounterSampler::sample() {
    const std::int64_t before = collectors::now_ns();
    collectors::Readings r = pmu_.read();
    // A read takes a few system calls: stamp it with their middle.
    const std::int64_t after = collectors::now_ns();
    const std::lock_guard lock(mutex_);
    samples_.push_back({before + (after - before) / 2, std::move(r)});
}

void RegionCounterSampler::start() {
    if (!failure_.empty()) return;
    sample();
    {
        const std::lock_guard lock(mutex_);
        collectors::Readings zero = samples_.front().readings;
        for (auto& v : zero.values) v.value = 0;
        samples_.insert(samples_.begin(), {opened_ns_, std::move(zero)});
    }
    thread_ = std::thread([this] {
        const auto step = std::chrono::duration<double>(interval_s_);
        auto next = std::chrono::steady_clock::now() + step;
        while (!stop_) {
            std::this_thread::sleep_until(next);
            next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(step);
            if (!stop_) sample();
        }
    });
}

std::vector<CounterSample> RegionCounterSampler::stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (!failure_.empty() || samples_.empty()) return {};
    sample();
    pmu_.stop();
    const std::lock_guard lock(mutex_);
    return std::move(samples_);
}

void finish_region_counting(RegionCounterSampler& sampler, const RegionCounting& counting,
                            NvtxCapture& capture, std::vector<CounterValue>& counters,
                            std::vector<std::string>& notes) {
    const std::vector<CounterSample> samples = sampler.stop();
    if (!sampler.failure().empty() &&
        std::find(notes.begin(), notes.end(), sampler.failure()) == notes.end())
        notes.push_back(sampler.failure());
    if (samples.empty()) return;
    attribute_counts(capture, samples, counting);
    for (const auto& q : quantities) {
        const collectors::Reading* r = samples.back().readings.find(q.reading);
        if (r && counting.*q.allowed) counters.push_back(to_counter_value(*r));
    }
}

}  // namespace ceiling::measure
