#include "collectors/fs_root.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>

#include <fcntl.h>
#include <unistd.h>

namespace ceiling::collectors {

FsRoot::FsRoot(std::filesystem::path root) : root_(std::move(root)) {}

const FsRoot& FsRoot::system() {
    static const FsRoot root("/");
    return root;
}

std::filesystem::path FsRoot::resolve(std::string_view absolute) const {
    std::string_view rel = absolute;
    while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
    return root_ / std::filesystem::path(rel);
}

FsRoot::Text FsRoot::read(std::string_view absolute) const {
    // POSIX read loop rather than iostreams: /proc files report size 0, and the errno
    // (EACCES on RAPL energy_uj since Linux 5.10) decides what the user is told.
    const auto p = resolve(absolute);
    const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {std::nullopt, errno};
    std::string out;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            ::close(fd);
            return {std::nullopt, err};
        }
        if (n == 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return {std::move(out), 0};
}

std::optional<std::string> FsRoot::read_text(std::string_view absolute) const {
    return read(absolute).content;
}

std::optional<std::string> FsRoot::read_line(std::string_view absolute) const {
    auto t = read_text(absolute);
    if (!t) return std::nullopt;
    std::string_view s = *t;
    if (auto nl = s.find('\n'); nl != std::string_view::npos) s = s.substr(0, nl);
    return std::string(trim(s));
}

std::optional<std::int64_t> FsRoot::read_int(std::string_view absolute) const {
    auto t = read_line(absolute);
    if (!t) return std::nullopt;
    return parse_int(*t);
}

bool FsRoot::exists(std::string_view absolute) const {
    std::error_code ec;
    return std::filesystem::exists(resolve(absolute), ec);
}

std::vector<std::string> FsRoot::list(std::string_view absolute_dir) const {
    std::vector<std::string> names;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(resolve(absolute_dir), ec), end; !ec && it != end;
         it.increment(ec))
        names.push_back(it->path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

std::string_view trim(std::string_view s) {
    const auto ws = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    while (!s.empty() && ws(s.front())) s.remove_prefix(1);
    while (!s.empty() && ws(s.back())) s.remove_suffix(1);
    return s;
}

std::optional<std::int64_t> parse_int(std::string_view s) {
    s = trim(s);
    int base = 10;
    bool negative = false;
    if (!s.empty() && s.front() == '-') {
        negative = true;
        s.remove_prefix(1);
    }
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s.remove_prefix(2);
    }
    std::uint64_t v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
    const auto sv = static_cast<std::int64_t>(v);
    return negative ? -sv : sv;
}

std::optional<double> parse_double(std::string_view s) {
    s = trim(s);
    if (s.empty()) return std::nullopt;
    const std::string copy(s);  // strtod needs a terminated string
    char* end = nullptr;
    const double v = std::strtod(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size()) return std::nullopt;
    return v;
}

std::optional<std::vector<int>> parse_cpu_list(std::string_view s) {
    std::vector<int> cpus;
    s = trim(s);
    if (s.empty()) return cpus;
    while (!s.empty()) {
        const auto comma = s.find(',');
        const std::string_view part = s.substr(0, comma);
        s = comma == std::string_view::npos ? std::string_view{} : s.substr(comma + 1);
        const auto dash = part.find('-');
        auto lo = parse_int(part.substr(0, dash));
        auto hi = dash == std::string_view::npos ? lo : parse_int(part.substr(dash + 1));
        if (!lo || !hi || *lo < 0 || *hi < *lo) return std::nullopt;
        for (auto c = *lo; c <= *hi; ++c) cpus.push_back(static_cast<int>(c));
    }
    return cpus;
}

}  // namespace ceiling::collectors
