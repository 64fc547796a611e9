// The NVTX capture's files read as the injection library writes them (capture_files.hpp).
#include "agent/run/capture_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <utility>

namespace ceiling::measure {

namespace fs = std::filesystem;
using inject::Event;
using inject::EventFileHeader;

std::optional<ChunkFile> read_chunk_header(const fs::path& p) {
    ChunkFile c{p, {}, 0};
    std::ifstream in(p, std::ios::binary);
    auto valid = [&] {
        return in.read(reinterpret_cast<char*>(&c.header), sizeof c.header) &&
               c.header.magic == inject::event_file_magic &&
               c.header.version == inject::event_format_version &&
               c.header.event_bytes == sizeof(Event);
    };
    if (!valid() || !in.seekg(0) || !valid()) return std::nullopt;
    std::error_code ec;
    c.bytes = fs::file_size(p, ec);
    return c;
}

bool is_plain_file(const fs::directory_entry& entry) {
    std::error_code ec;
    return fs::is_regular_file(entry.symlink_status(ec));
}

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

std::string image_key(int pid, std::uint64_t load_ns) {
    return std::to_string(pid) + "-" + std::to_string(load_ns);
}

void EventReader::open(const fs::path& path, std::uint64_t capacity, std::uint64_t first) {
    close();
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st {};
    const std::uint64_t fits =
        fd_ < 0 || ::fstat(fd_, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(EventFileHeader))
            ? 0
            : (static_cast<std::uint64_t>(st.st_size) - sizeof(EventFileHeader)) / sizeof(Event);
    end_ = std::min<std::uint64_t>(capacity, fits);
    next_ = std::min(first, end_);
}

std::span<const Event> EventReader::next(bool written_only) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(end_ - next_, block_events));
    if (want == 0) return {};
    std::size_t got = read_at(next_, want);
    if (written_only) {
        std::size_t written = 0;
        while (written < got && block_[written].kind != 0) ++written;
        got = written > 0 ? read_at(next_, written) : 0;
    } else if (got < want) {
        end_ = next_ + got;  // the file ended sooner
    }
    next_ += got;
    return {block_.get(), got};
}

std::size_t EventReader::read_at(std::uint64_t event, std::size_t count) {
    const auto offset = static_cast<off_t>(sizeof(EventFileHeader) + event * sizeof(Event));
    ssize_t n;
    do n = ::pread(fd_, block_.get(), count * sizeof(Event), offset);
    while (n < 0 && errno == EINTR);
    return n > 0 ? static_cast<std::size_t>(n) / sizeof(Event) : 0;
}

void EventReader::close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

}  // namespace ceiling::measure
