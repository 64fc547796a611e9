#pragma once
// Every read of /proc and /sys goes through an FsRoot, so tests can point collectors at a
// fake tree (tests/data/fakeroot-*) that describes another machine: a bare-metal
// Sapphire Rapids with uncore and RAPL, a VM without a PMU, a GPU host.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ceiling::collectors {

class FsRoot {
  public:
    explicit FsRoot(std::filesystem::path root = "/");
    static const FsRoot& system();  // the real "/"

    // `absolute` is a path as seen on the described machine ("/proc/self/status").
    std::filesystem::path resolve(std::string_view absolute) const;

    struct Text {
        std::optional<std::string> content;
        int error = 0;  // errno when content is absent (ENOENT, EACCES, ...)
    };
    Text read(std::string_view absolute) const;
    std::optional<std::string> read_text(std::string_view absolute) const;
    // First line, surrounding whitespace removed.
    std::optional<std::string> read_line(std::string_view absolute) const;
    // Parses a file holding one integer (decimal or 0x hex).
    std::optional<std::int64_t> read_int(std::string_view absolute) const;
    bool exists(std::string_view absolute) const;
    // Names of the entries of a directory, sorted; empty when it is absent.
    std::vector<std::string> list(std::string_view absolute_dir) const;

    const std::filesystem::path& root() const { return root_; }
    bool is_system() const { return root_ == "/"; }

  private:
    std::filesystem::path root_;
};

// Small parsing helpers shared by the /proc and /sys readers.
std::string_view trim(std::string_view s);
std::optional<std::int64_t> parse_int(std::string_view s);  // decimal or 0x hex, trimmed
std::optional<double> parse_double(std::string_view s);
// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; nullopt when malformed.
std::optional<std::vector<int>> parse_cpu_list(std::string_view s);

}  // namespace ceiling::collectors
