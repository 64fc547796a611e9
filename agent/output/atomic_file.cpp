#include "agent/output/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ceiling::output {

namespace fs = std::filesystem;

namespace {
[[noreturn]] void fail(const fs::path& path, const std::string& why) {
    throw std::runtime_error("cannot write " + path.string() + ": " + why);
}

fs::path directory_of(const fs::path& path) {
    const fs::path dir = path.parent_path();
    return dir.empty() ? fs::path(".") : dir;
}
}  // namespace

void check_writable(const fs::path& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) fail(path, "is a directory");
    const fs::path dir = directory_of(path);
    fs::create_directories(dir, ec);
    if (ec) fail(path, ec.message());
    if (access(dir.c_str(), W_OK) != 0) fail(path, std::strerror(errno));
    if (fs::exists(path, ec) && access(path.c_str(), W_OK) != 0) fail(path, std::strerror(errno));
}

void write_file_atomically(const fs::path& path, const std::string& content) {
    check_writable(path);
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
    // Readable like any file the user creates (mkstemp makes it 0600).
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd, 0666 & ~mask);
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmpl.c_str());
        fail(path, why);
    }
    if (::rename(tmpl.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmpl.c_str());
        fail(path, why);
    }
}

}  // namespace ceiling::output
