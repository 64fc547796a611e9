// `ceiling machine`: measure this machine's ceilings, print them, save the profile.
#include <iostream>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "agent/cli/command.hpp"
#include "agent/cli/shared_options.hpp"
#include "agent/machine/machine.hpp"
#include "agent/store/atomic_file.hpp"
#include "agent/output/machine_table.hpp"
#include "agent/output/progress.hpp"
#include "agent/store/profile_store.hpp"
#include "kernels/parallel.hpp"

namespace ceiling::cli {

namespace {
struct MachineArgs {
    bool quick = false;
    int threads = 0;
    std::string output;
    bool json = false;
    bool show = false;
    std::string storage_dir = ".";
    bool no_storage = false;
};
}  // namespace

Command add_machine(CLI::App& root, const GlobalOptions& global) {
    auto args = std::make_shared<MachineArgs>();
    auto* app = root.add_subcommand(
        "machine",
        "Measure this machine's ceilings: effective clock, compute roofs per precision and unit\n"
        "(1 thread and all threads), bandwidth per memory level from a working-set sweep,\n"
        "latency per level, dispatch overheads and the storage under --storage-dir. Prints a\n"
        "table and saves the machine profile that later commands use. About a minute; --quick\n"
        "takes seconds.");
    app->add_flag("--quick", args->quick, "Coarser sweep and fewer repeats (seconds instead of a minute)");
    app->add_option("--threads", args->threads,
                    "Threads for the all-core roofs (default: every CPU this process may use)")
        ->check(CLI::Range(1, 4096));
    app->add_option("--output,-o", args->output,
                    "Where to save the profile (default: $CEILING_PROFILE, else "
                    "~/.cache/ceiling/machine-HOST.json)");
    app->add_option("--storage-dir", args->storage_dir,
                    "Directory whose storage to measure (sequential read and write of a 256 MiB "
                    "unnamed file, O_DIRECT; 64 MiB with --quick): where your data lives "
                    "(default: the current directory)");
    app->add_flag("--no-storage", args->no_storage, "Do not measure the storage roof");
    app->add_flag("--json", args->json, "Print the profile as JSON on stdout instead of the table");
    app->add_flag("--show", args->show,
                  "Print the saved profile (from --output or the default path) without measuring");

    return {app, [args, &global]() -> int {
                const auto path = args->output.empty() ? store::default_profile_path()
                                                       : std::filesystem::path(args->output);
                if (args->show) {
                    const MachineProfile saved = store::load_profile(path);
                    if (args->json)
                        std::cout << nlohmann::json(saved).dump(2) << "\n";
                    else
                        output::render_machine_profile(saved, std::cout);
                    return exit_ok;
                }
                // Fail before a minute of measuring, not after.
                check_output_paths({path});
                if (args->threads > kernels::available_cpus())
                    throw UsageError("--threads " + std::to_string(args->threads) + " exceeds the " +
                                     std::to_string(kernels::available_cpus()) +
                                     " CPUs this process may use");
                std::optional<output::Progress> progress;
                progress.emplace("ceiling machine", 0, output::progress_wanted(global.quiet));
                measure::MachineOptions opts;
                opts.quick = args->quick;
                opts.threads = args->threads;
                if (args->no_storage)
                    opts.storage_dir.reset();
                else if (!std::filesystem::is_directory(args->storage_dir))
                    throw UsageError("--storage-dir " + args->storage_dir + ": not a directory");
                else
                    opts.storage_dir = args->storage_dir;
                opts.on_step = [&](const std::string& what) { progress->step(what); };
                opts.add_steps = [&](int n) { progress->add_total(n); };
                const MachineProfile profile = measure::measure_machine(opts);
                store::save_profile(profile, path);
                progress.reset();  // clear the progress line before printing
                if (args->json)
                    std::cout << nlohmann::json(profile).dump(2) << "\n";
                else {
                    output::render_machine_profile(profile, std::cout);
                    std::cout << "\nProfile saved to " << path.string() << "\n";
                }
                return exit_ok;
            }};
}

}  // namespace ceiling::cli
