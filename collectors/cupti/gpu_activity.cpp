#include "collectors/cupti/gpu_activity.hpp"

#include <algorithm>
#include <tuple>

namespace ceiling::collectors::gpu {
namespace {

template <typename E, std::size_t N>
std::optional<E> parse_name(std::string_view s, const std::array<std::string_view, N>& names) {
    for (std::size_t i = 0; i < N; ++i)
        if (names[i] == s) return static_cast<E>(i);
    return std::nullopt;
}

template <typename V>
void move_append(std::vector<V>& to, std::vector<V>& from) {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

using TrackKey = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;

}  // namespace

std::string_view to_string(CopyKind k) { return copy_kind_names.at(static_cast<std::size_t>(k)); }
std::string_view to_string(MemoryKind k) { return memory_kind_names.at(static_cast<std::size_t>(k)); }
std::string_view to_string(SyncKind k) { return sync_kind_names.at(static_cast<std::size_t>(k)); }
std::optional<CopyKind> parse_copy_kind(std::string_view s) { return parse_name<CopyKind>(s, copy_kind_names); }
std::optional<MemoryKind> parse_memory_kind(std::string_view s) {
    return parse_name<MemoryKind>(s, memory_kind_names);
}
std::optional<SyncKind> parse_sync_kind(std::string_view s) { return parse_name<SyncKind>(s, sync_kind_names); }

bool ActivityLog::empty() const {
    return kernels.empty() && copies.empty() && memsets.empty() && syncs.empty() && overheads.empty();
}

void ActivityLog::append(ActivityLog&& other) {
    move_append(kernels, other.kernels);
    move_append(copies, other.copies);
    move_append(memsets, other.memsets);
    move_append(syncs, other.syncs);
    move_append(overheads, other.overheads);
    move_append(launches, other.launches);
    dropped_records += other.dropped_records;
    for (const auto& [k, n] : other.ignored_kinds) ignored_kinds[k] += n;
}

std::vector<Interval> merge_intervals(std::vector<Interval> v) {
    std::erase_if(v, [](const Interval& i) { return i.end_ns <= i.start_ns; });
    std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
    std::vector<Interval> out;
    for (const auto& i : v) {
        if (!out.empty() && i.start_ns <= out.back().end_ns)
            out.back().end_ns = std::max(out.back().end_ns, i.end_ns);
        else
            out.push_back(i);
    }
    return out;
}

double total_seconds(const std::vector<Interval>& merged) {
    double s = 0;
    for (const auto& i : merged) s += i.seconds();
    return s;
}

GpuTimeline build_timeline(const ActivityLog& log, const TimelineOptions& options) {
    GpuTimeline t;
    t.kernel_count = log.kernels.size();
    std::map<std::uint32_t, std::vector<Interval>> busy, kernel, copy;
    std::map<TrackKey, StreamTrack> tracks;
    std::map<TrackKey, std::vector<Interval>> track_busy;
    auto track = [&](std::uint32_t d, std::uint32_t c, std::uint32_t s) -> StreamTrack& {
        auto& tr = tracks[{d, c, s}];
        tr.device = d;
        tr.context = c;
        tr.stream = s;
        return tr;
    };

    for (const auto& k : log.kernels) {
        const Interval i{k.start_ns, k.end_ns};
        busy[k.device].push_back(i);
        kernel[k.device].push_back(i);
        ++track(k.device, k.context, k.stream).kernels;
        track_busy[{k.device, k.context, k.stream}].push_back(i);
    }
    for (const auto& c : log.copies) {
        const Interval i{c.start_ns, c.end_ns};
        busy[c.device].push_back(i);
        copy[c.device].push_back(i);
        ++track(c.device, c.context, c.stream).copies;
        track_busy[{c.device, c.context, c.stream}].push_back(i);
        auto& tot = t.copies[c.kind];
        tot.bytes += c.bytes;
        ++tot.count;
        tot.seconds += i.seconds();
        if (c.src == MemoryKind::pageable || c.dst == MemoryKind::pageable) {
            t.pageable_copies.bytes += c.bytes;
            ++t.pageable_copies.count;
            t.pageable_copies.seconds += i.seconds();
        }
    }
    for (const auto& m : log.memsets) {
        const Interval i{m.start_ns, m.end_ns};
        busy[m.device].push_back(i);
        ++track(m.device, m.context, m.stream).memsets;
        track_busy[{m.device, m.context, m.stream}].push_back(i);
    }

    for (auto& [dev, intervals] : busy) {
        DeviceTimeline d;
        d.device = dev;
        const auto merged = merge_intervals(intervals);
        if (merged.empty()) continue;
        d.window = options.window.value_or(Interval{merged.front().start_ns, merged.back().end_ns});
        // Busy time counted inside the window only, so idle = window - busy is never negative.
        std::vector<Interval> clipped;
        for (const auto& i : merged) {
            const Interval c{std::max(i.start_ns, d.window.start_ns), std::min(i.end_ns, d.window.end_ns)};
            if (c.end_ns > c.start_ns) clipped.push_back(c);
        }
        d.busy_s = total_seconds(clipped);
        d.kernel_s = total_seconds(merge_intervals(kernel[dev]));
        d.copy_s = total_seconds(merge_intervals(copy[dev]));
        d.idle_s = std::max(0.0, d.window.seconds() - d.busy_s);
        std::int64_t cursor = d.window.start_ns;
        for (const auto& i : clipped) {
            if (i.start_ns - cursor >= options.min_gap_ns) d.gaps.push_back({cursor, i.start_ns});
            cursor = std::max(cursor, i.end_ns);
        }
        if (d.window.end_ns - cursor >= options.min_gap_ns) d.gaps.push_back({cursor, d.window.end_ns});
        t.devices.push_back(std::move(d));
    }
    for (auto& [key, tr] : tracks) {
        tr.busy_s = total_seconds(merge_intervals(track_busy[key]));
        t.streams.push_back(tr);
    }

    std::vector<Interval> waits, overheads;
    for (const auto& s : log.syncs)
        if (sync_kind_blocks_host.at(static_cast<std::size_t>(s.kind))) waits.push_back({s.start_ns, s.end_ns});
    for (const auto& o : log.overheads) overheads.push_back({o.start_ns, o.end_ns});
    t.host_sync_wait_s = total_seconds(merge_intervals(std::move(waits)));
    t.overhead_s = total_seconds(merge_intervals(std::move(overheads)));
    return t;
}

std::map<std::string, std::vector<double>> kernel_durations(const ActivityLog& log) {
    std::vector<const KernelActivity*> order;
    for (const auto& k : log.kernels) order.push_back(&k);
    std::stable_sort(order.begin(), order.end(),
                     [](const KernelActivity* a, const KernelActivity* b) { return a->start_ns < b->start_ns; });
    std::map<std::string, std::vector<double>> out;
    for (const auto* k : order) out[k->name].push_back(static_cast<double>(k->end_ns - k->start_ns) * 1e-9);
    return out;
}

}  // namespace ceiling::collectors::gpu
