#pragma once
// Files ceiling writes appear whole or not at all: written to a temporary file in the
// same directory, flushed, then renamed over the target.

#include <filesystem>
#include <string>

namespace ceiling::output {

// Throws std::runtime_error("cannot write FILE: reason") and leaves no partial file.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

// Checks, before long work starts, that `path` could be written (its directory exists or
// can be created, and is writable). Throws std::runtime_error naming the file otherwise.
void check_writable(const std::filesystem::path& path);

}  // namespace ceiling::output
