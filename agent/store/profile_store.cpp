#include "agent/store/profile_store.hpp"

#include <unistd.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "agent/failure.hpp"
#include "agent/store/atomic_file.hpp"
#include "agent/store/input_file.hpp"

namespace ceiling::store {

namespace fs = std::filesystem;

namespace {

// NAME-HOST.json: one file per host, so a home directory shared by machines keeps each apart.
std::string host_file(const std::string& name) {
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    return name + "-" + host + ".json";
}

// The user's cache directory for ceiling ($XDG_CACHE_HOME, else $HOME/.cache); none without
// either.
std::optional<fs::path> cache_dir() {
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "ceiling";
    if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "ceiling";
    return std::nullopt;
}

}  // namespace

fs::path default_profile_path() {
    if (const char* p = std::getenv("CEILING_PROFILE"); p && *p) return p;
    return cache_dir().value_or(".ceiling") / host_file("machine");
}

bool default_profile_chosen() {
    const char* p = std::getenv("CEILING_PROFILE");
    return p && *p;
}

// Written by every run that measured: never into the working directory (the profile's last
// resort, where it is only read unless `machine` is asked to write it).
fs::path pmu_validation_cache_path() {
    const auto dir = cache_dir();
    return dir ? *dir / host_file("pmu-validation") : fs::path();
}

std::optional<MachineProfile> load_profile_if_present(const fs::path& path, ProfileParts parts) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return std::nullopt;
    return load_profile(path, parts);
}

MachineProfile load_profile(const fs::path& path, ProfileParts parts) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw UsageError("cannot read machine profile " + path.string() +
                              ": no such file (run `ceiling machine`)");
    const std::string text = read_input_file(path, "machine profile");
    try {
        return parse_machine_profile(text, parts);
    } catch (const std::exception& e) {
        throw UsageError("machine profile " + path.string() + ": " + printable(e.what()) +
                              " (run `ceiling machine` to measure it again)");
    }
}

void save_profile(const MachineProfile& profile, const fs::path& path) {
    try {
        store::write_file_atomically(path, nlohmann::json(profile).dump(2) + "\n");
    } catch (const std::exception& e) {
        throw MeasurementError(e.what());
    }
}

}  // namespace ceiling::store
