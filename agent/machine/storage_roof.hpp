#pragma once
// The storage roof of `ceiling machine` (StorageRoof, diagnosis/machine_profile.hpp): what a
// program reading or writing files under one directory can get from the storage there.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "diagnosis/machine_profile.hpp"

namespace ceiling::measure {

struct StorageOptions {
    std::filesystem::path directory;          // the file is made here, unnamed
    std::uint64_t file_bytes = 256ull << 20;  // written, then read, `passes` times
    int passes = 3;
};

// Measures the storage under options.directory; nullopt with `why` set when it cannot (no
// such directory, too little free space, a filesystem without O_DIRECT such as tmpfs, whose
// "storage" is memory, or an I/O error). The file is opened unnamed (O_TMPFILE) or unlinked
// at once, so nothing is left behind even if ceiling is killed.
std::optional<StorageRoof> measure_storage(const StorageOptions& options, std::string& why);

// The block device holding `path` ("vda1", from /sys/dev/block), empty when unknown.
std::string block_device_of(const std::filesystem::path& path);

}  // namespace ceiling::measure
