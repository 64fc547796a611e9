#pragma once
// Reading and writing run records (`run`, `suite`, `report`, `diff`), with the error
// conventions of every command: one line naming the file.

#include <filesystem>

#include "diagnosis/run_record.hpp"

namespace ceiling::store {

// Throws UsageError (exit 2) naming the file when it is missing, unreadable, truncated,
// not JSON, of another schema_version, or malformed.
RunRecord load_run_record(const std::filesystem::path& path);

// Writes atomically (a reader never sees half a record, even after Ctrl-C or a crash);
// throws MeasurementError (exit 1) naming the file on failure.
void save_run_record(const RunRecord& record, const std::filesystem::path& path);

// Like save_run_record, but false (nothing written) when `path` exists: for default names.
bool save_new_run_record(const RunRecord& record, const std::filesystem::path& path);

}  // namespace ceiling::store
