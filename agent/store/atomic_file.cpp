#include "agent/store/atomic_file.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ceiling::store {

namespace fs = std::filesystem;

namespace {
[[noreturn]] void fail(const fs::path& path, const std::string& why) {
    throw std::runtime_error("cannot write " + path.string() + ": " + why);
}

fs::path directory_of(const fs::path& path) {
    const fs::path dir = path.parent_path();
    return dir.empty() ? fs::path(".") : dir;
}

std::string kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "is a directory";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device, not a regular file";
    if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
    if (S_ISSOCK(mode)) return "is a socket, not a regular file";
    return "is not a regular file";
}

// The name the file gets in its directory; a path naming a directory ("out/", ".") has none.
std::string entry_name(const fs::path& path) {
    const std::string name = path.filename().string();
    if (name.empty() || name == "." || name == "..")
        throw NotARegularFile("cannot write " + path.string() + ": names a directory, not a file");
    return name;
}

// The entry `name` in the open directory, its link not followed: a regular file or a link
// (which is replaced, not followed) may be written over, anything else is refused.
// Returns false when there is none.
bool existing_entry(int dir, const std::string& name, const fs::path& path, struct stat& st) {
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) return false;
        fail(path, std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
        throw NotARegularFile("cannot write " + path.string() + ": " + kind_of(st.st_mode) +
                              " (ceiling writes only regular files; it would replace this)");
    return true;
}

// The directory `path` goes in, created where missing and opened once: every later step is
// relative to this descriptor.
int open_directory(const fs::path& path) {
    const fs::path dir = directory_of(path);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) fail(path, ec.message());
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) fail(path, std::strerror(errno));
    return fd;
}

struct Directory {
    int fd;
    ~Directory() { ::close(fd); }
};

// A new, empty temporary file ".NAME.XXXXXX" in the open directory, never through a link.
int create_temporary(int dir, const std::string& name, const fs::path& path, std::string& tmp) {
    static constexpr char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    for (int attempt = 0; attempt < 100; ++attempt) {
        // Random, so that names planted in a shared directory cannot make every try fail.
        unsigned char random[6] = {};
        if (::getrandom(random, sizeof random, 0) != static_cast<ssize_t>(sizeof random))
            fail(path, std::string("getrandom: ") + std::strerror(errno));
        tmp = "." + name + ".";
        for (unsigned char r : random) tmp += letters[r % (sizeof letters - 1)];
        const int fd = ::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) return fd;
        if (errno != EEXIST) fail(path, std::strerror(errno));
    }
    fail(path, "no free temporary name beside it");
}

// The content in a temporary file in `dir`, flushed, with the mode (and owner) the file it
// replaces had, else 0666 less the umask; returns its name. Throws like write_file_atomically.
std::string write_temporary(int dir, const std::string& name, const fs::path& path,
                            const std::string& content) {
    struct stat old {};
    const bool replaces_file = existing_entry(dir, name, path, old) && S_ISREG(old.st_mode);
    std::string tmp;
    const int fd = create_temporary(dir, name, path, tmp);
    auto give_up = [&](const std::string& why) {
        ::close(fd);
        ::unlinkat(dir, tmp.c_str(), 0);
        fail(path, why);
    };
    const char* p = content.data();
    std::size_t left = content.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            give_up(std::strerror(errno));
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    const mode_t mask = ::umask(0);
    ::umask(mask);
    if (replaces_file) {
        // A private 0600 record stays private; never wider than the umask allows.
        ::fchmod(fd, old.st_mode & 0777 & ~mask);
        // Another owner's file keeps its owner where we may say so (root); else it becomes
        // ours, as any rewrite by us would.
        if ((old.st_uid != ::geteuid() || old.st_gid != ::getegid()) &&
            ::fchown(fd, old.st_uid, old.st_gid) != 0) {
            // EPERM without the right to: the file becomes ours.
        }
    } else {
        ::fchmod(fd, 0666 & ~mask);
    }
    if (::fsync(fd) != 0) give_up(std::strerror(errno));
    if (::close(fd) != 0) {
        const std::string why = std::strerror(errno);
        ::unlinkat(dir, tmp.c_str(), 0);
        fail(path, why);
    }
    return tmp;
}
}  // namespace

void check_writable(const fs::path& path) {
    const std::string name = entry_name(path);
    const Directory dir{open_directory(path)};
    struct stat st {};
    if (::faccessat(dir.fd, ".", W_OK, 0) != 0) fail(path, std::strerror(errno));
    // A read-only file is refused now rather than replaced: the user made it so.
    if (existing_entry(dir.fd, name, path, st) && S_ISREG(st.st_mode) &&
        ::faccessat(dir.fd, name.c_str(), W_OK, 0) != 0)
        fail(path, std::strerror(errno));
}

void write_file_atomically(const fs::path& path, const std::string& content) {
    const std::string name = entry_name(path);
    const Directory dir{open_directory(path)};
    const std::string tmp = write_temporary(dir.fd, name, path, content);
    // rename replaces the entry itself: a link there is replaced, its target untouched.
    if (::renameat(dir.fd, tmp.c_str(), dir.fd, name.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        ::unlinkat(dir.fd, tmp.c_str(), 0);
        fail(path, why);
    }
}

bool write_new_file_atomically(const fs::path& path, const std::string& content) {
    const std::string name = entry_name(path);
    const Directory dir{open_directory(path)};
    struct stat st {};
    if (::fstatat(dir.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) return false;
    const std::string tmp = write_temporary(dir.fd, name, path, content);
    // link() never replaces: of two writers of the same name, one gets EEXIST.
    const int linked = ::linkat(dir.fd, tmp.c_str(), dir.fd, name.c_str(), 0);
    const int e = errno;
    ::unlinkat(dir.fd, tmp.c_str(), 0);
    if (linked == 0) return true;
    if (e == EEXIST) return false;
    fail(path, std::strerror(e));
}

}  // namespace ceiling::store
