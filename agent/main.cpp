// `ceiling`: tells what bounds a workload on this machine and which lever to pull first.
// Parses the command line once, hands over to the chosen subcommand, and maps failures
// onto the documented exit statuses (0 ok, 1 failed measurement, 2 bad usage or input).

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <iostream>
#include <vector>

#include "agent/cli/command.hpp"
#include "agent/version.hpp"

namespace {

using namespace ceiling;
using namespace ceiling::cli;

// The subcommands, in the order `--help` lists them.
constexpr Registrar registrars[] = {
    add_doctor,
    add_machine,
    add_suite,
    add_run,
    add_report,
    add_diff,
    add_bound,
};

void setup_logging(const GlobalOptions& g) {
    auto logger = spdlog::stderr_color_mt("ceiling");
    logger->set_pattern("ceiling: %^%l%$: %v");
    spdlog::set_default_logger(logger);
    spdlog::set_level(g.quiet ? spdlog::level::warn
                      : g.verbosity >= 2 ? spdlog::level::trace
                      : g.verbosity == 1 ? spdlog::level::debug
                                         : spdlog::level::info);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "ceiling: measures this machine's ceilings, what a workload achieves against them,\n"
        "and says what bounds it (compute, bandwidth, latency, not the model, capacity)\n"
        "and which lever to pull first.",
        "ceiling"};
    app.set_version_flag("--version", std::string(ceiling::version_string()));
    app.require_subcommand(1);
    app.fallthrough();
    GlobalOptions global;
    app.add_flag("-v,--verbose", global.verbosity, "More detail on stderr (-vv: trace)");
    // Every option's default shows in --help (subcommands copy these defaults).
    app.option_defaults()->always_capture_default();
    app.add_flag("-q,--quiet", global.quiet,
                 "Only warnings and errors on stderr; no progress (run still names a record it named itself)");

    std::vector<Command> commands;
    for (Registrar r : registrars) commands.push_back(r(app, global));

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        // One line, like every other bad input: what is wrong, and where the usage is.
        std::cerr << "ceiling: " << e.what() << " (see ceiling --help, or ceiling COMMAND --help)\n";
        return exit_usage;
    }
    setup_logging(global);

    for (const auto& c : commands) {
        if (!c.app->parsed()) continue;
        try {
            const int status = c.run();
            // What a command printed is its output: a full disk, /dev/full or a closed pipe
            // that lost it is a failed output (exit 1), never success. `run` keeps its
            // program's status: stdout is the program's there.
            std::cout.flush();
            if (!std::cout && status == exit_ok) {
                spdlog::error("cannot write standard output: {}", std::strerror(errno ? errno : EIO));
                return exit_failed;
            }
            return status;
        } catch (const Failure& f) {
            spdlog::error("{}", f.what());
            return f.exit_status;
        } catch (const std::exception& e) {
            spdlog::error("{}", e.what());
            return exit_failed;
        }
    }
    return exit_usage;  // unreachable: require_subcommand(1)
}
