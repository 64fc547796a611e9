#include "agent/run/region.hpp"

#include <sys/mman.h>
#include <unistd.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; absent from older C library headers
#endif

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <set>
#include <span>
#include <thread>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "agent/inject/nvtx_event_format.hpp"
#include "agent/run/cumulative_timeline.hpp"

namespace ceiling::measure {

// Copied, moved and freed by the hundred thousand when a program records many ranges: kept
// to plain bytes (interned strings, no owning members).
static_assert(std::is_trivially_copyable_v<RegionInstance> && std::is_trivially_destructible_v<RegionInstance>);

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

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

struct Multiplier {
    std::string_view suffix;
    double scale;
};
// Longest suffixes first so "Gi" is not read as "G" followed by garbage.
constexpr std::array<Multiplier, 9> multipliers = {{{"Ki", 1024.0},
                                                    {"Mi", 1048576.0},
                                                    {"Gi", 1073741824.0},
                                                    {"Ti", 1099511627776.0},
                                                    {"k", 1e3},
                                                    {"K", 1e3},
                                                    {"M", 1e6},
                                                    {"G", 1e9},
                                                    {"T", 1e12}}};

std::optional<double> parse_amount(std::string_view text) {
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc()) return std::nullopt;
    std::string_view rest(end, static_cast<std::size_t>(text.data() + text.size() - end));
    if (rest.empty()) return std::isfinite(v) && v >= 0 ? std::optional(v) : std::nullopt;
    for (const auto& m : multipliers)
        if (rest == m.suffix)
            return std::isfinite(v) && v >= 0 ? std::optional(v * m.scale) : std::nullopt;
    return std::nullopt;
}

}  // namespace

DeclaredName parse_declared_work(std::string_view message) {
    DeclaredName out;
    const std::string_view t = trim(message);
    const auto open = t.rfind('{');
    if (t.empty() || t.back() != '}' || open == std::string_view::npos) {
        out.name = std::string(t);
        return out;
    }
    out.name = std::string(trim(t.substr(0, open)));
    std::string_view body = t.substr(open + 1, t.size() - open - 2);
    Work w;
    bool declared = false;
    auto fail = [&](const std::string& why) {
        DeclaredName bad;
        bad.name = std::string(t);
        bad.error = "region '" + std::string(t) + "': " + why;
        return bad;
    };
    while (!body.empty()) {
        const auto sep = body.find_first_of(" ,;\t");
        const std::string_view item = body.substr(0, sep);
        body = sep == std::string_view::npos ? std::string_view() : body.substr(sep + 1);
        if (item.empty()) continue;
        const auto eq = item.find('=');
        if (eq == std::string_view::npos)
            return fail("'" + std::string(item) + "' is not key=value");
        const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
        if (key == "ops" || key == "bytes" || key == "working_set" || key == "written") {
            const auto v = parse_amount(value);
            if (!v) return fail("'" + std::string(value) + "' is not a non-negative amount");
            if (key == "written")
                w.written_bytes = *v;
            else
                (key == "ops"     ? w.ops
                 : key == "bytes" ? w.compulsory_bytes
                                  : w.working_set_bytes) = *v;
            declared = declared || (key != "working_set" && key != "written");
        } else if (key == "precision") {
            const auto p = parse_precision(value);
            if (!p) return fail("unknown precision '" + std::string(value) + "'");
            w.precision = *p;
        } else if (key == "engine") {
            const auto e = parse_engine(value);
            if (!e) return fail("unknown engine '" + std::string(value) + "'");
            w.engine = *e;
        } else if (key == "device") {
            const auto d = parse_device(value);
            if (!d) return fail("unknown device '" + std::string(value) + "'");
            w.device = *d;
        } else {
            return fail("unknown key '" + std::string(key) +
                        "' (ops, bytes, working_set, written, precision, engine, device)");
        }
    }
    // The stores among the bytes: decides which stream kernel's roof judges the region.
    if (w.written_bytes && *w.written_bytes > w.compulsory_bytes)
        return fail("written= is part of bytes=, so at most bytes= (" +
                    std::to_string(static_cast<long long>(w.compulsory_bytes)) + ")");
    if (declared) out.work = w;
    return out;
}

bool is_model_region(const std::regex& model, const std::string& name, const std::string& path) {
    return std::regex_search(name, model) || std::regex_search(path, model);
}

namespace {

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
    // fresh memory again (60 MB for 200 000 instances, its page faults included).
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

}  // namespace

NvtxCapture read_nvtx_capture(const fs::path& dir, std::int64_t end_ns, int cpus) {
    NvtxCapture cap;
    std::error_code ec;
    std::map<std::string, std::map<std::uint32_t, std::string>> strings;    // image -> id -> text
    std::map<std::pair<std::string, int>, std::vector<ChunkFile>> threads;  // (image, tid)
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
            std::uint64_t bytes = 0;
            std::ifstream in(p, std::ios::binary);
            // Below a petabyte: anything else is not a process's memory.
            if (in.read(reinterpret_cast<char*>(&bytes), sizeof bytes) && bytes > 0 &&
                bytes < (std::uint64_t{1} << 50))
                cap.peak_rss_bytes =
                    std::max(cap.peak_rss_bytes.value_or(0.0), static_cast<double>(bytes));
        } else if (p.extension() == ".str") {
            strings[p.stem().string()] = read_strings(p);
        } else if (p.extension() == ".evt") {
            ChunkFile c{p, {}};
            std::ifstream in(p, std::ios::binary);
            if (!in.read(reinterpret_cast<char*>(&c.header), sizeof c.header) ||
                c.header.magic != inject::event_file_magic ||
                c.header.version != inject::event_format_version ||
                c.header.event_bytes != sizeof(Event)) {
                cap.warnings.push_back("ignored unreadable NVTX event file " +
                                       p.filename().string());
                continue;
            }
            threads[{image_key(c.header.pid, c.header.load_ns), c.header.tid}].push_back(c);
        }
    }

    // Each string id is parsed and interned once per image; an event then costs one hash
    // lookup (a program may record a few hundred thousand ranges with a handful of names).
    struct Resolved {
        Interned name;
        const std::optional<Work>* work;
    };
    std::map<std::string, DeclaredName> declared;
    std::map<std::string, std::unordered_map<std::uint32_t, Resolved>> resolved;
    auto resolve = [&](const std::string& image, std::unordered_map<std::uint32_t, Resolved>& cache,
                       std::uint32_t id) -> const Resolved& {
        static const std::optional<Work> no_work;
        static const Resolved unnamed{"(unnamed)", &no_work};
        if (id == 0) return unnamed;
        if (const auto hit = cache.find(id); hit != cache.end()) return hit->second;
        const auto si = strings.find(image);
        const std::string raw = si != strings.end() && si->second.count(id)
                                    ? si->second.at(id)
                                    : "(string " + std::to_string(id) + ")";
        auto [it, inserted] = declared.try_emplace(raw);
        if (inserted) {
            it->second = parse_declared_work(valid_utf8(raw));
            if (!it->second.error.empty()) cap.warnings.push_back(it->second.error);
        }
        return cache.emplace(id, Resolved{it->second.name, &it->second.work}).first->second;
    };
    // An instance's path from its parent's (or, at top level, its domain) and its name: built
    // once per distinct triple, not per instance.
    struct PathKey {
        Interned parent, domain, name;
        bool operator==(const PathKey&) const = default;
    };
    struct PathKeyHash {
        std::size_t operator()(const PathKey& k) const {
            return k.parent.hash() ^ (k.domain.hash() * 31) ^ (k.name.hash() * 1009);
        }
    };
    std::unordered_map<PathKey, Interned, PathKeyHash> paths;
    auto path_of = [&](Interned parent, Interned domain, Interned name) {
        auto [it, inserted] = paths.try_emplace(PathKey{parent, domain, name});
        if (inserted)
            it->second = !parent.empty() ? parent.str() + "/" + name.str()
                         : domain.empty() ? name.str()
                                          : domain.str() + "::" + name.str();
        return it->second;
    };
    // A range never ends before it starts, and its nested time stays within it and within the
    // window, however a hostile capture overlaps its children.
    auto add_child = [&](RegionInstance& parent, const RegionInstance& child) {
        parent.child_ns = std::min(parent.child_ns + (child.end_ns - child.start_ns), std::max<std::int64_t>(end_ns, 0));
    };
    auto close = [](RegionInstance& r, std::int64_t t) {
        r.end_ns = std::max(t, r.start_ns);
        r.child_ns = std::min(r.child_ns, r.end_ns - r.start_ns);
    };

    // start/end ranges of each image, keyed by range id; paired after all threads are read.
    std::map<std::string, std::unordered_map<std::uint64_t, RegionInstance>> started;
    std::map<std::string, std::vector<std::pair<std::uint64_t, std::int64_t>>> ended;
    // Each image's process CPU-time reads, and the image of each instance (same order).
    std::map<std::string, std::vector<TimelinePoint>> cpu_reads;
    std::map<std::pair<std::string, int>, std::vector<TimelinePoint>> thread_cpu_reads;
    std::vector<const std::string*> instance_image;
    // At most one instance per two events in a push/pop capture: reserved once, so 200 000
    // instances are not moved on every growth of the vector.
    std::uintmax_t event_bytes = 0;
    for (const auto& [key, chunks] : threads)
        for (const auto& c : chunks) {
            std::error_code size_ec;
            const auto b = fs::file_size(c.path, size_ec);
            if (!size_ec) event_bytes += b;
        }
    cap.instances.reserve(static_cast<std::size_t>(event_bytes / sizeof(Event) / 2));
    instance_image.reserve(cap.instances.capacity());
    // The kernel hands out the instances' memory (60 MB for 200 000 ranges) a page at a time
    // as it is first written: a third of reading such a capture. Another core populates it
    // ahead of the writes meanwhile (the program has ended, so one is free).
    std::jthread populate;
    if (cap.instances.capacity() * sizeof(RegionInstance) >= populate_ahead_min_bytes)
        populate = std::jthread(populate_pages, cap.instances.data(), cap.instances.capacity() * sizeof(RegionInstance));

    EventReader reader;
    double recording_ns = 0;
    bool untimed = false;  // a chunk with events and no recording cost
    float range_ns = 0;    // the dearest range any process timed
    std::map<std::string, float> calibration_ns;  // per image: the library's timing, once
    const auto cost = [](float ns) { return std::isfinite(ns) && ns > 0 && ns < 1e9f; };
    for (auto& [key, chunks] : threads) {
        const std::string& image = key.first;
        std::sort(chunks.begin(), chunks.end(), [](const ChunkFile& a, const ChunkFile& b) {
            return a.header.chunk < b.header.chunk;
        });
        // Push/pop nesting is per thread and per domain (nvToolsExt.h).
        std::map<std::uint32_t, std::vector<RegionInstance>> stacks;
        auto& image_strings = resolved[image];
        auto string_of = [&](std::uint32_t id) -> const Resolved& { return resolve(image, image_strings, id); };
        auto domain_of = [&](std::uint32_t id) { return id == 0 ? Interned() : string_of(id).name; };
        for (const auto& c : chunks) {
            std::uint64_t range_events = 0, cpu_events = 0;
            // One event of this chunk; false at an event never written (the chunk's end).
            const auto handle = [&](const Event& event) {
                // Times are the program's word: outside [0, its end] they are corrupt or late
                // (an orphan's), and unbounded ones overflow every duration taken from them.
                Event e = event;
                e.t_ns = std::clamp<std::int64_t>(e.t_ns, 0, std::max<std::int64_t>(end_ns, 0));
                const auto kind = static_cast<EventKind>(e.kind);
                if (kind == EventKind::none) return false;
                ++(kind == EventKind::cpu_time || kind == EventKind::thread_cpu_time
                       ? cpu_events
                       : range_events);
                switch (kind) {
                    case EventKind::push: {
                        auto& stack = stacks[e.domain];
                        const Resolved& dn = string_of(e.string);
                        RegionInstance r;
                        r.name = dn.name;
                        r.work = *dn.work;
                        r.domain = domain_of(e.domain);
                        r.parent = stack.empty() ? Interned() : stack.back().path;
                        r.path = path_of(r.parent, r.domain, r.name);
                        r.pid = c.header.pid;
                        r.tid = c.header.tid;
                        r.start_ns = e.t_ns;
                        r.depth = static_cast<int>(stack.size());
                        stack.push_back(std::move(r));
                        break;
                    }
                    case EventKind::pop: {
                        auto& stack = stacks[e.domain];
                        if (stack.empty()) {
                            cap.warnings.push_back("an NVTX pop without a push was ignored");
                            break;
                        }
                        RegionInstance r = std::move(stack.back());
                        stack.pop_back();
                        close(r, e.t_ns);
                        if (!stack.empty()) add_child(stack.back(), r);
                        cap.instances.push_back(std::move(r));
                        instance_image.push_back(&image);
                        break;
                    }
                    case EventKind::start: {
                        const Resolved& dn = string_of(e.string);
                        RegionInstance r;
                        r.name = dn.name;
                        r.work = *dn.work;
                        r.domain = domain_of(e.domain);
                        r.path = path_of(Interned(), r.domain, r.name);
                        r.pid = c.header.pid;
                        r.tid = c.header.tid;
                        r.start_ns = e.t_ns;
                        r.push_pop = false;
                        started[image][e.range_id] = std::move(r);
                        break;
                    }
                    case EventKind::end:
                        ended[image].emplace_back(e.range_id, e.t_ns);
                        break;
                    case EventKind::mark: {
                        MarkInstance m;
                        m.name = string_of(e.string).name;
                        m.domain = domain_of(e.domain);
                        m.pid = c.header.pid;
                        m.tid = c.header.tid;
                        m.t_ns = e.t_ns;
                        cap.marks.push_back(std::move(m));
                        break;
                    }
                    case EventKind::thread_name:
                        cap.thread_names[{c.header.pid, static_cast<int>(e.range_id)}] =
                            string_of(e.string).name;
                        break;
                    case EventKind::cpu_time:
                        cpu_reads[image].push_back(
                            {e.t_ns, static_cast<double>(e.range_id) * 1e-9});
                        break;
                    case EventKind::thread_cpu_time:
                        thread_cpu_reads[{image, c.header.tid}].push_back(
                            {e.t_ns, static_cast<double>(e.range_id) * 1e-9});
                        break;
                    default:
                        break;
                }
                return true;
            };
            reader.open(c.path, c.header.capacity);
            for (auto events = reader.next(); !events.empty(); events = reader.next())
                if (!std::all_of(events.begin(), events.end(), handle)) break;
            // A range (push and pop) costs range_ns, so an event half of it.
            cap.recorded_events += range_events + cpu_events;
            if (cost(c.header.calibration_ns))
                calibration_ns[image] = std::max(calibration_ns[image], c.header.calibration_ns);
            if (cost(c.header.range_ns)) range_ns = std::max(range_ns, c.header.range_ns);
            if (cost(c.header.range_ns) && cost(c.header.cpu_read_ns))
                recording_ns += static_cast<double>(range_events) * c.header.range_ns / 2 +
                                static_cast<double>(cpu_events) * c.header.cpu_read_ns;
            else if (range_events + cpu_events > 0)
                untimed = true;
        }
        // Ranges still open when the process ended (crash, exit inside a range) end with it.
        for (auto& [domain, stack] : stacks) {
            while (!stack.empty()) {
                RegionInstance r = std::move(stack.back());
                stack.pop_back();
                close(r, end_ns);
                r.unclosed = true;
                if (!stack.empty()) add_child(stack.back(), r);
                cap.instances.push_back(std::move(r));
                instance_image.push_back(&image);
            }
        }
    }
    for (auto& [image, ends] : ended) {
        auto& open = started[image];
        for (const auto& [id, t] : ends) {
            auto it = open.find(id);
            if (it == open.end()) continue;  // started before a fork, in the parent image
            it->second.end_ns = std::max(t, it->second.start_ns);
            cap.instances.push_back(std::move(it->second));
            instance_image.push_back(&image);
            open.erase(it);
        }
    }
    for (auto& [image, open] : started)
        for (auto& [id, r] : open) {
            r.end_ns = std::max(end_ns, r.start_ns);
            r.unclosed = true;
            cap.instances.push_back(std::move(r));
            instance_image.push_back(&image);
        }
    // The process's CPU time over each instance. A process keeps at most all CPUs busy, which
    // bounds how far the reads around an instant can be off (cumulative_timeline.hpp).
    const double cores = cpus > 0 ? cpus : std::max(1u, std::thread::hardware_concurrency());
    std::map<std::string, CumulativeTimeline> cpu_timelines;
    for (auto& [image, reads] : cpu_reads)
        cpu_timelines.emplace(image, CumulativeTimeline(std::move(reads), cores));
    // Instances come by image, thread and time: the last image's timeline and the last
    // search's end are tried first.
    const std::string* last_image = nullptr;
    const CumulativeTimeline* timeline = nullptr;
    std::size_t hint = 0;
    for (std::size_t i = 0; i < cap.instances.size(); ++i) {
        if (instance_image[i] != last_image) {
            last_image = instance_image[i];
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
    // Each recording thread's own CPU time, at most one core's worth per second.
    std::map<std::pair<std::string, int>, CumulativeTimeline> thread_timelines;
    for (auto& [key, reads] : thread_cpu_reads)
        thread_timelines.emplace(key, CumulativeTimeline(std::move(reads), 1.0));
    attribute_beside_cpu(cap, instance_image, thread_timelines);
    attribute_unranged_cpu(cap, instance_image, thread_timelines);
    double timing_ns = 0;
    for (const auto& [image, ns] : calibration_ns) timing_ns += ns;
    recording_ns += timing_ns;
    if (cap.recorded_events > 0 && !untimed && timing_ns > 0) cap.timing_cost_s = timing_ns * 1e-9;
    if (cap.recorded_events > 0 && !untimed) cap.recording_s = recording_ns * 1e-9;
    if (range_ns > 0) cap.range_cost_s = static_cast<double>(range_ns) * 1e-9;
    sort_instances(cap.instances);
    std::sort(cap.marks.begin(), cap.marks.end(),
              [](const MarkInstance& a, const MarkInstance& b) { return a.t_ns < b.t_ns; });
    // One line per distinct warning: a loop of unbalanced pops is one problem.
    std::sort(cap.warnings.begin(), cap.warnings.end());
    cap.warnings.erase(std::unique(cap.warnings.begin(), cap.warnings.end()), cap.warnings.end());
    return cap;
}

std::optional<std::pair<std::int64_t, std::int64_t>> region_ends(const NvtxCapture& capture) {
    if (capture.instances.empty()) return std::nullopt;
    std::pair ends{capture.instances.front().start_ns, capture.instances.front().end_ns};
    for (const auto& r : capture.instances) {
        ends.first = std::min(ends.first, r.start_ns);
        ends.second = std::max(ends.second, r.end_ns);
    }
    return ends;
}

double covered_s(const NvtxCapture& capture,
                 const std::function<bool(const RegionInstance&)>& select) {
    // The union of spans taken in start order. Instances come by process, thread and start,
    // so one thread's are merged as they come; only when a start goes back (another thread)
    // are the spans collected and sorted (200 000 instances: 3 MB of fresh memory).
    struct Union {
        std::int64_t total = 0, begin = 0, end = 0;
        bool open = false;
        void add(std::int64_t b, std::int64_t e) {
            if (open && b <= end) {
                end = std::max(end, e);
                return;
            }
            if (open) total += end - begin;
            begin = b;
            end = e;
            open = true;
        }
        double seconds() const { return static_cast<double>(total + (open ? end - begin : 0)) * 1e-9; }
    };
    Union in_order;
    bool sorted = true;
    for (const auto& r : capture.instances) {
        if (!select(r)) continue;
        if (in_order.open && r.start_ns < in_order.begin) {
            sorted = false;
            break;
        }
        in_order.add(r.start_ns, r.end_ns);
    }
    if (sorted) return in_order.seconds();
    std::vector<std::pair<std::int64_t, std::int64_t>> spans;
    for (const auto& r : capture.instances)
        if (select(r)) spans.emplace_back(r.start_ns, r.end_ns);
    std::sort(spans.begin(), spans.end());
    Union all;
    for (const auto& [b, e] : spans) all.add(b, e);
    return all.seconds();
}

}  // namespace ceiling::measure
