#include "agent/cli/shared_options.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "agent/judge/judge_record.hpp"
#include "agent/machine/host_info.hpp"
#include "agent/output/printable_names.hpp"
#include "agent/machine/machine.hpp"
#include "agent/store/atomic_file.hpp"
#include "agent/output/progress.hpp"
#include "agent/store/input_file.hpp"
#include "agent/store/profile_store.hpp"

namespace ceiling::cli {

void add_profile_option(CLI::App* app, std::string& path) {
    app->add_option(
        "--profile", path,
        "Machine profile to judge against (default: the saved one from `ceiling machine`; "
        "a quick one is measured and saved when there is none)");
}

std::optional<OtherCpuProfile> other_cpu_profile(const MachineProfile& profile,
                                                 const std::filesystem::path& path,
                                                 bool explicit_path) {
    const std::string other = measure::other_machine_than_this(profile.host);
    if (other.empty()) return std::nullopt;
    const bool chosen = explicit_path || store::default_profile_chosen();
    return OtherCpuProfile{
        chosen, (chosen ? "the profile " : "the saved profile ") + path.string() + " was " + other};
}

LoadedProfile obtain_profile(const std::string& explicit_path, const GlobalOptions& global,
                             std::string_view command, bool judges_here) {
    const auto path = explicit_path.empty() ? store::default_profile_path()
                                            : std::filesystem::path(explicit_path);
    auto saved = explicit_path.empty() ? store::load_profile_if_present(path)
                                       : std::optional(store::load_profile(path));
    if (saved) {
        const auto other = other_cpu_profile(*saved, path, !explicit_path.empty());
        if (!other) return {std::move(*saved), path};
        if (other->chosen) {
            // `bound` only computes with a chosen profile's roofs: nothing to say.
            if (judges_here) spdlog::warn("{}: its roofs are that machine's", other->said);
            return {std::move(*saved), path};
        }
        spdlog::warn(
            "{}: measuring a quick one for this host (run `ceiling machine` for a full one)",
            other->said);
    } else {
        spdlog::warn(
            "no machine profile at {}: measuring a quick one (run `ceiling machine` for "
            "a full one)",
            path.string());
    }
    std::optional<output::Progress> progress;
    progress.emplace(std::string(command) + ": quick machine profile", 0,
                     output::progress_wanted(global.quiet));
    measure::MachineOptions opts;
    opts.quick = true;
    opts.on_step = [&](const std::string& what) { progress->step(what); };
    opts.add_steps = [&](int n) { progress->add_total(n); };
    MachineProfile profile = measure::measure_machine(opts);
    progress.reset();
    // A profile that cannot be cached is still a measurement: use it, and say why the next
    // command will measure again.
    try {
        store::save_profile(profile, path);
        spdlog::warn("quick machine profile saved to {}", path.string());
    } catch (const std::exception& e) {
        spdlog::warn("{}: the quick profile is used for this command only", e.what());
    }
    return {std::move(profile), path};
}

void add_threshold_options(CLI::App* app, ThresholdArgs& args) {
    app->add_option("--thresholds", args.file,
                    "JSON file of diagnosis thresholds to judge with (defaults: near_roof 0.60, "
                    "done 0.70, far 0.10, ...; report starts from the record's)");
    app->add_option(
        "--threshold", args.assignments,
        "One threshold as NAME=VALUE, e.g. near_roof=0.5 (repeatable; applied after --thresholds)");
}

Thresholds thresholds_of(const ThresholdArgs& args, Thresholds base) {
    try {
        Thresholds t = base;
        if (!args.file.empty()) t = parse_thresholds(read_text(args.file, "thresholds file"), t);
        for (const auto& a : args.assignments) apply_threshold_assignment(t, a);
        validate(t);
        return t;
    } catch (const std::invalid_argument& e) {
        throw UsageError((args.file.empty() ? std::string() : args.file + ": ") + e.what());
    }
}

void check_output_paths(std::initializer_list<std::filesystem::path> paths) {
    for (const auto& p : paths) {
        if (p.empty()) continue;
        try {
            store::check_writable(p);
        } catch (const store::NotARegularFile& e) {
            throw UsageError(e.what());
        } catch (const std::exception& e) {
            throw MeasurementError(e.what());
        }
    }
}

const CLI::Validator non_empty(
    [](std::string& v) {
        return v.empty() ? std::string("an empty value (an unset variable?): give one, or leave the option out")
                         : std::string();
    },
    "NONEMPTY");

namespace {
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
    std::error_code ea, eb;
    if (std::filesystem::exists(a, ea) && std::filesystem::exists(b, eb)) {
        std::error_code e;
        const bool same = std::filesystem::equivalent(a, b, e);
        if (!e) return same;
    }
    std::error_code e;
    return std::filesystem::weakly_canonical(std::filesystem::absolute(a), e) ==
           std::filesystem::weakly_canonical(std::filesystem::absolute(b), e);
}
}  // namespace

void check_outputs_apart(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        const auto& out = outputs[i];
        if (out.path.empty()) continue;
        auto refuse = [&](const NamedPath& other) {
            throw UsageError(out.role + " " + out.path.string() + " is also " + other.role +
                             ": ceiling never replaces an input or another of its outputs "
                             "(name them apart)");
        };
        for (const auto& in : inputs)
            if (!in.path.empty() && same_file(out.path, in.path)) refuse(in);
        for (std::size_t j = i + 1; j < outputs.size(); ++j)
            if (!outputs[j].path.empty() && same_file(out.path, outputs[j].path)) refuse(outputs[j]);
    }
}

const RunRecord& shown_as_text(const RunRecord& record, std::optional<RunRecord>& escaped) {
    escaped = output::with_printable_names(record);
    if (!escaped) return record;
    // The verdicts name the regions: judged again, they name them escaped.
    judge::judge_record(*escaped);
    return *escaped;
}

void check_replaceable(const NamedPath& out, const OwnOutput& own, bool force) {
    if (out.path.empty() || force) return;
    // Not through a link (the writer replaces the link itself), never blocking on a FIFO.
    const int fd = ::open(out.path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) return;
    std::string head(1024, '\0');
    ssize_t n = -1;
    if (fd >= 0) {
        n = ::read(fd, head.data(), head.size());
        ::close(fd);
    }
    // An empty file holds nothing to lose (mktemp made it for the output).
    if (n == 0) return;
    head.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    if (head.starts_with(own.start) && head.find(own.mark) != std::string::npos) return;
    throw UsageError(out.role + " " + out.path.string() + " exists and is not " + std::string(own.what) +
                     " ceiling wrote (a record taken for the option's value?): name a new file, or "
                     "give --force to replace it");
}

Budgets read_budget_file(const std::string& path) {
    // Read like every file the user names: a FIFO or a device is refused, never waited on.
    const std::string text = read_text(path, "budget file");
    try {
        return parse_budgets(text);
    } catch (const std::exception& e) {
        throw UsageError("--budget " + path + ": " + e.what());
    }
}

std::string read_text(const std::filesystem::path& path, std::string_view what) {
    return store::read_input_file(path, what, 1u << 20);  // a few lines of settings
}

}  // namespace ceiling::cli
