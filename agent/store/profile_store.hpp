#pragma once
// Where machine profiles live and how commands load them. The default is one file per
// host under the user's cache directory, so later commands reuse what `machine` measured.

#include <filesystem>
#include <optional>

#include "diagnosis/machine_profile.hpp"

namespace ceiling::store {

// $CEILING_PROFILE if set; else $XDG_CACHE_HOME/ceiling/machine-HOST.json; else
// $HOME/.cache/ceiling/machine-HOST.json.
std::filesystem::path default_profile_path();

// Whether default_profile_path() is the user's choice ($CEILING_PROFILE) rather than the
// per-host cache file: a chosen profile of another CPU is used with a warning, the cache file
// of another CPU is not used (commands that need a profile measure one for this host).
bool default_profile_chosen();

// Where `ceiling run` keeps the PMU self-validation's verdicts of this boot
// (agent/machine/pmu_self_validation.hpp): beside the default profile, one file per host
// ($XDG_CACHE_HOME or $HOME/.cache)/ceiling/pmu-validation-HOST.json; empty (nothing kept)
// without either variable.
std::filesystem::path pmu_validation_cache_path();

// Reads a profile. Throws UsageError (exit 2) naming the file when it is missing,
// unreadable, not JSON, of another schema_version, or malformed.
MachineProfile load_profile(const std::filesystem::path& path, ProfileParts parts = ProfileParts::all);

// nullopt when the file does not exist (other problems throw as load_profile does).
std::optional<MachineProfile> load_profile_if_present(const std::filesystem::path& path,
                                                    ProfileParts parts = ProfileParts::all);

// Writes atomically; throws MeasurementError (exit 1) naming the file on failure.
void save_profile(const MachineProfile& profile, const std::filesystem::path& path);

}  // namespace ceiling::store
