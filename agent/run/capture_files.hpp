#pragma once
// The NVTX capture's files as the injection library writes them
// (agent/inject/nvtx_event_format.hpp), read while it writes them and after: chunk headers,
// blocks of events, strings. nvtx_capture.cpp turns what they hold into region instances.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "agent/inject/nvtx_event_format.hpp"

namespace ceiling::measure {

// One thread's chunk file as found: its header, and the file's size then (the library sizes
// it at once).
struct ChunkFile {
    std::filesystem::path path;
    inject::EventFileHeader header;
    std::uintmax_t bytes = 0;
};

// A chunk's header; nullopt where the file is not (or, being created, not yet) one of this
// format's. The library stores the magic last: once one read has seen it, a second read has
// every field stored before it (a single copy need not read the magic first).
std::optional<ChunkFile> read_chunk_header(const std::filesystem::path& p);

// The program writes the capture directory: a FIFO would block the open and a link to a
// device never ends, so only regular files (not through a link) are read.
bool is_plain_file(const std::filesystem::directory_entry& entry);

// An IMAGE.str file: id -> text, up to the first torn record.
std::map<std::uint32_t, std::string> read_strings(const std::filesystem::path& path);
using ImageStrings =
    std::map<std::string, std::map<std::uint32_t, std::string>>;  // image -> id -> text

// The name of a process image's files: "<pid>-<load time ns>".
std::string image_key(int pid, std::uint64_t load_ns);

// Reads the events of chunk files a block at a time: at most the header's capacity and what
// the file holds, so a damaged or hostile header cannot size anything. Read, not mapped: the
// program (or an orphan of it) could shorten a mapped file under us, and touching a page past
// its end is SIGBUS. One block-sized buffer for every chunk: it stays in the L2 cache while
// its events are handled, and its pages are mapped in once (a buffer per chunk, then one the
// size of a chunk, had the kernel hand out 4-13 MB of fresh pages for 200 000 ranges).
class EventReader {
  public:
    EventReader() = default;
    ~EventReader() { close(); }
    EventReader(const EventReader&) = delete;
    EventReader& operator=(const EventReader&) = delete;

    // The chunk at `path` from its event `first` on (the ones before it were read).
    void open(const std::filesystem::path& path, std::uint64_t capacity, std::uint64_t first);
    // The next events of the open chunk; empty at its end. `written_only`, while the program
    // writes the chunk: the events already written when the block was read, read once more.
    // The library stores an event's `kind` after its other fields, but one copy of a block
    // reads them in whatever order it does (in address order: the fields before the kind),
    // so an event written as the copy passes could show its kind with its fields unwritten.
    // Every field stored before a kind one read saw is there for the next read.
    std::span<const inject::Event> next(bool written_only);

  private:
    static constexpr std::size_t block_events = 8192;  // 256 KiB

    std::size_t read_at(std::uint64_t event, std::size_t count);
    void close();

    std::unique_ptr<inject::Event[]> block_{new inject::Event[block_events]};
    int fd_ = -1;
    std::uint64_t next_ = 0, end_ = 0;
};

}  // namespace ceiling::measure
