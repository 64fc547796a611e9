#include "agent/output/html_report.hpp"

#include <cmath>
#include <sstream>

#include "diagnosis/format.hpp"
#include "agent/output/roofline_svg.hpp"
#include "agent/output/run_answer.hpp"
#include "agent/output/run_summary.hpp"
#include "agent/output/suite_table.hpp"
#include "diagnosis/statistics.hpp"

namespace ceiling::output {

namespace {

constexpr const char* style = R"(body{font-family:sans-serif;margin:24px;color:#212529;max-width:1100px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
pre{background:#f8f9fa;padding:12px;border:1px solid #dee2e6;overflow-x:auto;font-size:12px}
table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #dee2e6;padding:4px 8px}
th{background:#f1f3f5;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.model{color:#1971c2;font-weight:bold}.muted{color:#868e96;white-space:pre-line;font-size:12px}
tr.group th{background:#e7f5ff}pre.answer{font-size:13px;border-color:#74c0fc}
details{margin-top:16px}summary{cursor:pointer;font-weight:bold;font-size:14px}
svg{max-width:100%;height:auto})";

void region_table(const RunRecord& r, std::ostringstream& h) {
    if (r.regions.empty()) {
        h << "<p class=\"muted\">No regions recorded.</p>\n";
        return;
    }
    const double runs = std::max<double>(1.0, static_cast<double>(r.timed_executions().size()));
    const double wall = r.whole.duration_s.count ? r.whole.duration_s.mean : std::nan("");
    h << "<table><tr><th>region</th><th>count/run</th><th>total/run</th><th>of wall</th><th>self/run</th>"
         "<th>busy cores</th><th>p50</th><th>p99</th><th>declared work/instance</th></tr>\n";
    for (const auto& [region, depth] : region_tree(r)) {
        const RecordedRegion& reg = *region;
        const auto& d = reg.measurement.duration_s;
        const double total = mean(reg.total_s_per_execution);
        std::string work = "-";
        if (reg.measurement.work)
            work = si(reg.measurement.work->ops, "op") + ", " + bytes(reg.measurement.work->compulsory_bytes);
        h << "<tr><td style=\"padding-left:" << 8 + 16 * depth << "px\""
          << (reg.model ? " class=\"model\"" : "") << ">" << xml_escape(reg.name)
          << "</td><td class=\"n\">" << count_text(static_cast<double>(reg.instances) / runs)
          << "</td><td class=\"n\">" << duration(total) << "</td><td class=\"n\">"
          << percent(reg.open_s_per_execution() / wall) << "</td><td class=\"n\">"
          << (reg.self_s ? duration(*reg.self_s) : "-") << "</td><td class=\"n\">"
          << xml_escape(busy_cores_text(r, reg)) << "</td><td class=\"n\">"
          << (d.count ? duration(d.median) : "-") << "</td><td class=\"n\">"
          << (d.count ? duration(d.p99) : "-") << "</td><td class=\"n\">" << xml_escape(work)
          << "</td></tr>\n";
    }
    h << "</table>\n";
}


}  // namespace

std::string render_html_report(const std::vector<RunRecord>& records, const std::vector<std::string>& names) {
    std::ostringstream h;
    h << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      // Nothing may be fetched: a page opened from a CI artifact store or offline must work.
      << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
         "img-src data:\">\n"
      << "<title>ceiling report</title><style>" << style << "</style></head><body>\n";
    h << "<h1>ceiling report</h1>\n";
    if (records.size() > 1) {
        std::ostringstream ranks;
        render_rank_summary(records, names, ranks);
        h << "<h2>Across records</h2><pre>" << xml_escape(ranks.str()) << "</pre>\n";
    }
    for (std::size_t i = 0; i < records.size(); ++i) {
        const auto& r = records[i];
        h << "<h2>" << xml_escape(names.at(i)) << "</h2>\n";
        if (r.kind == RecordKind::suite) {
            // A suite is its table, its comparisons and first moves, and the roofline: not a
            // run's wall time, regions and model share.
            if (const auto m = suite_machine_line(r); !m.empty())
                h << "<p>" << xml_escape(m) << "</p>\n";
            render_suite_table(r, h, true);
            std::ostringstream findings;
            render_suite_findings(r, findings);
            h << "<h2>Comparisons and first moves</h2>\n<pre class=\"findings\">" << xml_escape(findings.str())
              << "</pre>\n";
        } else {
            // The answer first; everything else a click away (below the roofline).
            std::ostringstream answer;
            render_run_answer(r, answer);
            h << "<pre class=\"answer\">" << xml_escape(answer.str()) << "</pre>\n";
        }
        h << "<h2>Roofline</h2>\n";
        if (r.machine_profile) {
            const auto pts = roofline_points(r);
            RooflineSvgOptions o;
            o.title = "Roofline: " + (r.machine_profile->host.cpu_model.empty() ? r.hostname : r.machine_profile->host.cpu_model);
            h << render_roofline_svg(*r.machine_profile, pts, o);
            if (pts.empty())
                h << "<p class=\"muted\">No region declares its work, so none is placed on the roofline "
                     "(see declared work in the documentation: \"name {ops=... bytes=...}\").</p>\n";
        } else {
            h << "<p class=\"muted\">No machine profile in this record: run <code>ceiling machine</code>, then "
                 "<code>ceiling report --profile FILE</code>.</p>\n";
        }
        if (r.kind != RecordKind::suite) {
            std::ostringstream summary;
            render_run_summary(r, summary);
            h << "<details><summary>Every finding, note and the system's evidence (the detailed "
                 "summary)</summary>\n<pre>"
              << xml_escape(summary.str()) << "</pre></details>\n";
            h << "<details><summary>Regions (" << r.regions.size() << ")</summary>\n";
            region_table(r, h);
            h << "</details>\n";
        }
    }
    h << "</body></html>\n";
    return h.str();
}

}  // namespace ceiling::output
