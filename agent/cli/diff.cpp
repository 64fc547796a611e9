// `ceiling diff BEFORE AFTER`: what changed between two run records (or suite records):
// per region or kernel the time ratio against the noise, rate changes, bound changes,
// budgets that flipped.
#include <iostream>
#include <memory>
#include <optional>

#include "agent/cli/command.hpp"
#include "agent/cli/shared_options.hpp"
#include "agent/measure/region_diagnosis.hpp"
#include "agent/output/diff.hpp"
#include "agent/store/run_store.hpp"

namespace ceiling::cli {

namespace {
struct DiffArgs {
    std::string before;
    std::string after;
    std::string budget_file;
};
}  // namespace

Command add_diff(CLI::App& root, const GlobalOptions&) {
    auto args = std::make_shared<DiffArgs>();
    auto* app = root.add_subcommand(
        "diff",
        "Compare two run records: per region or kernel the time ratio after/before with the\n"
        "noise of both sides (changes within it are flagged, not called speed-ups), achieved\n"
        "rate changes, bound changes and budgets that flipped.");
    app->add_option("before", args->before, "Run record before the change")->required();
    app->add_option("after", args->after, "Run record after the change")->required();
    app->add_option("--budget", args->budget_file,
                    "Judge both records against the budgets of this file (which flipped?)");
    return {app, [args]() -> int {
                std::optional<Budgets> budgets;
                if (!args->budget_file.empty()) budgets = read_budget_file(args->budget_file);
                RunRecord before = store::load_run_record(args->before);
                RunRecord after = store::load_run_record(args->after);
                // The same budgets on both sides, judged on what each measured.
                for (RunRecord* r : {&before, &after}) {
                    if (!budgets) break;
                    r->budgets = budgets;
                    measure::judge_record(*r);
                }
                output::render_diff(output::diff_records(before, after), args->before, args->after, std::cout);
                return exit_ok;
            }};
}

}  // namespace ceiling::cli
