#include "agent/store/input_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/failure.hpp"
#include "diagnosis/format.hpp"

namespace ceiling::store {
namespace {

std::string kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "is a directory";
    if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device, not a regular file";
    if (S_ISSOCK(mode)) return "is a socket, not a regular file";
    return "is not a regular file";
}

// Text: no NUL byte (JSON and the budget/threshold formats never hold one).
bool looks_binary(const std::string& s) { return s.find('\0') != std::string::npos; }

}  // namespace

std::string printable(std::string_view text, std::size_t max_chars) {
    std::string out;
    for (unsigned char c : text) {
        if (out.size() >= max_chars) {
            out += "...";
            break;
        }
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else if (c == '\n' || c == '\t') {
            out += ' ';
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        }
    }
    return out;
}

std::string read_input_file(const std::filesystem::path& path, std::string_view what,
                            std::uint64_t limit) {
    const std::string head = "cannot read " + std::string(what) + " " + path.string() + ": ";
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        const int e = errno;
        throw UsageError(head + (e == ENOENT ? "no such file" : std::strerror(e)));
    }
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw UsageError(head + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) throw UsageError(head + kind_of(st.st_mode));
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size > limit)
        throw UsageError(head + "it is " + bytes(static_cast<double>(size)) + ", larger than the " + bytes(static_cast<double>(limit)) +
                              " a " + std::string(what) + " may be");
    std::string content;
    content.resize(static_cast<std::size_t>(size));
    std::size_t got = 0;
    while (got < content.size()) {
        const ssize_t n = ::read(fd, content.data() + got, content.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw UsageError(head + std::strerror(errno));
        if (n == 0) break;  // shrank while we read: what is there is what we parse
        got += static_cast<std::size_t>(n);
    }
    content.resize(got);
    if (looks_binary(content)) throw UsageError(head + "binary data, not a text file");
    return content;
}

}  // namespace ceiling::store
