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
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/inject/nvtx_event_format.hpp"
#include "agent/run/cumulative_timeline.hpp"

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

struct ChunkFile {
    fs::path path;
    EventFileHeader header;
};

// Reads the events of chunk files a block at a time: at most the header's capacity and what
// the file holds, so a damaged or hostile header cannot size anything. Read, not mapped: the
// program (or an orphan of it) could shorten a mapped file under us, and touching a page past
// its end is SIGBUS. One block-sized buffer for every chunk: it stays in the L2 cache while
// its events are handled, and its pages are mapped in once (a buffer per chunk, then one the
// size of a chunk, had the kernel hand out 4-13 MB of fresh pages for 200 000 ranges).
class EventReader {
  public:
    void open(const fs::path& path, std::uint64_t capacity) {
        in_ = std::ifstream(path, std::ios::binary);
        in_.seekg(sizeof(EventFileHeader));
        std::error_code size_ec;
        const std::uintmax_t bytes = fs::file_size(path, size_ec);
        const std::uint64_t fits = size_ec || bytes < sizeof(EventFileHeader) ? 0 : (bytes - sizeof(EventFileHeader)) / sizeof(Event);
        left_ = static_cast<std::size_t>(std::min<std::uint64_t>(capacity, fits));
    }
    // The next events of the open chunk; empty at its end.
    std::span<const Event> next() {
        const std::size_t want = std::min(left_, block_events);
        if (want == 0) return {};
        in_.read(reinterpret_cast<char*>(block_.get()), static_cast<std::streamsize>(want * sizeof(Event)));
        const std::size_t got = static_cast<std::size_t>(in_.gcount()) / sizeof(Event);
        left_ = got < want ? 0 : left_ - got;
        return {block_.get(), got};
    }

  private:
    static constexpr std::size_t block_events = 8192;  // 256 KiB
    std::unique_ptr<Event[]> block_{new Event[block_events]};
    std::ifstream in_;
    std::size_t left_ = 0;
};

std::map<std::uint32_t, std::string> read_strings(const fs::path& path) {
    std::map<std::uint32_t, std::string> out;
    std::ifstream in(path, std::ios::binary);
    for (;;) {
        std::uint32_t id = 0, len = 0;
        if (!in.read(reinterpret_cast<char*>(&id), 4) || !in.read(reinterpret_cast<char*>(&len), 4))
            break;
        if (len > (1u << 20)) break;  // a torn record: nothing sane follows
        std::string s(len, '\0');
        if (!in.read(s.data(), len)) break;
        out[id] = std::move(s);
    }
    return out;
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

std::string image_key(int pid, std::uint64_t load_ns) {
    return std::to_string(pid) + "-" + std::to_string(load_ns);
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

using ImageStrings =
    std::map<std::string, std::map<std::uint32_t, std::string>>;  // image -> id -> text
using ThreadChunks = std::map<std::pair<std::string, int>, std::vector<ChunkFile>>;  // (image, tid)

// What a capture directory holds besides the peak resident sets: each image's strings and
// each recording thread's chunks.
struct CaptureFiles {
    ImageStrings strings;
    ThreadChunks threads;
};

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

// A chunk's header; nullopt, with a warning, where the file is not one of this format's.
std::optional<ChunkFile> read_chunk_header(const fs::path& p, NvtxCapture& cap) {
    ChunkFile c{p, {}};
    std::ifstream in(p, std::ios::binary);
    if (!in.read(reinterpret_cast<char*>(&c.header), sizeof c.header) ||
        c.header.magic != inject::event_file_magic ||
        c.header.version != inject::event_format_version ||
        c.header.event_bytes != sizeof(Event)) {
        cap.warnings.push_back("ignored unreadable NVTX event file " +
                               p.filename().string());
        return std::nullopt;
    }
    return c;
}

// The capture directory's files by kind; what cannot be read is a warning, and the peak
// resident sets go straight into `cap`.
CaptureFiles list_capture_files(const fs::path& dir, NvtxCapture& cap) {
    CaptureFiles files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const fs::path p = entry.path();
        // The program writes this directory: a FIFO would block the open and a link to a device
        // never ends, so only regular files (not through a link) are read.
        std::error_code type_ec;
        if ((p.extension() == ".str" || p.extension() == ".evt" || p.extension() == ".peak") &&
            !fs::is_regular_file(entry.symlink_status(type_ec))) {
            cap.warnings.push_back("ignored " + p.filename().string() +
                                   " in the NVTX capture: not a regular file");
            continue;
        }
        if (p.extension() == ".peak") {
            read_peak_rss(p, cap);
        } else if (p.extension() == ".str") {
            files.strings[p.stem().string()] = read_strings(p);
        } else if (p.extension() == ".evt") {
            if (const auto c = read_chunk_header(p, cap)) {
                const auto image_thread =
                    std::pair(image_key(c->header.pid, c->header.load_ns), c->header.tid);
                files.threads[image_thread].push_back(*c);
            }
        }
    }
    return files;
}

// Each string id is parsed and interned once per image; an event then costs one hash
// lookup (a program may record a few hundred thousand ranges with a handful of names).
class StringResolver {
  public:
    struct Resolved {
        Interned name;
        InternedWork work;  // interned once per declared name
    };
    using Cache = std::unordered_map<std::uint32_t, Resolved>;  // one image's ids

    StringResolver(const ImageStrings& strings, std::vector<std::string>& warnings)
        : strings_(strings), warnings_(warnings) {}

    Cache& cache_of(const std::string& image) { return resolved_[image]; }

    const Resolved& resolve(const std::string& image, Cache& cache, std::uint32_t id) {
        static const Resolved unnamed{"(unnamed)", InternedWork()};
        if (id == 0) return unnamed;
        if (const auto hit = cache.find(id); hit != cache.end()) return hit->second;
        const auto si = strings_.find(image);
        const std::string raw = si != strings_.end() && si->second.count(id)
                                    ? si->second.at(id)
                                    : "(string " + std::to_string(id) + ")";
        auto [it, inserted] = declared_.try_emplace(raw);
        if (inserted) {
            it->second = parse_declared_work(valid_utf8(raw));
            if (!it->second.error.empty()) warnings_.push_back(it->second.error);
        }
        return cache.emplace(id, Resolved{it->second.name, InternedWork(it->second.work)})
            .first->second;
    }

  private:
    const ImageStrings& strings_;
    std::vector<std::string>& warnings_;
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
    CaptureReading(NvtxCapture& c, std::int64_t end, const ImageStrings& image_strings)
        : cap(c), end_ns(end), strings(image_strings, c.warnings) {}

    NvtxCapture& cap;
    std::int64_t end_ns;
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

// At most one instance per two events in a push/pop capture: reserved once, so 200 000
// instances are not moved on every growth of the vector.
void reserve_instances(CaptureReading& reading, const ThreadChunks& threads) {
    std::uintmax_t event_bytes = 0;
    for (const auto& [key, chunks] : threads)
        for (const auto& c : chunks) {
            std::error_code size_ec;
            const auto b = fs::file_size(c.path, size_ec);
            if (!size_ec) event_bytes += b;
        }
    reading.cap.instances.reserve(static_cast<std::size_t>(event_bytes / sizeof(Event) / 2));
    reading.instance_image.reserve(reading.cap.instances.capacity());
}

// The kernel hands out the instances' memory (53 MB for 200 000 ranges) a page at a time
// as it is first written: a third of reading such a capture. Another core populates it
// ahead of the writes meanwhile (the program has ended, so one is free).
std::jthread populate_ahead(std::vector<RegionInstance>& instances) {
    std::jthread populate;
    const std::size_t bytes = instances.capacity() * sizeof(RegionInstance);
    if (bytes >= populate_ahead_min_bytes)
        populate = std::jthread(populate_pages, instances.data(), bytes);
    return populate;
}

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

// One thread's chunks in the order it wrote them; `image` is a key of the capture's files.
void read_thread(CaptureReading& reading, EventReader& reader, const std::string& image,
                 std::vector<ChunkFile>& chunks) {
    std::sort(chunks.begin(), chunks.end(), [](const ChunkFile& a, const ChunkFile& b) {
        return a.header.chunk < b.header.chunk;
    });
    ThreadEvents thread(reading, image);
    for (const auto& c : chunks) {
        ChunkCounts counts;
        const auto handle = [&](const Event& event) {
            return thread.handle(c.header, event, counts);
        };
        reader.open(c.path, c.header.capacity);
        for (auto events = reader.next(); !events.empty(); events = reader.next())
            if (!std::all_of(events.begin(), events.end(), handle)) break;
        reading.cap.recorded_events += counts.range_events + counts.cpu_events;
        reading.cap.dropped_events += c.header.dropped_events;
        reading.cost.add_chunk(image, c.header, counts.range_events, counts.cpu_events);
    }
    thread.close_open_ranges();
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

// The process's CPU time over each instance. A process keeps at most all CPUs busy, which
// bounds how far the reads around an instant can be off (cumulative_timeline.hpp).
void attribute_process_cpu(CaptureReading& reading, int cpus) {
    NvtxCapture& cap = reading.cap;
    const double cores = cpus > 0 ? cpus : std::max(1u, std::thread::hardware_concurrency());
    std::map<std::string, CumulativeTimeline> cpu_timelines;
    for (auto& [image, reads] : reading.cpu_reads)
        cpu_timelines.emplace(image, CumulativeTimeline(std::move(reads), cores));
    // Instances come by image, thread and time: the last image's timeline and the last
    // search's end are tried first.
    const std::string* last_image = nullptr;
    const CumulativeTimeline* timeline = nullptr;
    std::size_t hint = 0;
    for (std::size_t i = 0; i < cap.instances.size(); ++i) {
        if (reading.instance_image[i] != last_image) {
            last_image = reading.instance_image[i];
            const auto t = cpu_timelines.find(*last_image);
            timeline = t == cpu_timelines.end() ? nullptr : &t->second;
        }
        if (!timeline) continue;
        auto& r = cap.instances[i];
        if (const auto cpu = timeline->between(r.start_ns, r.end_ns, &hint)) {
            r.cpu_s = cpu->value;
            r.cpu_error_s = cpu->error;
        }
    }
}

// Each recording thread's own CPU time, at most one core's worth per second.
void attribute_thread_cpu(CaptureReading& reading) {
    std::map<std::pair<std::string, int>, CumulativeTimeline> thread_timelines;
    for (auto& [key, reads] : reading.thread_cpu_reads)
        thread_timelines.emplace(key, CumulativeTimeline(std::move(reads), 1.0));
    attribute_beside_cpu(reading.cap, reading.instance_image, thread_timelines);
    attribute_unranged_cpu(reading.cap, reading.instance_image, thread_timelines);
}

void put_in_order(NvtxCapture& cap) {
    sort_instances(cap.instances);
    std::sort(cap.marks.begin(), cap.marks.end(),
              [](const MarkInstance& a, const MarkInstance& b) { return a.t_ns < b.t_ns; });
    // One line per distinct warning: a loop of unbalanced pops is one problem.
    std::sort(cap.warnings.begin(), cap.warnings.end());
    cap.warnings.erase(std::unique(cap.warnings.begin(), cap.warnings.end()), cap.warnings.end());
}

}  // namespace

NvtxCapture read_nvtx_capture(const fs::path& dir, std::int64_t end_ns, int cpus) {
    NvtxCapture cap;
    CaptureFiles files = list_capture_files(dir, cap);
    CaptureReading reading(cap, end_ns, files.strings);
    reserve_instances(reading, files.threads);
    std::jthread populate = populate_ahead(cap.instances);
    EventReader reader;
    for (auto& [key, chunks] : files.threads) read_thread(reading, reader, key.first, chunks);
    pair_started_ranges(reading);
    attribute_process_cpu(reading, cpus);
    attribute_thread_cpu(reading);
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
    return cap;
}

}  // namespace ceiling::measure
