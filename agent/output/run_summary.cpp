#include "agent/output/run_summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "agent/record_names.hpp"
#include "diagnosis/format.hpp"
#include "agent/output/op_summary.hpp"
#include "agent/output/table.hpp"
#include "diagnosis/process_evidence.hpp"
#include "diagnosis/regions.hpp"
#include "diagnosis/statistics.hpp"

namespace ceiling::output {

namespace {

// Counters that are peaks: combined over executions by max, never summed.
bool is_peak(const std::string& name) { return name.find("max_") == 0 || name.find("peak_") == 0; }

std::string quoted(const std::string& arg) {
    if (!arg.empty() && arg.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;#~!") == std::string::npos)
        return arg;
    std::string q = "'";
    for (char c : arg) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string runs_phrase(const RunRecord& r) {
    const auto timed = r.timed_executions().size();
    const auto counting = static_cast<std::size_t>(std::count_if(
        r.executions.begin(), r.executions.end(), [](const Execution& e) { return e.counting; }));
    const auto warm = r.executions.size() - timed - counting;
    std::string s = std::to_string(timed) + (timed == 1 ? " run" : " runs");
    if (warm) s += " after " + std::to_string(warm) + " warm-up" + (warm == 1 ? "" : "s");
    if (counting) s += ", then 1 counting the GPU kernels (not timed)";
    return s;
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string quantity(const std::string& name, double v) {
    if (ends_with(name, "_per_cpu_s")) return si(v, "/s of CPU time");
    if (ends_with(name, "_per_s")) return si(v, "/s");
    if (name.size() > 2 && name.compare(name.size() - 2, 2, "_s") == 0) return duration(v);
    if (name.find("bytes") != std::string::npos) return bytes(v);
    if (name.find("share") != std::string::npos || name.find("utilisation") != std::string::npos) return percent(v);
    std::string plain = si(v, "", 3);  // no unit: no space after the number
    while (!plain.empty() && plain.back() == ' ') plain.pop_back();
    return plain;
}

void render_one_diagnosis(const Diagnosis& d, std::ostream& out, const std::string& indent) {
    out << indent << (d.bound ? d.diagnosis : "bound unknown") << (d.bound ? "" : ": " + d.observation) << "\n";
    if (d.bound) out << indent << "  because " << d.observation << "\n";
    for (const auto& c : d.roofs)
        if (c.fraction)
            out << indent << "  "
                << (c.kind == RoofKind::compute
                        ? "compute " + c.roof
                        : c.level + " bandwidth" +
                              (c.kernel.empty() ? "" : " (" + c.kernel + " roof)"))
                << ": " << percent(*c.fraction) << " of roof ("
                << band_name(c.verdict)
                // Where the count came from, when no declaration gave it.
                << (c.source && *c.source != Source::analytic
                        ? "; counted by " + std::string(to_string(*c.source))
                        : std::string())
                << ")\n";
    if (d.model_share) {
        const auto& m = *d.model_share;
        out << indent << "  model regions: " << percent(m.share) << " of wall time"
            << (m.overlapping ? " (upper estimate: regions overlap across threads)" : "");
        if (m.wall_s > 0 && m.outside_regions_s > 0) out << "; in no region: " << percent(m.outside_regions_s / m.wall_s);
        out << "\n";
        for (const auto& t : m.top_non_model) {
            out << indent << "    not model: " << t.name << " " << duration(t.total_s) << " ("
                << percent(t.share) << ")";
            // The time in no region by where it lay: start-up, between regions, the end.
            if (t.name == outside_regions_name && m.before_regions_s && m.after_regions_s) {
                const double between =
                    std::max(0.0, t.total_s - *m.before_regions_s - *m.after_regions_s);
                out << ": " << duration(*m.before_regions_s) << " before the first region, "
                    << duration(between) << " between regions, " << duration(*m.after_regions_s)
                    << " after the last";
            }
            out << "\n";
        }
    }
    if (d.capacity)
        out << indent << "  footprint " << bytes(d.capacity->footprint_bytes) << " of " << bytes(d.capacity->capacity_bytes)
            << " " << d.capacity->against << " (" << percent(d.capacity->fraction) << ")\n";
    for (const auto& sig : d.system)
        if (sig.fired && sig.value)
            out << indent << "  " << sig.name << " " << quantity(sig.name, *sig.value) << " (threshold "
                << quantity(sig.name, sig.threshold)
                << (sig.qualifier && sig.qualifier_value
                        ? "; " + *sig.qualifier + " " + quantity(*sig.qualifier, *sig.qualifier_value)
                        : std::string())
                << "): " << sig.meaning << "\n";
    // An unknown bound's move is said only where nothing was compared with a roof (what to
    // measure, or what the region waited for); one whose work ran above its roof has notes.
    if ((d.bound || d.roofs.empty()) && !d.first_move.empty())
        out << indent << "  first move: " << d.first_move << "\n";
    for (const auto& f : d.findings) out << indent << "  note: " << f.detail << "\n";
}

void render_diagnosis(const RunRecord& r, std::ostream& out) {
    if (!r.diagnosis && r.region_diagnoses.empty()) return;
    // Verdicts taken while other work competed for the CPUs say so once, in the heading; the
    // run's note has the evidence, and the regions' copies of it are not repeated.
    const bool contended = r.diagnosis && contention_of(*r.diagnosis);
    out << "\nDiagnosis" << (contended ? " (taken under contention: see the contention note)" : "")
        << "\n";
    if (r.diagnosis) {
        Diagnosis run = *r.diagnosis;
        // Without whole-run counts the run's bound is unknown even where its regions were
        // judged: the line says so and points at the longest of them (the judge's stand-in),
        // so it does not read as ceiling having judged nothing.
        const RunAnswer& a = r.answer;
        if (!run.bound && a.stand_in && a.stand_in_kind == StandIn::longest_judged) {
            // Side by side in one process counted once; in several processes (a pool of
            // workers) the instances may still add up to more than the wall time.
            const auto share_of = [](const AnswerRegion& g) {
                return (g.wall_share > 1.0
                            ? "instances in several processes adding up to " + percent(g.wall_share)
                            : percent(g.wall_share)) +
                       " of wall time";
            };
            std::string longer;
            if (a.longer_unjudged)
                longer = "its longest region, " + a.longer_unjudged->path + " (" +
                         share_of(*a.longer_unjudged) + "), is not judged: " + a.longer_unjudged_why + "; ";
            const Diagnosis* judged = nullptr;
            for (const auto& v : r.region_diagnoses)
                if (v.path == a.stand_in->path) judged = &v.diagnosis;
            run.observation = "for the run as a whole (" + run.observation + "); " + longer +
                              "its longest judged region, " + a.stand_in->path + " (" +
                              share_of(*a.stand_in) + "), is " + (judged ? judged->diagnosis : "") +
                              " (below)";
            run.first_move.clear();  // the region's, below
        }
        render_one_diagnosis(run, out, "  ");
    }
    for (const auto& v : r.region_diagnoses) {
        if (const auto* reg = r.region(v.path); reg && diagnosis_summarised_by_ops(*reg)) continue;  // op summary
        out << "  region " << v.path << ": ";
        std::ostringstream one;
        Diagnosis d = v.diagnosis;
        if (contended) std::erase_if(d.findings, [](const Finding& f) { return f.kind == FindingKind::contention; });
        render_one_diagnosis(d, one, "  ");
        const std::string text = one.str();
        out << text.substr(2);  // the first line continues "region NAME: "
    }
    if (!r.machine_profile)
        out << "  (no machine profile: regions are not placed on the roofline; run `ceiling machine`)\n";
}

// The method's deliberate stop as the judge called it (RunAnswer::stop), with the next lever
// and how close the longest judged region ran to its roof, so the next person knows what is
// left.
void render_stop_line(const RunRecord& r, std::ostream& out) {
    const RunAnswer& a = r.answer;
    if (!a.stop) return;
    const std::string lever =
        a.next_lever ? std::string(to_string(a.next_lever->lever)) + " (" + a.next_lever->move + ")"
                     : "unknown (no diagnosis with a lever: declare the work of the regions)";
    const std::string left =
        a.headroom_region && a.headroom_fraction
            ? "; the longest judged region, " + a.headroom_region->path + ", runs at " +
                  percent(*a.headroom_fraction) + " of its " + a.headroom_roof + " roof"
            : "";
    const double stop = r.thresholds.stop_margin;
    out << "  ";
    switch (*a.stop) {
    case StopCall::missed: out << "a budget is missed: next lever " << lever << left << "\n"; break;
    case StopCall::unmeasured:
        out << "not every budget was measured: no decision to stop" << left << "\n";
        break;
    case StopCall::stop:
        out << "inside every budget with at least " << percent(*a.margin) << " margin (stop_margin "
            << percent(stop) << "): stop; spend the next lever, " << lever
            << ", only if a budget tightens" << left << "\n";
        break;
    case StopCall::thin_margin:
        out << "inside every budget, but with only " << percent(*a.margin) << " margin (under "
            << percent(stop) << ": thermal throttling or a year of features would break it): "
            << "next lever " << lever << left << "\n";
        break;
    }
}

void render_budgets(const RunRecord& r, std::ostream& out) {
    if (r.budget_checks.empty()) return;
    out << "\nBudgets\n";
    if (r.budgets && !r.budgets->because.empty())
        out << "  because " << r.budgets->because << "\n";
    else
        out << "  no 'because': a preference, not yet a budget (say why missing it breaks the "
               "product: --because, or \"because\" in the budget file)\n";
    if (r.budgets && r.budgets->price_per_hour)
        out << "  price " << g3(*r.budgets->price_per_hour) << " per hour of this machine\n";
    for (const auto& c : r.budget_checks) {
        auto value = [&](double v) { return c.name == "cost_per_1000" ? g3(v) : quantity(c.name, v); };
        out << "  " << (c.region.empty() ? "" : c.region + ": ") << c.name << ": budget "
            << value(c.budget) << ", actual "
            << (c.actual ? value(*c.actual) : std::string("not measured")) << ": "
            << (c.outcome == BudgetOutcome::pass ? "pass" : c.outcome == BudgetOutcome::fail ? "FAIL" : "unknown");
        if (c.margin) out << " (margin " << percent(*c.margin) << ")";
        if (!c.note.empty()) out << "; " << c.note;
        out << "\n";
    }
    render_stop_line(r, out);
}

}  // namespace

std::string command_line(const std::vector<std::string>& argv) {
    std::string s;
    for (const auto& a : argv) s += (s.empty() ? "" : " ") + quoted(a);
    return s;
}

std::optional<double> counter_total(const RunRecord& record, const std::string& name) {
    std::optional<double> total;
    for (const Execution* e : record.timed_executions())
        for (const auto& c : e->counters)
            if (c.name == name)
                total = !total ? c.value : is_peak(name) ? std::max(*total, c.value) : *total + c.value;
    return total;
}

int region_depth(const RunRecord& record, const RecordedRegion& region) {
    int depth = 0;
    std::string parent = region.parent;
    while (!parent.empty() && depth < 64) {
        const RecordedRegion* p = record.region(parent);
        ++depth;
        if (!p) break;
        parent = p->parent;
    }
    return depth;
}

std::vector<RegionRow> region_tree(const RunRecord& record) {
    std::map<std::string, std::vector<const RecordedRegion*>> children;
    std::vector<const RecordedRegion*> roots;
    for (const auto& reg : record.regions) {
        if (!reg.parent.empty() && reg.parent != reg.path && record.region(reg.parent))
            children[reg.parent].push_back(&reg);
        else
            roots.push_back(&reg);
    }
    std::vector<RegionRow> rows;
    std::set<const RecordedRegion*> seen;  // a damaged record's parent cycle ends here
    std::vector<RegionRow> pending;
    for (auto it = roots.rbegin(); it != roots.rend(); ++it) pending.push_back({*it, 0});
    while (!pending.empty()) {
        const RegionRow row = pending.back();
        pending.pop_back();
        if (!seen.insert(row.region).second) continue;
        rows.push_back(row);
        const auto c = children.find(row.region->path);
        if (c == children.end()) continue;
        for (auto it = c->second.rbegin(); it != c->second.rend(); ++it) pending.push_back({*it, row.depth + 1});
    }
    return rows;
}

namespace {

// What the summary's sections share: the record, its wall time, its timed executions and how
// many there were (1 when none, to divide by).
struct SummaryContext {
    const RunRecord& r;
    const Summary& wall;
    std::vector<const Execution*> timed;
    double n;
};

// The command, how it ended, and its wall time over the timed runs.
void render_heading(const RunRecord& r, std::ostream& out) {
    const std::string what = r.kind == RecordKind::suite ? "ceiling suite" : "ceiling run";
    out << what << ": " << command_line(r.command);
    if (r.rank) out << "  (rank " << *r.rank << (r.world_size ? " of " + std::to_string(*r.world_size) : "") << ")";
    out << "\n";
    if (r.kind == RecordKind::run) out << "  ended: " << r.end.message << "\n";
    if (r.partial) out << "  PARTIAL: " << r.partial_reason << "\n";

    const auto& wall = r.whole.duration_s;
    if (wall.count > 0) {
        out << "  wall time: p50 " << duration(wall.median) << ", p99 " << duration(wall.p99);
        if (wall.count > 1) out << ", spread " << percent(wall.rel_spread);
        out << "  (" << runs_phrase(r) << ")\n";
    }
}

void render_cpu(const SummaryContext& c, std::ostream& out) {
    const RunRecord& r = c.r;
    const double n = c.n;
    const auto user = counter_total(r, "user_s"), sys = counter_total(r, "system_s");
    if (!(user && sys && c.wall.count > 0)) return;
    const double busy = (*user + *sys) / n;
    out << "  CPU: user " << duration(*user / n) << ", system " << duration(*sys / n)
        << " per run; " << fixed(busy / c.wall.mean, 2) << " cores busy on average";
    // Of how many: one busy core reads differently on a host of two and of sixty-four.
    // And what it was allowed of them: its affinity mask's CPUs, its control group's quota.
    const auto quota = counter_total(r, "cpu_quota_cpus");
    const auto allowed = counter_total(r, "affinity_cpus");
    if (const int cpus = r.machine_profile ? r.machine_profile->host.logical_cpus : 0; cpus > 0)
        out << " (of " << cpus << " CPUs"
            << (allowed && *allowed / n < cpus
                    ? ", " + fixed(*allowed / n, 0) + " allowed by its affinity mask"
                    : std::string())
            << (quota ? ", a CPU quota of " + fixed(*quota / n, 2) : std::string()) << ")";
    // Beside the busy cores, how many threads shared the work: 4 sharing 1 busy core took
    // turns (the thread_concurrency rule).
    if (const auto working = counter_total(r, "working_threads"))
        out << "; its CPU time shared by " << fixed(*working / n, 1) << " threads (per "
            << fixed(thread_window_s, 2) << " s)";
    out << "\n";
}

// Which of its processes did the work (a pipeline's busy stage, while the others waited on
// it): those of the first timed run with a twentieth of its CPU time or more, at most four.
void render_busy_processes(const SummaryContext& c, std::ostream& out) {
    const auto& timed = c.timed;
    if (timed.empty() || timed.front()->processes.size() <= 1) return;
    const auto& ps = timed.front()->processes;
    double total = 0;
    for (const auto& p : ps) total += p.cpu_s;
    std::string listed;
    int shown = 0;
    for (const auto& p : ps) {
        if (shown == 4 || !(total > 0) || p.cpu_s < 0.05 * total) break;
        listed += (shown++ ? ", " : "") + p.name + " (pid " + std::to_string(p.pid) + ") " +
                  duration(p.cpu_s) +
                  (p.seen_s > 0 ? " (" + fixed(p.cpu_s / p.seen_s, 2) + " cores over the " +
                                      duration(p.seen_s) + " it was seen)"
                                : std::string());
    }
    if (!listed.empty())
        out << "  processes (CPU time at the last look"
            << (timed.size() > 1 ? ", first run" : "") << "; " << ps.size()
            << " seen): " << listed << "\n";
}

// The program's own peak memory, never ceiling's (max_rss_bytes of older records is
// wait4's, which includes it): largest process, then the whole tree when it differs.
void render_memory(const SummaryContext& c, std::ostream& out) {
    const RunRecord& r = c.r;
    const auto own = counter_total(r, "peak_rss_bytes"), tree = counter_total(r, "peak_tree_rss_bytes");
    if (!(own || tree)) return;
    auto lower_bound = [&](const char* name) {
        for (const Execution* e : c.timed)
            for (const auto& v : e->counters)
                if (v.name == name && v.low_confidence) return std::string("at least ");
        return std::string();
    };
    out << "  memory: peak resident ";
    if (own) out << lower_bound("peak_rss_bytes") << bytes(*own) << " (largest process)";
    if (tree && (!own || std::abs(*tree - *own) > 0.01 * *own))
        out << (own ? ", " : "") << lower_bound("peak_tree_rss_bytes") << bytes(*tree) << " (process tree, sampled)";
    // Where the sampler's is a lower bound, what its processes that record ranges read of
    // their own peak as they exited, where higher (the kernel's counts of resident pages
    // are approximate by a few hundred KiB, so two reads of one peak may differ that much).
    if (const auto at_exit = counter_total(r, "peak_rss_at_exit_bytes");
        at_exit && own && *at_exit > *own && !lower_bound("peak_rss_bytes").empty())
        out << "; " << bytes(*at_exit) << " (its processes that record ranges, as they exited)";
    out << "\n";
}

// Whole-run I/O per run: what storage saw, and what the read/write calls moved.
void render_io(const SummaryContext& c, std::ostream& out) {
    const RunRecord& r = c.r;
    const auto& wall = c.wall;
    const double n = c.n;
    const auto storage_read = counter_total(r, "storage_read_bytes"), storage_write = counter_total(r, "storage_write_bytes");
    const auto call_read = counter_total(r, "read_call_bytes"), call_write = counter_total(r, "write_call_bytes");
    // Each direction's rate beside the storage roof `machine` measured, when it moved at
    // least 1 MiB a run (a few pages of a library are no rate to judge).
    const auto against_roof = [&](double amount, bool read) -> std::string {
        if (!(amount / n >= 1 << 20) || !(wall.mean > 0) || !r.machine_profile ||
            !r.machine_profile->storage)
            return "";
        const auto& st = *r.machine_profile->storage;
        const double roof = read ? st.read_roof_bytes_per_s() : st.write_roof_bytes_per_s();
        const double rate = amount / n / wall.mean;
        const std::string of_roof =
            percent(rate / roof) + " of the storage " + (read ? "read" : "write") + " roof";
        // Past the roof: counted as the pages were dirtied, faster than storage takes them.
        return " (" + si(rate, "B/s") + ", " + of_roof +
               (!read && rate > storage_above_roof * roof
                    ? ": the page cache took it, to write back later"
                    : "") +
               ")";
    };
    // How many calls moved those bytes, where /proc counted them: their mean size says
    // whether the program buffers.
    const auto in_calls = [&](const char* name) -> std::string {
        const auto calls = counter_total(r, name);
        if (!calls) return "";
        const double per_run = *calls / n;
        return " in " + (per_run < 1000 ? count_text(per_run) : si(per_run, "", 3)) + " " +
               (per_run == 1 ? "call" : "calls");
    };
    if (storage_read && storage_write && call_read && call_write)
        out << "  I/O: storage " << bytes(*storage_write / n) << " written"
            << against_roof(*storage_write, false) << ", " << bytes(*storage_read / n) << " read"
            << against_roof(*storage_read, true) << "; read/write calls " << bytes(*call_write / n)
            << " written" << in_calls("write_calls") << ", " << bytes(*call_read / n) << " read"
            << in_calls("read_calls") << " (per run)\n";
}

void render_switches_and_faults(const SummaryContext& c, std::ostream& out) {
    const RunRecord& r = c.r;
    const double n = c.n;
    const auto vcs = counter_total(r, "voluntary_context_switches");
    const auto ics = counter_total(r, "involuntary_context_switches");
    const auto minf = counter_total(r, "minor_faults"), majf = counter_total(r, "major_faults");
    if (!(vcs && ics && minf && majf && c.wall.count > 0)) return;
    const double secs = c.wall.mean * n;
    out << "  context switches: " << si((*vcs + *ics) / secs, "/s") << " ("
        << si(*vcs / secs, "/s") << " voluntary";
    // ceiling's sampler wakes on the program's CPUs: its share of the preemptions is said.
    if (const auto ours = counter_total(r, "observer_wakeups"); ours && *ours > 0)
        out << "; ceiling's own wakeups " << si(*ours / secs, "/s")
            << ", each may have preempted it once";
    out << "); page faults: " << si((*minf + *majf) / secs, "/s") << " (" << fixed(*majf / n, 0)
        << " major per run)";
    // Threads and processes started, where as many as the rule judges (a thread per task).
    if (const auto started = counter_total(r, "host_tasks_started");
        started && *started / n >= r.thresholds.tasks_started_min)
        out << "; threads and processes started: " << si(*started / secs, "/s")
            << " (host-wide)";
    out << "\n";
}

// Where its threads waited off a CPU (the scheduler's blocked time, by the system call each
// was seen waiting in): the kinds of a twentieth of the wall time or more, largest first.
void render_blocked(const SummaryContext& c, std::ostream& out) {
    const auto& wall = c.wall;
    const double n = c.n;
    if (!(wall.count > 0 && wall.mean > 0)) return;
    std::vector<std::pair<double, std::size_t>> kinds;
    for (std::size_t k = 0; k < collectors::wait_kind_count; ++k)
        if (const auto s = counter_total(
                c.r, waiting_counter(static_cast<collectors::WaitKind>(k)));
            s && *s / n >= 0.05 * wall.mean)
            kinds.emplace_back(*s / n, k);
    std::sort(kinds.rbegin(), kinds.rend());
    if (kinds.empty()) return;
    out << "  blocked (thread time per run, by what it waited in): ";
    for (std::size_t i = 0; i < kinds.size(); ++i) {
        // Threads waiting side by side (a pool parked on a condition variable) read as
        // how many at once, not as thousands of per cent.
        const double at_once = kinds[i].first / wall.mean;
        out << (i ? ", " : "") << collectors::wait_kind_labels[kinds[i].second] << " "
            << duration(kinds[i].first) << " ("
            << (at_once > 1.5 ? fixed(at_once, 1) + " threads at once on average"
                              : percent(at_once) + " of wall")
            << ")";
    }
    out << "\n";
}

// What recording the program's NVTX ranges cost it: in its wall time (and, for the half
// of each range's cost between its clock reads, in its regions' times).
void render_recording_cost(const SummaryContext& c, std::ostream& out) {
    const RunRecord& r = c.r;
    const double n = c.n;
    const auto events = counter_total(r, "nvtx_events");
    if (!(events && *events > 0)) return;
    out << "  ceiling's own time in the program: ";
    if (const auto rec = counter_total(r, "nvtx_recording_s"); rec && c.wall.count > 0) {
        out << "~" << duration(*rec / n) << " per run (" << percent(*rec / n / c.wall.mean, 1)
            << " of wall time) recording " << count_text(*events / n)
            << " events (two per NVTX range), at the cost the program timed at its first "
               "NVTX call (a floor: the caches it disturbs are not counted)";
        // Where timing that cost is a good part of it (few ranges, several processes).
        if (const auto timing = counter_total(r, "nvtx_timing_cost_s");
            timing && *timing >= 0.25 * *rec)
            out << "; " << duration(*timing / n)
                << " of it timing that cost, once in each process that records";
        out << "\n";
    } else
        out << "recording " << count_text(*events / n)
            << " NVTX events per run, at a cost not timed\n";
}

// "Where the time went": a row per region, nested under its parent.
void render_region_table(const SummaryContext& c, std::ostream& out) {
    const RunRecord& r = c.r;
    const auto& wall = c.wall;
    const double n = c.n;
    if (r.regions.empty()) {
        if (r.kind == RecordKind::run)
            out << "\nNo NVTX regions recorded (annotate with NVTX ranges to see where the time goes).\n";
        return;
    }
    out << "\nWhere the time went (" << (r.kind == RecordKind::suite ? "kernels" : "NVTX regions")
        << ", per run)\n";
    TextTable t;
    t.column("region")
        .column("count", TextTable::Align::right)
        .column("total", TextTable::Align::right)
        .column("of wall", TextTable::Align::right)
        .column("self", TextTable::Align::right)
        .column("busy cores", TextTable::Align::right)
        .column("p50", TextTable::Align::right)
        .column("p99", TextTable::Align::right)
        .column("declared rate", TextTable::Align::right);
    for (const auto& [region, depth] : region_tree(r)) {
        const RecordedRegion& reg = *region;
        if (summarised_by_ops(reg)) continue;  // in the op summary (op_summary.hpp)
        const double total = mean(reg.total_s_per_execution);
        const auto& d = reg.measurement.duration_s;
        std::string label(static_cast<std::size_t>(2 * depth), ' ');
        label += reg.name + (reg.model ? " [model]" : "") + (reg.unclosed ? " [unclosed]" : "");
        std::string rate = "-";
        if (reg.measurement.work && d.count > 0 && total > 0) {
            // Per second open: instances side by side did their work at once.
            const double per_run_instances = static_cast<double>(reg.instances) / n;
            const double open = reg.open_s_per_execution();
            const Work& w = *reg.measurement.work;
            if (w.ops > 0)
                rate = si(w.ops * per_run_instances / open, "op/s");
            else if (w.compulsory_bytes > 0)
                rate = si(w.compulsory_bytes * per_run_instances / open, "B/s");
        }
        const double per_run = static_cast<double>(reg.instances) / n;
        t.row({label, count_text(per_run), duration(total),
               wall.count ? percent(reg.open_s_per_execution() / wall.mean) : "-",
               reg.self_s ? duration(*reg.self_s) : "-", busy_cores_text(r, reg),
               d.count ? duration(d.median) : "-", d.count ? duration(d.p99) : "-", rate});
    }
    t.render(out);
    if (!r.model_time_s_per_execution.empty() && wall.count > 0) {
        out << "  model regions (" << r.options.model_regions.value_or("") << "): "
            << percent(mean(r.model_time_s_per_execution) / wall.mean) << " of wall time; "
            << "any region: " << percent(mean(r.region_time_s_per_execution) / wall.mean) << "\n";
    }
}

}  // namespace

void render_run_summary(const RunRecord& r, std::ostream& out) {
    render_heading(r, out);
    // System facts: per timed execution, from OS accounting.
    auto timed = r.timed_executions();
    const double n = timed.empty() ? 1.0 : static_cast<double>(timed.size());
    const SummaryContext c{r, r.whole.duration_s, std::move(timed), n};
    render_cpu(c, out);
    render_busy_processes(c, out);
    render_memory(c, out);
    render_io(c, out);
    render_switches_and_faults(c, out);
    render_blocked(c, out);
    render_recording_cost(c, out);
    render_region_table(c, out);

    render_op_summary(r, out);
    render_diagnosis(r, out);
    render_budgets(r, out);
    for (const auto& note : r.notes)
        if (!note.starts_with(no_cuda_driver_note)) out << "note: " << note << "\n";
}

std::string busy_cores_text(const RunRecord& record, const RecordedRegion& reg) {
    if (!reg.busy_cores) return "-";
    if (const auto below = reg.with_descendants_cores())
        return fixed(*below, 2) + " (" + fixed(*reg.descendant_busy_cores, 2) + " in children)";
    std::string text = fixed(*reg.busy_cores, 2);
    if (const auto held = reg.held_cores(record.thresholds, usable_cpus(record)))
        text += " (" + fixed(*held, 2) + " held)";
    return text;
}

void render_rank_summary(const std::vector<RunRecord>& records, const std::vector<std::string>& names,
                         std::ostream& out) {
    out << "Across " << records.size() << " records\n";
    TextTable t;
    t.column("record").column("rank", TextTable::Align::right).column("host")
        .column("wall p50", TextTable::Align::right).column("wall p99", TextTable::Align::right)
        .column("ended");
    double slowest = -1, fastest = std::numeric_limits<double>::infinity();
    std::size_t slowest_i = 0;
    for (std::size_t i = 0; i < records.size(); ++i) {
        const auto& r = records[i];
        const auto& w = r.whole.duration_s;
        t.row({names.at(i), r.rank ? std::to_string(*r.rank) : "-", r.hostname,
               w.count ? duration(w.median) : "-", w.count ? duration(w.p99) : "-", r.end.message});
        if (w.count) {
            if (w.median > slowest) {
                slowest = w.median;
                slowest_i = i;
            }
            fastest = std::min(fastest, w.median);
        }
    }
    t.render(out);
    if (slowest > 0) {
        const auto& s = records[slowest_i];
        out << "  slowest: " << names[slowest_i] << (s.rank ? " (rank " + std::to_string(*s.rank) + ")" : "")
            << ", " << duration(slowest) << "; spread across records " << percent(slowest / fastest - 1)
            << " (slowest / fastest - 1)\n";
    }
    // Per region: which record spends the most time in it, and by how much more.
    std::vector<std::string> paths;
    std::set<std::string> seen;
    for (const auto& r : records)
        for (const auto& reg : r.regions)
            if (seen.insert(reg.path).second) paths.push_back(reg.path);
    if (paths.empty()) return;
    out << "\nRegions across records (time per run)\n";
    TextTable rt;
    rt.column("region").column("slowest", TextTable::Align::right).column("in")
        .column("fastest", TextTable::Align::right).column("spread", TextTable::Align::right);
    for (const auto& path : paths) {
        double hi = -1, lo = std::numeric_limits<double>::infinity();
        std::size_t hi_i = 0;
        for (std::size_t i = 0; i < records.size(); ++i) {
            const RecordedRegion* reg = records[i].region(path);
            if (!reg) continue;
            const double v = mean(reg->total_s_per_execution);
            if (v > hi) {
                hi = v;
                hi_i = i;
            }
            lo = std::min(lo, v);
        }
        rt.row({path, duration(hi), names[hi_i], duration(lo), lo > 0 ? percent(hi / lo - 1) : "-"});
    }
    rt.render(out);
}

}  // namespace ceiling::output
