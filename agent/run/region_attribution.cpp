// Which CPU time belongs to each NVTX instance beyond its process's own reads: what the
// processes below it, the host's other processes and its process's other recording threads
// used while it was open, the cores its process held at once, and how many threads shared
// the program's work (region.hpp says what each gives).
#include <algorithm>
#include <functional>
#include <map>
#include <thread>

#include "agent/run/region.hpp"

namespace ceiling::measure {

// What other recording threads of its process spent, while each push/pop instance was
// open, inside their own outermost ranges of another path (side by side instances of the
// same path are RecordedRegion::concurrency's). A region whose instances lie wholly inside
// this one's nearly every time it meets them (90 %), while this one's thread mostly waited
// in them (under half a core), is taken as its work handed to another thread and not
// counted. A pipeline's stages, each a range on its own thread, each read the whole
// process's busy cores before: judged at twice the cores their one thread used; a stage
// slower than the next holds each of the next one's instances (they start as it hands an
// item on), but works meanwhile. From each thread's own CPU-time reads; instances of a
// thread without them get none.
void attribute_beside_cpu(
    NvtxCapture& cap, const std::vector<const std::string*>& instance_image,
    const std::map<std::pair<std::string, int>, CumulativeTimeline>& thread_timelines) {
    if (thread_timelines.size() < 2) return;
    // Each thread's outermost push/pop instances, by start (disjoint within a domain).
    std::map<std::pair<std::string, int>, std::vector<std::size_t>> outermost;
    for (std::size_t i = 0; i < cap.instances.size(); ++i) {
        const auto& r = cap.instances[i];
        if (r.push_pop && r.depth == 0) outermost[{*instance_image[i], r.tid}].push_back(i);
    }
    for (auto& [key, list] : outermost)
        std::sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) {
            return cap.instances[a].start_ns < cap.instances[b].start_ns;
        });
    // Calls visit(other instance, its thread's timeline) for each outermost instance of
    // another path on another recording thread of its image that overlaps instance i.
    const auto each_beside = [&](std::size_t i, const auto& visit) {
        const auto& r = cap.instances[i];
        for (const auto& [key, list] : outermost) {
            if (key.first != *instance_image[i] || key.second == r.tid) continue;
            const auto timeline = thread_timelines.find(key);
            if (timeline == thread_timelines.end()) continue;
            // The first that ends after this one starts: ends rise with starts.
            auto j = std::partition_point(list.begin(), list.end(), [&](std::size_t k) {
                return cap.instances[k].end_ns <= r.start_ns;
            });
            for (; j != list.end() && cap.instances[*j].start_ns < r.end_ns; ++j)
                if (cap.instances[*j].path != r.path) visit(cap.instances[*j], timeline->second);
        }
    };
    const auto inside = [](const RegionInstance& o, const RegionInstance& r) {
        return o.start_ns >= r.start_ns && o.end_ns <= r.end_ns;
    };
    // (its path, the other's path) -> how often they met, how often the other lay wholly
    // inside it, the time it lay inside, and this one's thread's CPU time meanwhile.
    struct Met {
        int n = 0, in = 0;
        double inside_s = 0, own_cpu_s = 0;
        bool handed_on() const {
            return in >= 0.9 * n && inside_s > 0 && own_cpu_s < 0.5 * inside_s;
        }
    };
    std::map<std::pair<const void*, const void*>, Met> met;
    const auto pair_of = [](const RegionInstance& r, const RegionInstance& o) {
        return std::pair<const void*, const void*>(&r.path.str(), &o.path.str());
    };
    for (std::size_t i = 0; i < cap.instances.size(); ++i) {
        const auto& r = cap.instances[i];
        const auto own = thread_timelines.find({*instance_image[i], r.tid});
        if (!r.push_pop || own == thread_timelines.end()) continue;
        each_beside(i, [&](const RegionInstance& o, const CumulativeTimeline&) {
            auto& m = met[pair_of(r, o)];
            ++m.n;
            if (!inside(o, r)) return;
            ++m.in;
            m.inside_s += static_cast<double>(o.end_ns - o.start_ns) * 1e-9;
            if (const auto cpu = own->second.between(o.start_ns, o.end_ns))
                m.own_cpu_s += cpu->value;
        });
    }
    for (std::size_t i = 0; i < cap.instances.size(); ++i) {
        auto& r = cap.instances[i];
        const auto own = thread_timelines.find({*instance_image[i], r.tid});
        if (!r.push_pop || own == thread_timelines.end()) continue;
        double beside = 0;
        each_beside(i, [&](const RegionInstance& o, const CumulativeTimeline& timeline) {
            if (met[pair_of(r, o)].handed_on()) return;  // its own work on another thread
            if (const auto cpu = timeline.between(std::max(o.start_ns, r.start_ns),
                                                  std::min(o.end_ns, r.end_ns)))
                beside += cpu->value;
        });
        r.beside_cpu_s = beside;
    }
}

void attribute_process_cpu(
    NvtxCapture& cap, const std::vector<const std::string*>& instance_image,
    const std::map<std::string, CumulativeTimeline>& process_timelines,
    const std::map<std::pair<std::string, int>, CumulativeTimeline>& thread_timelines) {
    // Each image's recording threads.
    std::map<std::string, std::vector<const CumulativeTimeline*>> by_image;
    for (const auto& [key, timeline] : thread_timelines) by_image[key.first].push_back(&timeline);
    // Instances come in runs of one image and thread in start order: its timelines are looked
    // up once a run, and each one's search goes on from where the last instance's ended.
    const std::string* image = nullptr;
    const CumulativeTimeline* process = nullptr;
    std::size_t process_hint = 0;
    const std::vector<const CumulativeTimeline*>* threads = nullptr;
    std::vector<std::size_t> hints;
    for (std::size_t i = 0; i < cap.instances.size(); ++i) {
        auto& r = cap.instances[i];
        if (instance_image[i] != image) {
            image = instance_image[i];
            const auto p = process_timelines.find(*image);
            process = p == process_timelines.end() ? nullptr : &p->second;
            const auto found = by_image.find(*image);
            threads = found == by_image.end() ? nullptr : &found->second;
            hints.assign(threads ? threads->size() : 0, 0);
        }
        if (!process) continue;
        const auto cpu = process->between(r.start_ns, r.end_ns, &process_hint);
        if (!cpu) continue;
        r.cpu_s = cpu->value;
        r.cpu_error_s = cpu->error;
        if (!threads) continue;
        double recording = 0;
        for (std::size_t k = 0; k < threads->size(); ++k)
            if (const auto t = (*threads)[k]->between(r.start_ns, r.end_ns, &hints[k]))
                recording += t->value;
        r.unranged_cpu_s = std::max(0.0, cpu->value - recording);
    }
}

namespace {

// Instances a block: with their 192 bytes, ~200 KB, which stays in a core's L2 cache while
// every source visits it.
constexpr std::size_t placement_block = 1024;
// Below this many instances one thread places them all (a second costs more to start).
constexpr std::size_t two_threads_from = 16 * placement_block;

// Whether the readings cover at least 90 % of the instance: the part [begin, end] they do.
bool covers(const std::vector<TimelinePoint>& points, const RegionInstance& r,
            std::int64_t& begin, std::int64_t& end) {
    begin = std::max(r.start_ns, points.front().t_ns);
    end = std::min(r.end_ns, points.back().t_ns);
    const auto length = r.end_ns - r.start_ns, covered = end - begin;
    return covered >= 0 && static_cast<double>(covered) >= 0.9 * static_cast<double>(length);
}

// The growth of a sampled timeline (`points` its readings, oldest first) over an instance:
// over the part the readings cover, at least 90 % of it, scaled to the whole at that rate (a
// range opened as the program starts begins before the sampler's first reading), with its
// error scaled alike. nullopt where they cover less.
std::optional<Estimate> covered_growth(const CumulativeTimeline& timeline,
                                       const std::vector<TimelinePoint>& points,
                                       const RegionInstance& r, std::size_t& hint) {
    std::int64_t begin = 0, end = 0;
    if (!covers(points, r, begin, end)) return std::nullopt;
    const auto length = r.end_ns - r.start_ns, covered = end - begin;
    auto v = timeline.between(begin, end, &hint);
    if (!v || covered == 0) return v;
    const double scale = static_cast<double>(length) / static_cast<double>(covered);
    return Estimate{v->value * scale, v->error * scale};
}

// Each instance's growth of its process's timeline (the one of that pid whose readings reach
// into the instance: a pid used again later in the run is another process) into `field`.
void place_per_process(std::span<RegionInstance> block, const std::vector<ProcessTimeline>& per_process,
                       const std::vector<CumulativeTimeline>& timelines, std::vector<std::size_t>& hints,
                       OptionalDouble RegionInstance::*field, double RegionInstance::*error) {
    for (auto& r : block)
        for (std::size_t i = 0; i < per_process.size(); ++i) {
            const auto& points = per_process[i].points;
            if (per_process[i].pid != r.pid || points.front().t_ns > r.end_ns ||
                points.back().t_ns < r.start_ns)
                continue;
            if (const auto grew = timelines[i].between(r.start_ns, r.end_ns, &hints[i])) {
                r.*field = grew->value;
                if (error) r.*error = grew->error;
            }
            break;
        }
}

void place_working_threads(std::span<RegionInstance> block, const std::vector<ThreadWindow>& windows) {
    for (auto& r : block) {
        const auto first =
            std::lower_bound(windows.begin(), windows.end(), r.start_ns,
                             [](const ThreadWindow& w, std::int64_t t) { return w.end_ns <= t; });
        double weighted = 0, weight = 0;
        for (auto w = first; w != windows.end() && w->start_ns < r.end_ns; ++w) {
            const auto overlap = std::min(w->end_ns, r.end_ns) - std::max(w->start_ns, r.start_ns);
            // An instant instance (start = end) inside a window takes that window's.
            const double dt = std::max<double>(1, static_cast<double>(overlap));
            weighted += w->working_threads * dt;
            weight += dt;
        }
        if (weight > 0) r.working_threads = weighted / weight;
    }
}

// `looks`: room reused from one instance to the next.
void place_peak_busy(std::span<RegionInstance> block, const std::vector<TimelinePoint>& cpu,
                     int min_looks, std::vector<std::pair<double, double>>& looks) {
    for (auto& r : block) {
        const auto first =
            std::lower_bound(cpu.begin(), cpu.end(), r.start_ns,
                             [](const TimelinePoint& p, std::int64_t t) { return p.t_ns < t; });
        looks.clear();  // (busy cores, seconds)
        double looked_s = 0;
        for (auto p = first; p != cpu.end() && std::next(p) != cpu.end(); ++p) {
            const auto q = std::next(p);
            if (q->t_ns > r.end_ns) break;
            const double dt = static_cast<double>(q->t_ns - p->t_ns) * 1e-9;
            if (!(dt > 0)) continue;
            looks.emplace_back(std::max(0.0, q->value - p->value) / dt, dt);
            looked_s += dt;
        }
        if (static_cast<int>(looks.size()) < min_looks) continue;
        // Busiest first: the busy cores at which the looks so far reach 10 % of the time.
        std::sort(looks.begin(), looks.end(), std::greater<>());
        double seen_s = 0;
        for (const auto& [busy, dt] : looks) {
            seen_s += dt;
            if (seen_s >= 0.1 * looked_s) {
                r.peak_busy_cores = busy;
                break;
            }
        }
    }
}

std::vector<CumulativeTimeline> timelines_of(const std::vector<ProcessTimeline>* per_process,
                                             double rate_bound) {
    std::vector<CumulativeTimeline> out;
    if (per_process)
        for (const auto& b : *per_process) out.emplace_back(b.points, rate_bound);
    return out;
}

}  // namespace

SamplePlacement::SamplePlacement(SampleSources sources)
    : s_(std::move(sources)),
      descendant_(timelines_of(s_.descendant_cpu, s_.descendant_cores)),
      queued_(timelines_of(s_.queued, s_.queued_threads)) {
    for (const auto& q : s_.sampled) {
        const auto& p = *q.points;
        if (p.size() < 2) continue;
        const bool flat = std::all_of(p.begin(), p.end(), [&](const TimelinePoint& x) {
            return x.value == p.front().value;
        });
        sampled_.push_back({&q, CumulativeTimeline(p, q.at_least_rate), flat});
    }
    if (s_.host_cpu && s_.host_cpu->size() >= 2) host_ = CumulativeTimeline(*s_.host_cpu, s_.host_cores);
}

void SamplePlacement::place(std::span<RegionInstance> instances) const {
    // Where each source's last search ended, carried from one instance to the next.
    std::vector<std::size_t> sampled_hints(sampled_.size(), 0),
        descendant_hints(descendant_.size(), 0), queued_hints(queued_.size(), 0);
    std::size_t host_hint = 0;
    std::vector<std::pair<double, double>> looks;
    for (std::size_t at = 0; at < instances.size(); at += placement_block) {
        const auto block = instances.subspan(at, std::min(placement_block, instances.size() - at));
        if (s_.thread_windows) place_working_threads(block, *s_.thread_windows);
        for (std::size_t k = 0; k < sampled_.size(); ++k) {
            const Sampled& t = sampled_[k];
            for (auto& r : block) {
                if (t.flat) {
                    std::int64_t begin = 0, end = 0;
                    if (covers(*t.q->points, r, begin, end)) r.*(t.q->field) = 0.0;
                } else if (const auto v = covered_growth(t.timeline, *t.q->points, r, sampled_hints[k])) {
                    r.*(t.q->field) =
                        t.q->at_least_rate ? std::max(0.0, v->value - v->error) : v->value;
                }
            }
        }
        if (!descendant_.empty())
            place_per_process(block, *s_.descendant_cpu, descendant_, descendant_hints,
                              &RegionInstance::descendant_cpu_s,
                              &RegionInstance::descendant_cpu_error_s);
        if (!queued_.empty())
            place_per_process(block, *s_.queued, queued_, queued_hints, &RegionInstance::queued_s,
                              nullptr);
        // After the descendants' time: the others' is the host's less the program's and theirs.
        if (!host_.empty())
            for (auto& r : block) {
                if (!r.cpu_s) continue;
                if (const auto host_s = covered_growth(host_, *s_.host_cpu, r, host_hint))
                    r.other_cpu_s =
                        std::max(0.0, host_s->value - *r.cpu_s - r.descendant_cpu_s.value_or(0.0));
            }
        if (s_.process_cpu) place_peak_busy(block, *s_.process_cpu, s_.min_looks, looks);
    }
}

void place_samples(NvtxCapture& cap, const SamplePlacement& placement) {
    std::span<RegionInstance> all(cap.instances);
    if (all.size() < two_threads_from) {
        placement.place(all);
        return;
    }
    // Halves at a block's edge; the program has ended, so a second core is free.
    const std::size_t half = all.size() / 2 / placement_block * placement_block;
    std::jthread first([&] { placement.place(all.first(half)); });
    placement.place(all.subspan(half));
}

void attribute_descendant_cpu(NvtxCapture& cap, const std::vector<ProcessTimeline>& below,
                              double cores) {
    place_samples(cap, SamplePlacement({.descendant_cpu = &below, .descendant_cores = cores}));
}

void attribute_other_cpu(NvtxCapture& cap, const std::vector<TimelinePoint>& host, double cores) {
    place_samples(cap, SamplePlacement({.host_cpu = &host, .host_cores = cores}));
}

void attribute_sampled(NvtxCapture& cap, const std::vector<TimelinePoint>& points,
                       OptionalDouble RegionInstance::*field,
                       std::optional<double> at_least_rate) {
    attribute_sampled(cap, {{&points, field, at_least_rate}});
}

void attribute_sampled(NvtxCapture& cap, const std::vector<SampledQuantity>& quantities) {
    place_samples(cap, SamplePlacement({.sampled = quantities}));
}

void attribute_peak_busy(NvtxCapture& cap, const std::vector<TimelinePoint>& cpu, int min_looks) {
    place_samples(cap, SamplePlacement({.process_cpu = &cpu, .min_looks = min_looks}));
}

void attribute_working_threads(NvtxCapture& cap, const std::vector<ThreadWindow>& windows) {
    place_samples(cap, SamplePlacement({.thread_windows = &windows}));
}

}  // namespace ceiling::measure
