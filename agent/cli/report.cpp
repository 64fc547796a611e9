// `ceiling report RECORD... [--html FILE] [--profile FILE]`: re-render a saved run record,
// re-judged against the profile it carries or another one, without re-running anything.
// Several records (the ranks of one job) are summarised across ranks first.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "agent/cli/command.hpp"
#include "agent/cli/shared_options.hpp"
#include "agent/judge/judge_record.hpp"
#include "agent/store/atomic_file.hpp"
#include "agent/output/html_report.hpp"
#include "agent/output/printable_names.hpp"
#include "agent/output/run_answer.hpp"
#include "agent/output/run_summary.hpp"
#include "agent/output/suite_table.hpp"
#include "agent/output/summary_json.hpp"
#include "agent/store/profile_store.hpp"
#include "agent/store/run_store.hpp"

namespace ceiling::cli {

namespace {
struct ReportArgs {
    std::vector<std::string> records;
    bool json = false;
    bool detail = false;
    bool force = false;
    std::string csv;
    std::string html;
    std::string profile;
    std::string budget_file;
    ThresholdArgs thresholds;
};
}  // namespace

Command add_report(CLI::App& root, const GlobalOptions&) {
    auto args = std::make_shared<ReportArgs>();
    auto* app = root.add_subcommand(
        "report",
        "Show a saved run record again (summary, regions, diagnosis, budgets), re-judged against\n"
        "the machine profile it carries or --profile FILE. Several records (one per rank) are\n"
        "also summarised across ranks: slowest rank and spread. --html writes one\n"
        "self-contained page with the summary, the roofline and the region table.");
    app->add_option("records", args->records,
                    "Run records written by `ceiling run` or `ceiling suite`")
        ->required();
    app->add_option("--html", args->html, "Also write a self-contained HTML report to this file");
    app->add_flag("--json", args->json,
                  "Print a JSON summary on stdout instead of the text (an array for several records;\n"
                  "units in the field names, null for what was not measured)");
    app->add_option("--csv", args->csv, "Also write the region (or kernel) table as CSV to this file (one record)");
    app->add_flag("--detail", args->detail,
                  "A run record's whole summary: every region, finding and note, the system's\n"
                  "evidence (the default is the answer in at most 30 lines)");
    app->add_option("--profile", args->profile,
                    "Judge against this machine profile instead of the record's");
    app->add_option("--budget", args->budget_file,
                    "Judge against the budgets of this file instead of the record's (budgets set\n"
                    "after the measurement: no need to run again)");
    app->add_flag("--force", args->force,
                  "Let --html and --csv replace an existing file that is not a page or table\n"
                  "ceiling wrote (without it such a file is refused: it may be a record)");
    add_threshold_options(app, args->thresholds);
    return {app, [args]() -> int {
                check_output_paths({args->html, args->csv});
                std::vector<NamedPath> inputs = {{args->profile, "--profile"},
                                                 {args->budget_file, "--budget"},
                                                 {args->thresholds.file, "--thresholds"}};
                for (const auto& r : args->records) inputs.push_back({r, "a record to report"});
                check_outputs_apart({{args->html, "--html"}, {args->csv, "--csv"}}, inputs);
                // `report --html a.json b.json` took a.json for the page's name: a file that
                // is not one of report's own outputs is kept unless the user insists.
                check_replaceable({args->html, "--html"},
                                  {"<!DOCTYPE html>", "<title>ceiling report</title>", "an HTML report"},
                                  args->force);
                check_replaceable({args->csv, "--csv"}, {"path,kind,model,", "", "a region table"},
                                  args->force);
                if (!args->csv.empty() && args->records.size() != 1)
                    throw UsageError("--csv takes one record (" + std::to_string(args->records.size()) + " given)");
                std::optional<MachineProfile> profile;
                if (!args->profile.empty()) profile = store::load_profile(args->profile);
                std::optional<Budgets> budgets;
                if (!args->budget_file.empty()) budgets = read_budget_file(args->budget_file);
                std::vector<RunRecord> records;
                std::vector<std::string> names;
                for (const auto& path : args->records) {
                    RunRecord r = store::load_run_record(path);
                    if (profile) {
                        r.machine_profile = profile;
                        r.machine_profile_path = std::filesystem::absolute(args->profile).string();
                    }
                    if (budgets) r.budgets = budgets;
                    r.thresholds = thresholds_of(args->thresholds, r.thresholds);
                    judge::judge_record(r);
                    records.push_back(std::move(r));
                    names.push_back(path);
                }
                auto write = [](const std::string& path, const std::string& text) {
                    try {
                        store::write_file_atomically(path, text);
                    } catch (const std::exception& e) {
                        throw MeasurementError(e.what());
                    }
                };
                if (!args->csv.empty()) write(args->csv, output::regions_csv(records.front()));
                if (!args->html.empty())
                    write(args->html, output::render_html_report(records, names));
                if (args->json) {
                    nlohmann::json out = nlohmann::json::array();
                    for (std::size_t i = 0; i < records.size(); ++i)
                        out.push_back(output::summary_json(records[i], names[i]));
                    std::cout << (records.size() == 1 ? out[0] : out).dump(1) << "\n";
                    return exit_ok;
                }
                // Text shows names a program chose escaped (the record, JSON, CSV keep them).
                for (std::size_t i = 0; i < records.size(); ++i) {
                    std::optional<RunRecord> escaped;
                    shown_as_text(records[i], escaped);
                    if (escaped) records[i] = std::move(*escaped);
                    names[i] = output::escaped(names[i]);
                }
                if (records.size() > 1) {
                    output::render_rank_summary(records, names, std::cout);
                    std::cout << "\n";
                }
                for (std::size_t i = 0; i < records.size(); ++i) {
                    if (records.size() > 1) std::cout << "== " << names[i] << " ==\n";
                    if (records[i].kind == RecordKind::suite)
                        output::render_suite(records[i], std::cout);
                    else if (args->detail)
                        output::render_run_summary(records[i], std::cout);
                    else
                        output::render_run_answer(records[i], std::cout);
                    if (i + 1 < records.size()) std::cout << "\n";
                }
                if (!args->html.empty()) std::cout << "\nHTML report: " << output::escaped(args->html) << "\n";
                if (!args->csv.empty()) std::cout << "CSV: " << output::escaped(args->csv) << "\n";
                return exit_ok;
            }};
}

}  // namespace ceiling::cli
