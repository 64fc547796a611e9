#include "agent/machine/storage_roof.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "diagnosis/format.hpp"
#include "collectors/clock.hpp"
#include "diagnosis/statistics.hpp"

namespace ceiling::measure {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t request_bytes = std::size_t{1} << 20;  // per read or write call
constexpr std::size_t direct_alignment = 4096;               // O_DIRECT: buffer, offset and length
// Passes stop early once this much time went by: a slow disk still gets one of each.
constexpr double time_budget_s = 10.0;

class Fd {
  public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }

  private:
    int fd_;
};

// A file in `dir` that has no name: O_TMPFILE, or a fresh name unlinked at once where the
// filesystem lacks O_TMPFILE. Opened for O_DIRECT; -1 with errno set when it cannot be.
int open_unnamed(const fs::path& dir) {
    const int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_DIRECT | O_CLOEXEC, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR)) return fd;
    std::string name = (dir / ".ceiling-storage-XXXXXX").string();
    const int named = ::mkostemp(name.data(), O_CLOEXEC);
    if (named < 0) return -1;
    ::unlink(name.c_str());
    // mkostemp's flags exclude O_DIRECT: set it on the open file.
    if (::fcntl(named, F_SETFL, ::fcntl(named, F_GETFL) | O_DIRECT) != 0) {
        const int e = errno;
        ::close(named);
        errno = e;
        return -1;
    }
    return named;
}

// Requests in flight: the file in this many segments, one thread each. A roof is what the
// storage can give, and a program's buffered reads have the kernel's readahead in flight
// ahead of them: on a Zen 4 VM's virtio disk one request at a time read 1.5 GB/s, four
// 1.6-3.0 and eight 2.3-2.6, where `dd` read a cold file through the page cache at 2.1-2.3.
constexpr int streams = 8;

// One segment [begin, end) of a pass: every request written or read. False on an error
// (errno set).
bool pass(int fd, char* buffer, std::uint64_t begin, std::uint64_t end, bool write,
          std::uint64_t salt) {
    for (std::uint64_t off = begin; off < end; off += request_bytes) {
        if (write) std::memcpy(buffer, &salt, sizeof salt), ++salt;  // no two requests alike
        const auto n = write ? ::pwrite(fd, buffer, request_bytes, static_cast<off_t>(off))
                             : ::pread(fd, buffer, request_bytes, static_cast<off_t>(off));
        if (n != static_cast<ssize_t>(request_bytes)) {
            if (n >= 0) errno = EIO;  // short: the disk filled, or the file was cut
            return false;
        }
    }
    return true;
}

// A whole pass, `streams` segments side by side, writes then made durable; 0, or the errno
// of the first failure.
int team_pass(int fd, const std::vector<char*>& buffers, std::uint64_t bytes, bool write,
              std::uint64_t salt) {
    const std::uint64_t requests = bytes / request_bytes;
    std::vector<int> errors(buffers.size(), 0);
    std::vector<std::thread> team;
    for (std::size_t t = 0; t < buffers.size(); ++t)
        team.emplace_back([&, t] {
            const auto at = [&](std::size_t i) {
                return requests * i / buffers.size() * request_bytes;
            };
            if (!pass(fd, buffers[t], at(t), at(t + 1), write, salt + (t << 32)))
                errors[t] = errno != 0 ? errno : EIO;
        });
    for (auto& th : team) th.join();
    for (int e : errors)
        if (e != 0) return e;
    return write && ::fdatasync(fd) != 0 ? errno : 0;
}

}  // namespace

std::string block_device_of(const fs::path& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return {};
    const fs::path sys = "/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" +
                         std::to_string(minor(st.st_dev));
    std::error_code ec;
    const fs::path target = fs::read_symlink(sys, ec);
    return ec ? std::string() : target.filename().string();
}

std::optional<StorageRoof> measure_storage(const StorageOptions& o, std::string& why) {
    std::error_code ec;
    const fs::path dir = fs::canonical(o.directory, ec);
    if (ec || !fs::is_directory(dir, ec)) {
        why = o.directory.string() + " is not a directory";
        return std::nullopt;
    }
    const std::uint64_t bytes = (o.file_bytes + request_bytes - 1) / request_bytes * request_bytes;
    struct statfs fsinfo {};
    if (::statfs(dir.c_str(), &fsinfo) == 0 &&
        (fsinfo.f_type == TMPFS_MAGIC || fsinfo.f_type == RAMFS_MAGIC)) {
        why = dir.string() +
              " is on tmpfs or ramfs: memory, not storage (choose a directory "
              "on a disk with --storage-dir)";
        return std::nullopt;
    }
    struct statvfs vfs {};
    if (::statvfs(dir.c_str(), &vfs) == 0) {
        const auto free_bytes = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
        if (free_bytes < 4 * bytes) {
            why = "only " + ceiling::bytes(static_cast<double>(free_bytes)) + " free under " +
                  dir.string() + ", and the test file needs " +
                  ceiling::bytes(static_cast<double>(bytes)) + " with room to spare";
            return std::nullopt;
        }
    }
    const Fd fd(open_unnamed(dir));
    if (fd.get() < 0) {
        why = "cannot open a file for direct I/O under " + dir.string() + ": " +
              std::strerror(errno) +
              (errno == EINVAL ? " (the filesystem does not take O_DIRECT)" : "");
        return std::nullopt;
    }
    // One buffer per stream, of random bytes: storage that compresses or deduplicates would
    // make zeros look fast.
    std::vector<std::unique_ptr<char, decltype(&std::free)>> owned;
    std::vector<char*> buffers;
    std::mt19937_64 rng(0x5eed);
    for (int t = 0; t < streams; ++t) {
        owned.emplace_back(static_cast<char*>(std::aligned_alloc(direct_alignment, request_bytes)),
                           &std::free);
        if (!owned.back()) {
            why = "out of memory for the I/O buffers";
            return std::nullopt;
        }
        buffers.push_back(owned.back().get());
        for (std::size_t i = 0; i + 8 <= request_bytes; i += 8) {
            const std::uint64_t v = rng();
            std::memcpy(buffers.back() + i, &v, 8);
        }
    }
    std::vector<double> reads, writes;
    const double start = collectors::now_s();
    for (int p = 0; p < std::max(1, o.passes); ++p) {
        if (p > 0 && collectors::now_s() - start > time_budget_s) break;
        for (const bool write : {true, false}) {
            int error = 0;
            const double s = collectors::time_s([&] {
                error =
                    team_pass(fd.get(), buffers, bytes, write, static_cast<std::uint64_t>(p) << 48);
            });
            if (error != 0) {
                why = std::string(write ? "writing" : "reading") + " the test file under " +
                      dir.string() + " failed: " + std::strerror(error);
                return std::nullopt;
            }
            (write ? writes : reads).push_back(static_cast<double>(bytes) / s);
        }
    }
    StorageRoof r;
    r.directory = dir.string();
    r.device = block_device_of(dir);
    r.file_bytes = bytes;
    r.read_bytes_per_s = summarize(reads);
    r.write_bytes_per_s = summarize(writes);
    return r;
}

}  // namespace ceiling::measure
