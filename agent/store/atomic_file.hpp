#pragma once
// Files ceiling writes appear whole or not at all: written to a temporary file in the
// same directory, flushed, then renamed over the target.

#include <filesystem>
#include <stdexcept>
#include <string>

namespace ceiling::store {

// `path` exists and is not a regular file (a device, a FIFO, a socket, a directory): the
// rename would replace it, so ceiling refuses it as bad input.
struct NotARegularFile : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// Writes `path` through a temporary file in its directory and a rename, both made relative
// to that directory opened once, so a directory swapped meanwhile cannot redirect them. A
// final symbolic link is never followed: the link itself is replaced by the file (a link
// planted in /tmp cannot point an output at someone else's file). A regular file it replaces
// keeps its mode (never wider than the umask) and, where the caller may set it, its owner.
// Throws NotARegularFile, or std::runtime_error("cannot write FILE: reason"); leaves no
// partial file.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

// Like write_file_atomically, but never replaces anything: returns false, writing nothing,
// when `path` exists (also when another writer creates it first). For names ceiling makes
// up itself, which must never overwrite an earlier record.
bool write_new_file_atomically(const std::filesystem::path& path, const std::string& content);

// Checks, before long work starts, that `path` could be written: it is a regular file, a
// symbolic link (replaced, never followed) or does not exist yet, and its directory exists
// or can be created and is writable. Throws NotARegularFile or std::runtime_error naming the
// file otherwise.
void check_writable(const std::filesystem::path& path);

}  // namespace ceiling::store
