#pragma once
// Writes NVTX capture directories in the injection library's format
// (agent/inject/nvtx_event_format.hpp), so the reader is tested on recorded events.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <stdlib.h>

#include "agent/inject/nvtx_event_format.hpp"

namespace ceiling::testing {

class CaptureFiles {
  public:
    CaptureFiles() {
        std::string t =
            (std::filesystem::temp_directory_path() / "ceiling-capture-XXXXXX").string();
        path_ = mkdtemp(t.data());
    }
    ~CaptureFiles() { std::filesystem::remove_all(path_); }
    CaptureFiles(const CaptureFiles&) = delete;
    CaptureFiles& operator=(const CaptureFiles&) = delete;
    const std::filesystem::path& path() const { return path_; }

    void strings(int pid, std::uint64_t load, const std::map<std::uint32_t, std::string>& s) const {
        std::ofstream out(path_ / (std::to_string(pid) + "-" + std::to_string(load) + ".str"),
                          std::ios::binary);
        for (const auto& [id, text] : s) {
            const auto len = static_cast<std::uint32_t>(text.size());
            out.write(reinterpret_cast<const char*>(&id), 4)
                    .write(reinterpret_cast<const char*>(&len), 4)
                << text;
        }
    }
    // range_ns, cpu_read_ns, calibration_ns: the recording costs the library timed (0: not
    // timed).
    // `capacity`: events the chunk holds (0: four more than `ev`); written again with more
    // events, as the library fills a chunk while it is read.
    void events(int pid, std::uint64_t load, int tid, std::uint32_t chunk,
                const std::vector<inject::Event>& ev, float range_ns = 0, float cpu_read_ns = 0,
                float calibration_ns = 0, std::uint64_t capacity = 0) const {
        inject::EventFileHeader h;
        h.range_ns = range_ns;
        h.cpu_read_ns = cpu_read_ns;
        h.calibration_ns = calibration_ns;
        h.pid = pid;
        h.tid = tid;
        h.load_ns = load;
        h.capacity = capacity ? capacity : ev.size() + 4;  // a zero-filled tail, as the library leaves it
        h.chunk = chunk;
        h.event_bytes = sizeof(inject::Event);
        std::ofstream out(chunk_path(pid, load, tid, chunk), std::ios::binary);
        out.write(reinterpret_cast<const char*>(&h), sizeof h);
        std::vector<inject::Event> all = ev;
        all.resize(h.capacity, inject::Event{});
        out.write(reinterpret_cast<const char*>(all.data()),
                  static_cast<std::streamsize>(all.size() * sizeof(inject::Event)));
    }

    std::filesystem::path chunk_path(int pid, std::uint64_t load, int tid, std::uint32_t chunk) const {
        return path_ / (std::to_string(pid) + "-" + std::to_string(load) + "-" +
                        std::to_string(tid) + "-" + std::to_string(chunk) + ".evt");
    }

    // IMAGE.peak as the library leaves it at exit: `bytes`, a u64.
    void peak(int pid, std::uint64_t load, std::uint64_t bytes) const {
        std::ofstream out(path_ / (std::to_string(pid) + "-" + std::to_string(load) + ".peak"),
                          std::ios::binary);
        out.write(reinterpret_cast<const char*>(&bytes), sizeof bytes);
    }

  private:
    std::filesystem::path path_;
};

inline inject::Event event(inject::EventKind k, std::int64_t t, std::uint32_t string = 0,
                           std::uint64_t range = 0, std::uint32_t domain = 0) {
    inject::Event e{};
    e.t_ns = t;
    e.kind = static_cast<std::uint8_t>(k);
    e.string = string;
    e.range_id = range;
    e.domain = domain;
    return e;
}

// The process's CPU time (ns) read at t, as the library records it.
inline inject::Event cpu_read(std::int64_t t, std::int64_t cpu_ns) {
    return event(inject::EventKind::cpu_time, t, 0, static_cast<std::uint64_t>(cpu_ns));
}
// The recording thread's own CPU time (a thread_cpu_time event).
inline inject::Event thread_cpu_read(std::int64_t t, std::int64_t cpu_ns) {
    return event(inject::EventKind::thread_cpu_time, t, 0, static_cast<std::uint64_t>(cpu_ns));
}

}  // namespace ceiling::testing
