// `ceiling diff BEFORE AFTER`: what changed between two run records (or suite records):
// per region or kernel the time ratio against the noise, rate changes, bound changes,
// budgets that flipped.
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>

#include "agent/cli/command.hpp"
#include "agent/cli/shared_options.hpp"
#include "agent/judge/judge_record.hpp"
#include "agent/output/diff.hpp"
#include "agent/output/printable_names.hpp"
#include "diagnosis/format.hpp"
#include "agent/output/summary_json.hpp"
#include "agent/store/run_store.hpp"

namespace ceiling::cli {

namespace {
struct DiffArgs {
    std::string before;
    std::string after;
    std::string budget_file;
    std::string fail_on_regression;  // a threshold ("5%", "0.05"); empty: beyond the noise
    bool json = false;
    ThresholdArgs thresholds;
};

// "5%" or "0.05" as a fraction; a negative or unreadable threshold is a usage error.
double regression_threshold(const std::string& text) {
    if (text.empty()) return 0;
    std::string t = text;
    const bool percent = !t.empty() && t.back() == '%';
    if (percent) t.pop_back();
    std::size_t used = 0;
    double v = -1;
    try {
        v = std::stod(t, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != t.size() || !(v >= 0) || !std::isfinite(v))
        throw UsageError("--fail-on-regression: '" + text +
                         "' is not a threshold (a fraction such as 0.05, or 5%)");
    // "5" meant as 5 % would gate only at 500 %: a CI gate that never fires. A fraction
    // above 1 is refused; a percentage says so with its '%'.
    if (!percent && v > 1)
        throw UsageError("--fail-on-regression: '" + text + "' would mean " + ceiling::percent(v) +
                         " slower: give a fraction (0.05) or a percentage (" + t + "%)");
    return percent ? v / 100 : v;
}
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
    app->add_flag("--json", args->json, "Print the comparison as JSON on stdout instead of the table");
    add_threshold_options(app, args->thresholds);
    auto* gate = app->add_option("--fail-on-regression", args->fail_on_regression,
                                 "Exit with status 4 when the whole run or a region got slower beyond\n"
                                 "both sides' noise and, given THRESHOLD (5% or 0.05), by more than it\n"
                                 "(for CI; record both sides with --repeat so the noise is known)")
                     ->expected(0, 1)
                     ->type_name("[THRESHOLD]");
    return {app, [args, gate]() -> int {
                const bool gated = gate->count() > 0;
                const double threshold = regression_threshold(args->fail_on_regression);
                std::optional<Budgets> budgets;
                if (!args->budget_file.empty()) budgets = read_budget_file(args->budget_file);
                RunRecord before = store::load_run_record(args->before);
                RunRecord after = store::load_run_record(args->after);
                // The same budgets and thresholds on both sides, judged on what each measured
                // (thresholds given here apply over each record's own).
                const bool rejudge = budgets || !args->thresholds.file.empty() || !args->thresholds.assignments.empty();
                for (RunRecord* r : {&before, &after}) {
                    if (!rejudge) break;
                    if (budgets) r->budgets = budgets;
                    r->thresholds = thresholds_of(args->thresholds, r->thresholds);
                    judge::judge_record(*r);
                }
                // Text shows names a program chose escaped; JSON keeps them exact.
                std::optional<RunRecord> before_shown, after_shown;
                const auto diff = args->json ? output::diff_records(before, after)
                                             : output::diff_records(shown_as_text(before, before_shown),
                                                                    shown_as_text(after, after_shown));
                if (args->json)
                    std::cout << output::diff_json(diff, args->before, args->after).dump(1) << "\n";
                else
                    output::render_diff(diff, output::escaped(args->before), output::escaped(args->after),
                                        std::cout);
                if (!gated) return exit_ok;
                const auto slower = output::regressions(diff, threshold);
                if (slower.empty()) return exit_ok;
                std::string names;
                for (const auto* r : slower) names += (names.empty() ? "" : ", ") + output::escaped(r->name);
                std::cerr << "ceiling diff: regression beyond the noise"
                          << (threshold > 0 ? " and " + percent(threshold) : std::string())
                          << ": " << names << "\n";
                return exit_regression;
            }};
}

}  // namespace ceiling::cli
