#include "agent/store/run_store.hpp"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "agent/cli/command.hpp"
#include "agent/output/atomic_file.hpp"

namespace ceiling::store {

RunRecord load_run_record(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw cli::UsageError("cannot read run record " + path.string() + ": no such file or not readable");
    std::ostringstream text;
    text << in.rdbuf();
    try {
        return parse_run_record(text.str());
    } catch (const std::exception& e) {
        // nlohmann's parse errors span one line; keep the message to one line regardless.
        std::string why = e.what();
        for (char& c : why)
            if (c == '\n') c = ' ';
        throw cli::UsageError("run record " + path.string() + ": " + why);
    }
}

void save_run_record(const RunRecord& record, const std::filesystem::path& path) {
    try {
        output::write_file_atomically(path, nlohmann::json(record).dump(1) + "\n");
    } catch (const std::exception& e) {
        throw cli::MeasurementError(e.what());
    }
}

}  // namespace ceiling::store
