// read_nvtx_capture (agent/run/region.hpp): a capture directory the injection library wrote
// (agent/inject/nvtx_event_format.hpp) into a program's region instances, marks, thread names,
// CPU times and recording cost.
#include "agent/run/region.hpp"

#include <sys/mman.h>
#include <unistd.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; absent from older C library headers
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/inject/nvtx_event_format.hpp"
#include "agent/run/capture_files.hpp"
#include "agent/run/cumulative_timeline.hpp"
#include "collectors/clock.hpp"

namespace ceiling::measure {

namespace fs = std::filesystem;
using inject::Event;
using inject::EventFileHeader;
using inject::EventKind;

namespace {

// NVTX messages are the program's bytes, in any encoding: text that is not UTF-8 would make
// the record and the trace (strict JSON) unwritable, so the JSON writer's own replacement
// (U+FFFD for each invalid sequence) is applied once, where the strings come in.
std::string valid_utf8(const std::string& s) {
    const auto replaced = nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return nlohmann::json::parse(replaced).get<std::string>();
}

// By (pid, tid, start, longest first): the keys are sorted and the instances moved once
// into place (they are large; sorting them directly moves each one log n times).
void sort_instances(std::vector<RegionInstance>& instances) {
    struct Key {
        int pid, tid;
        std::int64_t start_ns, minus_duration;
        std::size_t index;
        auto operator<=>(const Key&) const = default;
    };
    auto key = [&](std::size_t i) {
        const auto& r = instances[i];
        return Key{r.pid, r.tid, r.start_ns, r.start_ns - r.end_ns, i};
    };
    // A program whose ranges do not nest leaves them in order: no keys are built then.
    bool sorted = true;
    for (std::size_t i = 1; i < instances.size() && sorted; ++i) sorted = key(i - 1) < key(i);
    if (sorted) return;
    std::vector<Key> keys;
    keys.reserve(instances.size());
    for (std::size_t i = 0; i < instances.size(); ++i) keys.push_back(key(i));
    std::sort(keys.begin(), keys.end());
    // The permutation applied in place, cycle by cycle: a sorted copy would touch as much
    // fresh memory again (53 MB for 200 000 instances, its page faults included).
    for (std::size_t start = 0; start < keys.size(); ++start) {
        if (keys[start].index == start) continue;
        RegionInstance held = std::move(instances[start]);
        std::size_t at = start;
        while (keys[at].index != start) {
            const std::size_t from = keys[at].index;
            instances[at] = std::move(instances[from]);
            keys[at].index = at;
            at = from;
        }
        instances[at] = std::move(held);
        keys[at].index = at;
    }
}

// Maps in the pages of [p, p + bytes) that are not yet there, writing nothing (Linux 5.14;
// on an older kernel the call fails and the pages fault in when written, as before). Safe
// beside a thread writing the same memory: only page tables change.
void populate_pages(void* p, std::size_t bytes) {
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = (reinterpret_cast<std::uintptr_t>(p) + page - 1) / page * page;
    const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) / page * page;
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
}
// Below this a helper thread costs more than the page faults it would take over.
constexpr std::size_t populate_ahead_min_bytes = std::size_t{8} << 20;

// An IMAGE.peak file: its process's peak resident set at exit; the largest of them is kept.
void read_peak_rss(const fs::path& p, NvtxCapture& cap) {
    std::uint64_t bytes = 0;
    std::ifstream in(p, std::ios::binary);
    // Below a petabyte: anything else is not a process's memory.
    if (in.read(reinterpret_cast<char*>(&bytes), sizeof bytes) && bytes > 0 &&
        bytes < (std::uint64_t{1} << 50))
        cap.peak_rss_bytes =
            std::max(cap.peak_rss_bytes.value_or(0.0), static_cast<double>(bytes));
}

// Each string id is parsed and interned once per image; an event then costs one hash
// lookup (a program may record a few hundred thousand ranges with a handful of names). An
// image's strings file is read again where an id is not in it yet, if it grew: the program
// writes a string before any event that names it, and a capture is read while it writes.
class StringResolver {
  public:
    struct Resolved {
        Interned name;
        InternedWork work;  // interned once per declared name
    };
    using Cache = std::unordered_map<std::uint32_t, Resolved>;  // one image's ids

    StringResolver(fs::path dir, std::vector<std::string>& warnings)
        : dir_(std::move(dir)), warnings_(warnings) {}

    Cache& cache_of(const std::string& image) { return resolved_[image]; }

    const Resolved& resolve(const std::string& image, Cache& cache, std::uint32_t id) {
        static const Resolved unnamed{"(unnamed)", InternedWork()};
        if (id == 0) return unnamed;
        if (const auto hit = cache.find(id); hit != cache.end()) return hit->second;
        const std::string* text = text_of(image, id);
        if (!text && reload(image)) text = text_of(image, id);
        const std::string raw = text ? *text : "(string " + std::to_string(id) + ")";
        auto [it, inserted] = declared_.try_emplace(raw);
        if (inserted) {
            it->second = parse_declared_work(valid_utf8(raw));
            if (!it->second.error.empty()) warnings_.push_back(it->second.error);
        }
        return cache.emplace(id, Resolved{it->second.name, InternedWork(it->second.work)})
            .first->second;
    }

  private:
    const std::string* text_of(const std::string& image, std::uint32_t id) const {
        const auto si = strings_.find(image);
        if (si == strings_.end()) return nullptr;
        const auto t = si->second.find(id);
        return t == si->second.end() ? nullptr : &t->second;
    }
    // Reads IMAGE.str again where it grew since; whether it did.
    bool reload(const std::string& image) {
        const fs::directory_entry entry(dir_ / (image + ".str"));
        std::error_code ec;
        const std::uintmax_t size = entry.file_size(ec);
        if (ec || !is_plain_file(entry)) return false;
        auto [at, added] = loaded_bytes_.try_emplace(image, 0);
        if (!added && at->second == size) return false;
        at->second = size;
        strings_[image] = read_strings(entry.path());
        return true;
    }

    fs::path dir_;
    std::vector<std::string>& warnings_;
    ImageStrings strings_;
    std::map<std::string, std::uintmax_t> loaded_bytes_;  // IMAGE.str's size when last read
    std::map<std::string, DeclaredName> declared_;
    std::map<std::string, Cache> resolved_;
};

// An instance's path from its parent's (or, at top level, its domain) and its name: built
// once per distinct triple, not per instance.
class PathInterner {
  public:
    Interned path_of(Interned parent, Interned domain, Interned name) {
        auto [it, inserted] = paths_.try_emplace(PathKey{parent, domain, name});
        if (inserted)
            it->second = !parent.empty() ? parent.str() + "/" + name.str()
                         : domain.empty() ? name.str()
                                          : domain.str() + "::" + name.str();
        return it->second;
    }

  private:
    struct PathKey {
        Interned parent, domain, name;
        bool operator==(const PathKey&) const = default;
    };
    struct PathKeyHash {
        std::size_t operator()(const PathKey& k) const {
            return k.parent.hash() ^ (k.domain.hash() * 31) ^ (k.name.hash() * 1009);
        }
    };
    std::unordered_map<PathKey, Interned, PathKeyHash> paths_;
};

// A range never ends before it starts, and its nested time stays within it and within the
// window, however a hostile capture overlaps its children.
void add_child(RegionInstance& parent, const RegionInstance& child, std::int64_t end_ns) {
    parent.child_ns = std::min(parent.child_ns + (child.end_ns - child.start_ns),
                               std::max<std::int64_t>(end_ns, 0));
}
void close_instance(RegionInstance& r, std::int64_t t) {
    r.end_ns = std::max(t, r.start_ns);
    r.child_ns = std::min(r.child_ns, r.end_ns - r.start_ns);
}

bool is_timed_cost(float ns) { return std::isfinite(ns) && ns > 0 && ns < 1e9f; }

// What recording cost the program, from the costs each chunk's process timed.
struct RecordingCost {
    double recording_ns = 0;
    bool untimed = false;  // a chunk with events and no recording cost
    float range_ns = 0;    // the dearest range any process timed
    std::map<std::string, float> calibration_ns;  // per image: the library's timing, once

    void add_chunk(const std::string& image, const EventFileHeader& header,
                   std::uint64_t range_events, std::uint64_t cpu_events) {
        if (is_timed_cost(header.calibration_ns))
            calibration_ns[image] = std::max(calibration_ns[image], header.calibration_ns);
        if (is_timed_cost(header.range_ns)) range_ns = std::max(range_ns, header.range_ns);
        // A range (push and pop) costs range_ns, so an event half of it.
        if (is_timed_cost(header.range_ns) && is_timed_cost(header.cpu_read_ns))
            recording_ns += static_cast<double>(range_events) * header.range_ns / 2 +
                            static_cast<double>(cpu_events) * header.cpu_read_ns;
        else if (range_events + cpu_events > 0)
            untimed = true;
    }

    void write_to(NvtxCapture& cap) const {
        double timing_ns = 0;
        for (const auto& [image, ns] : calibration_ns) timing_ns += ns;
        const double total_ns = recording_ns + timing_ns;
        if (cap.recorded_events > 0 && !untimed && timing_ns > 0)
            cap.timing_cost_s = timing_ns * 1e-9;
        if (cap.recorded_events > 0 && !untimed) cap.recording_s = total_ns * 1e-9;
        if (range_ns > 0) cap.range_cost_s = static_cast<double>(range_ns) * 1e-9;
    }
};

// What reading the chunks of every thread gathers, kept until the capture is complete.
struct CaptureReading {
    CaptureReading(NvtxCapture& c, const fs::path& dir) : cap(c), strings(dir, c.warnings) {}

    NvtxCapture& cap;
    // The latest time an event can have: the program's end, or while it runs the time of
    // the reading (a later one is corrupt, or an orphan's after the end).
    std::int64_t end_ns = 0;
    bool live = false;  // reading while the program runs
    StringResolver strings;
    PathInterner paths;
    // start/end ranges of each image, keyed by range id; paired after all threads are read.
    std::map<std::string, std::unordered_map<std::uint64_t, RegionInstance>> started;
    std::map<std::string, std::vector<std::pair<std::uint64_t, std::int64_t>>> ended;
    // Each image's process CPU-time reads, and the image of each instance (same order).
    std::map<std::string, std::vector<TimelinePoint>> cpu_reads;
    std::map<std::pair<std::string, int>, std::vector<TimelinePoint>> thread_cpu_reads;
    std::vector<const std::string*> instance_image;
    RecordingCost cost;

    // `image` must outlive the reading: a key of a map that does.
    void keep(RegionInstance&& r, const std::string& image) {
        cap.instances.push_back(std::move(r));
        instance_image.push_back(&image);
    }
};

// One chunk's events, by what recording them cost: a range's half, or a CPU-time read.
struct ChunkCounts {
    std::uint64_t range_events = 0, cpu_events = 0;
};

// The events of one recording thread, chunk after chunk, and its open push/pop ranges.
class ThreadEvents {
  public:
    ThreadEvents(CaptureReading& reading, const std::string& image)
        : reading_(reading), image_(image), image_strings_(reading.strings.cache_of(image)) {}

    // One event of a chunk with header `h`; false at an event never written (the chunk's end).
    bool handle(const EventFileHeader& h, const Event& event, ChunkCounts& counts) {
        // Times are the program's word: outside [0, its end] they are corrupt or late
        // (an orphan's), and unbounded ones overflow every duration taken from them.
        Event e = event;
        e.t_ns = std::clamp<std::int64_t>(e.t_ns, 0, std::max<std::int64_t>(reading_.end_ns, 0));
        const auto kind = static_cast<EventKind>(e.kind);
        if (kind == EventKind::none) return false;
        // While the program runs: an event stamped after this reading began was written
        // after it too, and is read next time (at the end, a later time is clamped).
        if (reading_.live && event.t_ns > reading_.end_ns) return false;
        ++(kind == EventKind::cpu_time || kind == EventKind::thread_cpu_time
               ? counts.cpu_events
               : counts.range_events);
        switch (kind) {
            case EventKind::push:
                push(h, e);
                break;
            case EventKind::pop:
                pop(e);
                break;
            case EventKind::start:
                start(h, e);
                break;
            case EventKind::end:
                reading_.ended[image_].emplace_back(e.range_id, e.t_ns);
                break;
            case EventKind::mark:
                mark(h, e);
                break;
            case EventKind::thread_name:
                reading_.cap.thread_names[{h.pid, static_cast<int>(e.range_id)}] =
                    string_of(e.string).name;
                break;
            case EventKind::cpu_time:
                reading_.cpu_reads[image_].push_back(
                    {e.t_ns, static_cast<double>(e.range_id) * 1e-9});
                break;
            case EventKind::thread_cpu_time:
                reading_.thread_cpu_reads[{image_, h.tid}].push_back(
                    {e.t_ns, static_cast<double>(e.range_id) * 1e-9});
                break;
            default:
                break;
        }
        return true;
    }

    // Ranges still open when the process ended (crash, exit inside a range) end with it.
    void close_open_ranges() {
        for (auto& [domain, stack] : stacks_) {
            while (!stack.empty()) {
                RegionInstance r = std::move(stack.back());
                stack.pop_back();
                close_instance(r, reading_.end_ns);
                r.unclosed = true;
                if (!stack.empty()) add_child(stack.back(), r, reading_.end_ns);
                reading_.keep(std::move(r), image_);
            }
        }
    }

  private:
    const StringResolver::Resolved& string_of(std::uint32_t id) {
        return reading_.strings.resolve(image_, image_strings_, id);
    }
    Interned domain_of(std::uint32_t id) { return id == 0 ? Interned() : string_of(id).name; }

    // A range opened by `e` (push or start) under `parent`, into `r` (default-constructed:
    // filled in place, a RegionInstance is 400-odd bytes and 200 000 of them are read).
    void open_into(RegionInstance& r, const EventFileHeader& h, const Event& e, Interned parent) {
        const StringResolver::Resolved& dn = string_of(e.string);
        r.name = dn.name;
        r.work = dn.work;
        r.domain = domain_of(e.domain);
        r.parent = parent;
        r.path = reading_.paths.path_of(r.parent, r.domain, r.name);
        r.pid = h.pid;
        r.tid = h.tid;
        r.start_ns = e.t_ns;
    }
    void push(const EventFileHeader& h, const Event& e) {
        auto& stack = stacks_[e.domain];
        if (stack.size() >= max_range_depth) {
            ++deeper_[e.domain];
            ++reading_.cap.deeper_ranges;
            return;
        }
        const Interned parent = stack.empty() ? Interned() : stack.back().path;
        RegionInstance& r = stack.emplace_back();
        open_into(r, h, e, parent);
        r.depth = static_cast<int>(stack.size() - 1);
    }
    void pop(const Event& e) {
        if (auto deeper = deeper_.find(e.domain); deeper != deeper_.end() && deeper->second > 0) {
            --deeper->second;
            return;
        }
        auto& stack = stacks_[e.domain];
        if (stack.empty()) {
            reading_.cap.warnings.push_back("an NVTX pop without a push was ignored");
            return;
        }
        RegionInstance& r = stack.back();
        close_instance(r, e.t_ns);
        if (stack.size() > 1) add_child(stack[stack.size() - 2], r, reading_.end_ns);
        reading_.keep(std::move(r), image_);
        stack.pop_back();
    }
    void start(const EventFileHeader& h, const Event& e) {
        RegionInstance& r = reading_.started[image_][e.range_id];
        r = RegionInstance();
        open_into(r, h, e, Interned());
        r.push_pop = false;
    }
    void mark(const EventFileHeader& h, const Event& e) {
        MarkInstance m;
        m.name = string_of(e.string).name;
        m.domain = domain_of(e.domain);
        m.pid = h.pid;
        m.tid = h.tid;
        m.t_ns = e.t_ns;
        reading_.cap.marks.push_back(std::move(m));
    }

    CaptureReading& reading_;
    const std::string& image_;
    StringResolver::Cache& image_strings_;
    // Push/pop nesting is per thread and per domain (nvToolsExt.h).
    std::map<std::uint32_t, std::vector<RegionInstance>> stacks_;
    // Ranges open below max_range_depth on each domain, counted only.
    std::map<std::uint32_t, std::uint64_t> deeper_;
};

// One recording thread's chunks, in the order it wrote them, and how far they were read.
struct ThreadCursor {
    std::vector<ChunkFile> chunks;
    std::unique_ptr<ThreadEvents> events;  // made at its first event
    std::size_t chunk = 0;                 // the chunk being read
    std::uint64_t next_event = 0;          // of it, the first not read
    ChunkCounts counts;                    // of it, so far
};

// A chunk `c` read to its end into the capture's counts and costs. Its header is read again:
// the writer counts in it what it could not record, while it writes the chunk.
void chunk_read(CaptureReading& reading, const std::string& image, const ChunkFile& c,
                const ChunkCounts& counts) {
    const EventFileHeader h = read_chunk_header(c.path).value_or(c).header;
    reading.cap.recorded_events += counts.range_events + counts.cpu_events;
    reading.cap.dropped_events += h.dropped_events;
    reading.cost.add_chunk(image, h, counts.range_events, counts.cpu_events);
}

// Reads a thread's events on from where `t` stands; `image` is a key of the cursors' map.
// While the program runs (`to_end` false) it stops at the first event not yet written in
// the thread's last chunk, to go on from there next time; at the end, an event never written
// ends its chunk, and the thread's open ranges end with the program.
void read_thread(CaptureReading& reading, EventReader& reader, const std::string& image,
                 ThreadCursor& t, bool to_end) {
    if (!t.events) t.events = std::make_unique<ThreadEvents>(reading, image);
    for (; t.chunk < t.chunks.size(); ++t.chunk, t.next_event = 0, t.counts = {}) {
        const ChunkFile& c = t.chunks[t.chunk];
        const auto handle = [&](const Event& event) {
            return t.events->handle(c.header, event, t.counts);
        };
        reader.open(c.path, c.header.capacity, t.next_event);
        // Where handling stopped short: at an event never written, or (while the program
        // runs) at one stamped after the pass began, which this chunk's rest follows.
        bool unwritten = false, later = false;
        for (auto events = reader.next(!to_end); !events.empty() && !unwritten && !later;
             events = reader.next(!to_end)) {
            const auto end = std::find_if_not(events.begin(), events.end(), handle);
            t.next_event += static_cast<std::uint64_t>(end - events.begin());
            if (end != events.end()) (end->kind == 0 ? unwritten : later) = true;
        }
        const bool last = t.chunk + 1 == t.chunks.size();
        if (!to_end && (later || (last && (unwritten || t.next_event < c.header.capacity))))
            return;
        chunk_read(reading, image, c, t.counts);
    }
    if (to_end) t.events->close_open_ranges();
}

// Start/end ranges paired by id within their image; those never ended end with the program.
void pair_started_ranges(CaptureReading& reading) {
    for (auto& [image, ends] : reading.ended) {
        auto& open = reading.started[image];
        for (const auto& [id, t] : ends) {
            auto it = open.find(id);
            if (it == open.end()) continue;  // started before a fork, in the parent image
            it->second.end_ns = std::max(t, it->second.start_ns);
            reading.keep(std::move(it->second), image);
            open.erase(it);
        }
    }
    for (auto& [image, open] : reading.started)
        for (auto& [id, r] : open) {
            r.end_ns = std::max(reading.end_ns, r.start_ns);
            r.unclosed = true;
            reading.keep(std::move(r), image);
        }
}

// The process's and each recording thread's CPU time over each instance. A process keeps at
// most all CPUs busy, a thread one, which bounds how far the reads around an instant can be
// off (cumulative_timeline.hpp).
void attribute_cpu(CaptureReading& reading, int cpus) {
    const double cores = cpus > 0 ? cpus : std::max(1u, std::thread::hardware_concurrency());
    std::map<std::string, CumulativeTimeline> process_timelines;
    for (auto& [image, reads] : reading.cpu_reads)
        process_timelines.emplace(image, CumulativeTimeline(std::move(reads), cores));
    std::map<std::pair<std::string, int>, CumulativeTimeline> thread_timelines;
    for (auto& [key, reads] : reading.thread_cpu_reads)
        thread_timelines.emplace(key, CumulativeTimeline(std::move(reads), 1.0));
    attribute_beside_cpu(reading.cap, reading.instance_image, thread_timelines);
    attribute_process_cpu(reading.cap, reading.instance_image, process_timelines, thread_timelines);
}

void put_in_order(NvtxCapture& cap) {
    sort_instances(cap.instances);
    std::sort(cap.marks.begin(), cap.marks.end(),
              [](const MarkInstance& a, const MarkInstance& b) { return a.t_ns < b.t_ns; });
    // One line per distinct warning: a loop of unbalanced pops is one problem.
    std::sort(cap.warnings.begin(), cap.warnings.end());
    cap.warnings.erase(std::unique(cap.warnings.begin(), cap.warnings.end()), cap.warnings.end());
}

// The kernel hands out the instances' memory (53 MB for 200 000 ranges) a page at a time
// as it is first written: a third of reading such a capture after the program. Another core
// populates the part not yet written ahead of the writes meanwhile (the program has ended,
// so one is free).
std::jthread populate_ahead(std::vector<RegionInstance>& instances) {
    std::jthread populate;
    const std::size_t bytes = (instances.capacity() - instances.size()) * sizeof(RegionInstance);
    if (bytes >= populate_ahead_min_bytes)
        populate = std::jthread(populate_pages, instances.data() + instances.size(), bytes);
    return populate;
}

}  // namespace

struct NvtxCaptureReader::State {
    explicit State(const fs::path& d) : dir(d), reading(cap, d) {}

    fs::path dir;
    NvtxCapture cap;
    CaptureReading reading;
    std::map<std::pair<std::string, int>, ThreadCursor> threads;  // by (image, thread id)
    std::set<fs::path> known;  // chunk files taken (or, at the end, refused)
    EventReader reader;

    // New chunk files into their threads' cursors; at the end, the peak resident sets, and
    // a warning for each file that is not a chunk (while the program runs, one may be being
    // created: it is looked at again next time).
    void scan(bool at_end) {
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(dir, ec)) {
            const fs::path& p = entry.path();
            const auto ext = p.extension();
            if (ext != ".evt" && ext != ".peak" && ext != ".str") continue;
            if (!is_plain_file(entry)) {
                if (at_end)
                    cap.warnings.push_back("ignored " + p.filename().string() +
                                           " in the NVTX capture: not a regular file");
                continue;
            }
            if (ext == ".peak" && at_end) read_peak_rss(p, cap);
            if (ext != ".evt" || known.count(p)) continue;  // strings: read when named
            const auto c = read_chunk_header(p);
            if (!c) {
                if (!at_end) continue;
                cap.warnings.push_back("ignored unreadable NVTX event file " + p.filename().string());
                known.insert(p);
                continue;
            }
            known.insert(p);
            ThreadCursor& t = threads[{image_key(c->header.pid, c->header.load_ns), c->header.tid}];
            // In the order the thread wrote them, among those not begun.
            const auto from = t.chunks.begin() +
                              static_cast<std::ptrdiff_t>(std::min(
                                  t.chunk + (t.next_event > 0 ? 1 : 0), t.chunks.size()));
            t.chunks.insert(std::upper_bound(from, t.chunks.end(), *c,
                                             [](const ChunkFile& a, const ChunkFile& b) {
                                                 return a.header.chunk < b.header.chunk;
                                             }),
                            *c);
        }
    }

    // At most one instance per two events in a push/pop capture: room made as chunks appear,
    // so 200 000 instances are not moved on every growth of the vector.
    void reserve() {
        std::uintmax_t event_bytes = 0;
        for (const auto& [key, t] : threads)
            for (const auto& c : t.chunks) event_bytes += c.bytes;
        const auto most = static_cast<std::size_t>(event_bytes / sizeof(Event) / 2);
        if (most > cap.instances.capacity()) cap.instances.reserve(most);
        if (most > reading.instance_image.capacity()) reading.instance_image.reserve(most);
    }

    void read(bool to_end) {
        for (auto& [key, t] : threads) read_thread(reading, reader, key.first, t, to_end);
    }
};

NvtxCaptureReader::NvtxCaptureReader(const fs::path& dir) : state_(std::make_unique<State>(dir)) {}
NvtxCaptureReader::~NvtxCaptureReader() = default;

void NvtxCaptureReader::read_available() {
    State& s = *state_;
    s.reading.live = true;
    s.reading.end_ns = collectors::now_ns();
    s.scan(false);
    s.reserve();
    s.read(false);
}

std::size_t NvtxCaptureReader::instances_read() const { return state_->cap.instances.size(); }

NvtxCapture NvtxCaptureReader::finish(std::int64_t end_ns, int cpus) {
    State& s = *state_;
    NvtxCapture& cap = s.cap;
    s.reading.live = false;
    s.reading.end_ns = end_ns;
    s.scan(true);
    s.reserve();
    {
        std::jthread populate = populate_ahead(cap.instances);
        s.read(true);
    }
    CaptureReading& reading = s.reading;
    const fs::path& dir = s.dir;
    pair_started_ranges(reading);
    attribute_cpu(reading, cpus);
    reading.cost.write_to(cap);
    put_in_order(cap);
    if (cap.dropped_events > 0)
        cap.warnings.push_back(
            "the capture's file system ran out of space (" + dir.parent_path().string() +
            "): " + std::to_string(cap.dropped_events) +
            " NVTX events after that were not recorded (the program ran on); ranges open "
            "then end with the program and later ones are missing. Give it more room "
            "(a larger /dev/shm: docker --shm-size) or another directory (CEILING_TMPDIR)");
    if (cap.deeper_ranges > 0)
        cap.warnings.push_back(
            std::to_string(cap.deeper_ranges) + " NVTX ranges nested deeper than " +
            std::to_string(max_range_depth) +
            " levels were not made regions: their time counts in the enclosing region at "
            "that depth (a range per call of a recursion? ceiling keeps " +
            std::to_string(max_range_depth) +
            " levels so that its record grows with the ranges, not with their depth squared)");
    return std::move(cap);
}

NvtxCapture read_nvtx_capture(const fs::path& dir, std::int64_t end_ns, int cpus) {
    return NvtxCaptureReader(dir).finish(end_ns, cpus);
}

}  // namespace ceiling::measure
