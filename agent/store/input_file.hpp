#pragma once
// Every file ceiling reads on the user's say-so (run records, machine profiles, budget and
// threshold files) comes through here: only a regular file, opened without blocking (a
// FIFO or a device never hangs a command), up to a stated size, text only. Errors are one
// line naming the file, and never echo the file's raw bytes.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace ceiling::store {

// Larger than any record ceiling writes (a 10 000-repeat run with every duration kept is
// tens of MB); a bigger "record" is something else.
inline constexpr std::uint64_t max_input_bytes = 256ull << 20;

// The file's content. Throws UsageError (exit 2): "cannot read WHAT PATH: REASON",
// where REASON says it does not exist, is a directory, is not a regular file (a FIFO, a
// device, a socket), is larger than the limit (stated), is not readable, or holds binary
// data rather than text.
std::string read_input_file(const std::filesystem::path& path, std::string_view what,
                            std::uint64_t limit = max_input_bytes);

// `text` with control and non-ASCII bytes written as \xNN, cut to `max_chars`: for error
// messages that quote a parser's complaint about untrusted input.
std::string printable(std::string_view text, std::size_t max_chars = 200);

}  // namespace ceiling::store
