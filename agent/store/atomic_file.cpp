#include "agent/store/atomic_file.hpp"

#include <fcntl.h>
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

std::string kind_of(const fs::file_status& st) {
    switch (st.type()) {
        case fs::file_type::directory: return "is a directory";
        case fs::file_type::character:
        case fs::file_type::block: return "is a device, not a regular file";
        case fs::file_type::fifo: return "is a FIFO, not a regular file";
        case fs::file_type::socket: return "is a socket, not a regular file";
        default: return "is not a regular file";
    }
}
}  // namespace

fs::path write_target(const fs::path& path) {
    fs::path p = path;
    std::error_code ec;
    // Follow a chain of links (bounded, as the kernel bounds it) to the file they name.
    for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
        const fs::path next = fs::read_symlink(p, ec);
        if (ec) break;
        p = next.is_absolute() ? next : directory_of(p) / next;
    }
    return p;
}

void check_writable(const fs::path& given) {
    const fs::path path = write_target(given);
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (fs::exists(st) && !fs::is_regular_file(st))
        throw NotARegularFile("cannot write " + given.string() + ": " + kind_of(st) +
                              " (ceiling writes only regular files; it would replace this)");
    const fs::path dir = directory_of(path);
    fs::create_directories(dir, ec);
    if (ec) fail(path, ec.message());
    if (access(dir.c_str(), W_OK) != 0) fail(path, std::strerror(errno));
    if (fs::exists(path, ec) && access(path.c_str(), W_OK) != 0) fail(path, std::strerror(errno));
}

namespace {
// The content in a temporary file beside write_target(given), flushed and readable like
// any file the user creates; returns its name. Throws like write_file_atomically.
std::string write_temporary(const fs::path& given, const fs::path& path, const std::string& content) {
    check_writable(given);
    std::string tmpl = (directory_of(path) / ("." + path.filename().string() + ".XXXXXX")).string();
    const int fd = mkstemp(tmpl.data());
    if (fd < 0) fail(path, std::strerror(errno));
    const char* p = content.data();
    std::size_t left = content.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            const std::string why = std::strerror(errno);
            ::close(fd);
            ::unlink(tmpl.c_str());
            fail(path, why);
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    // mkstemp makes it 0600. A file it replaces keeps its mode and owner (a private 0600
    // record stays private), never wider than the umask allows; a new one is 0666 less it.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    struct stat old {};
    if (::stat(path.c_str(), &old) == 0 && S_ISREG(old.st_mode)) {
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
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmpl.c_str());
        fail(path, why);
    }
    return tmpl;
}
}  // namespace

void write_file_atomically(const fs::path& given, const std::string& content) {
    const fs::path path = write_target(given);
    const std::string tmpl = write_temporary(given, path, content);
    if (::rename(tmpl.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmpl.c_str());
        fail(path, why);
    }
}

bool write_new_file_atomically(const fs::path& path, const std::string& content) {
    std::error_code ec;
    if (fs::exists(fs::symlink_status(path, ec))) return false;
    const std::string tmpl = write_temporary(path, path, content);
    // link() never replaces: of two writers of the same name, one gets EEXIST.
    const int linked = ::link(tmpl.c_str(), path.c_str());
    const int e = errno;
    ::unlink(tmpl.c_str());
    if (linked == 0) return true;
    if (e == EEXIST) return false;
    fail(path, std::strerror(e));
}

}  // namespace ceiling::store
