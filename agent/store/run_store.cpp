#include "agent/store/run_store.hpp"

#include <nlohmann/json.hpp>

#include "agent/failure.hpp"
#include "agent/store/atomic_file.hpp"
#include "agent/store/input_file.hpp"

namespace ceiling::store {

RunRecord load_run_record(const std::filesystem::path& path) {
    const std::string text = read_input_file(path, "run record");
    try {
        return parse_run_record(text);
    } catch (const std::exception& e) {
        // One line, and never the file's raw bytes (a parser may quote them).
        throw UsageError("run record " + path.string() + ": " + printable(e.what()));
    }
}

void save_run_record(const RunRecord& record, const std::filesystem::path& path) {
    try {
        store::write_file_atomically(path, nlohmann::json(record).dump(1) + "\n");
    } catch (const std::exception& e) {
        throw MeasurementError(e.what());
    }
}

bool save_new_run_record(const RunRecord& record, const std::filesystem::path& path) {
    try {
        return store::write_new_file_atomically(path, nlohmann::json(record).dump(1) + "\n");
    } catch (const std::exception& e) {
        throw MeasurementError(e.what());
    }
}

}  // namespace ceiling::store
