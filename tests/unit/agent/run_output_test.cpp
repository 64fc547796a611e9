// Renderers of run records: Chrome trace ordering and relative time, diff against noise,
// the roofline SVG and the HTML page, the time-series helpers.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "agent/run/sampler.hpp"
#include "agent/store/chrome_trace.hpp"
#include "agent/output/diff.hpp"
#include "agent/output/html_report.hpp"
#include "agent/output/roofline_svg.hpp"
#include "agent/output/run_summary.hpp"

namespace ceiling::output {
namespace {

TEST(ChromeTrace, RelativeSortedEnclosingFirst) {
    const std::int64_t origin = 1'700'000'000'000'000'000;  // 19 digits: doubles would round
    store::ChromeTrace t(origin);
    t.process(1, "prog");
    t.thread(1, 1, "main");
    t.complete(1, 1, "inner", "nvtx", origin + 2000, origin + 3000);
    t.complete(1, 1, "outer", "nvtx", origin + 2000, origin + 9001);
    t.counter(1, "cpu_cores (cores)", origin + 5000, {{"cpu_cores", 1.5}});
    const auto j = t.to_json();
    const auto& ev = j.at("traceEvents");
    std::vector<std::string> order;
    for (const auto& e : ev)
        if (e["ph"] == "X") order.push_back(e["name"]);
    ASSERT_EQ(order, (std::vector<std::string>{"outer", "inner"}));
    for (const auto& e : ev)
        if (e["name"] == "outer") {
            EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 2.0);
            EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 7.001);  // nanoseconds kept
        }
    EXPECT_EQ(ev.front()["ph"], "M");
}

RunRecord record_with(const std::string& region, std::vector<double> totals, std::vector<double> walls) {
    RunRecord r;
    r.command = {"prog"};
    r.whole.durations_s = walls;
    r.whole.duration_s = summarize(walls);
    RecordedRegion reg;
    reg.path = reg.name = region;
    reg.total_s_per_execution = totals;
    reg.instances = totals.size();
    reg.measurement.durations_s = totals;
    reg.measurement.duration_s = summarize(totals);
    r.regions.push_back(reg);
    return r;
}

// A run's roofline keeps its twelve longest regions with known work, each its own colour.
TEST(RooflinePoints, ARunKeepsItsTwelveLongestRegions) {
    RunRecord r = record_with("r0", {0.001}, {1.0});
    r.kind = RecordKind::run;
    r.regions.clear();
    for (int i = 0; i < 20; ++i) {
        RecordedRegion reg;
        reg.path = reg.name = "r" + std::to_string(i);
        reg.total_s_per_execution = {(i + 1) * 1e-3};
        reg.instances = 1;
        reg.measurement.durations_s = reg.total_s_per_execution;
        reg.measurement.duration_s = summarize(reg.total_s_per_execution);
        Work w;
        w.ops = 1e6;
        w.compulsory_bytes = 1e6;
        reg.measurement.work = w;
        r.regions.push_back(reg);
    }
    const auto pts = roofline_points(r);
    ASSERT_EQ(pts.size(), 12u);
    EXPECT_EQ(pts.front().label, "r19");
    EXPECT_EQ(pts.back().label, "r8");
    std::set<std::string> families;
    for (const auto& p : pts) families.insert(p.family);
    EXPECT_EQ(families.size(), 12u);
}

TEST(Diff, ChangesAreJudgedAgainstTheNoise) {
    const auto a = record_with("step", {1.00, 1.05, 0.95, 1.02, 0.98}, {2, 2, 2});
    const auto slower = record_with("step", {2.00, 2.05, 1.95, 2.02, 1.98}, {2, 2, 2});
    const auto same = record_with("step", {1.01, 1.06, 0.96, 1.03, 0.99}, {2, 2, 2});
    const auto d1 = diff_records(a, slower);
    ASSERT_EQ(d1.rows.size(), 2u);
    EXPECT_EQ(d1.rows[1].name, "step");
    EXPECT_EQ(d1.rows[1].change, Change::slower);
    EXPECT_NEAR(*d1.rows[1].ratio, 2.0, 0.01);
    EXPECT_EQ(diff_records(a, same).rows[1].change, Change::within_noise);
    EXPECT_EQ(diff_records(slower, a).rows[1].change, Change::faster);
    EXPECT_EQ(diff_records(a, a).rows[0].change, Change::within_noise);  // whole run: equal walls
    auto single = record_with("step", {1.0}, {2});
    EXPECT_EQ(diff_records(single, single).rows[1].change, Change::noise_unknown);
    auto other = record_with("other", {1.0, 1.0}, {2, 2});
    const auto d2 = diff_records(a, other);
    EXPECT_EQ(d2.rows[1].change, Change::only_before);
    EXPECT_EQ(d2.rows[2].change, Change::only_after);
}

TEST(Diff, BoundChangesAndBudgetFlips) {
    auto a = record_with("step", {1.0, 1.0}, {2, 2});
    auto b = a;
    Diagnosis da, db;
    da.bound = Bound::compute;
    db.bound = Bound::not_the_model;
    a.diagnosis = da;
    b.diagnosis = db;
    BudgetCheck pass;
    pass.name = "latency_p99_s";
    pass.outcome = BudgetOutcome::pass;
    BudgetCheck fail = pass;
    fail.outcome = BudgetOutcome::fail;
    a.budget_checks = {pass};
    b.budget_checks = {fail};
    const auto d = diff_records(a, b);
    EXPECT_EQ(d.rows[0].bound_before, "compute");
    EXPECT_EQ(d.rows[0].bound_after, "not_the_model");
    ASSERT_EQ(d.budget_flips.size(), 1u);
    EXPECT_EQ(d.budget_flips[0], "latency_p99_s: passed -> MISSED");
    std::ostringstream out;
    render_diff(d, "a.json", "b.json", out);
    EXPECT_NE(out.str().find("compute -> not_the_model"), std::string::npos) << out.str();

    // The two rows of not the model read apart: the model's share (the bound's first row) and
    // storage at its roof.
    auto c = b;
    c.diagnosis->diagnosis = "not the model (I/O bound)";
    b.diagnosis->diagnosis = "not the model (system bound)";
    const auto flipped = diff_records(b, c);
    EXPECT_EQ(flipped.rows[0].bound_before, "not_the_model");
    EXPECT_EQ(flipped.rows[0].bound_after, "not_the_model (I/O bound)");
}

MachineProfile profile() {
    MachineProfile p;
    ComputeRoof c;
    c.name = "fp32_fma256";
    c.threads = 2;
    c.ops_per_s = summarize({1e11});
    p.compute_roofs.push_back(c);
    BandwidthRoof b;
    b.level = "DRAM";
    b.threads = 2;
    b.bytes_per_s = summarize({2e10});
    p.bandwidth_roofs.push_back(b);
    return p;
}

TEST(RooflineSvg, DrawsRoofsAndEscapedPoints) {
    const std::string svg =
        render_roofline_svg(profile(), {RooflinePoint{"a<b & c", 1.0, 1e10, "a", "", {}, {}, {}},
                                        RooflinePoint{"unknown", std::nan(""), 1e9, "u", "", {}, {}, {}}});
    EXPECT_EQ(svg.rfind("<svg", 0), 0u);
    EXPECT_NE(svg.find("DRAM"), std::string::npos);
    EXPECT_NE(svg.find("fp32_fma256"), std::string::npos) << "compute roofs by the names verdicts use";
    EXPECT_NE(svg.find("a&lt;b &amp; c"), std::string::npos);
    EXPECT_EQ(svg.find("unknown"), std::string::npos);  // an unknown coordinate is not plotted
    EXPECT_EQ(std::count(svg.begin(), svg.end(), '<') - std::count(svg.begin(), svg.end(), '>'), 0);
}

// Readable with many points: every point numbered and listed beside the plot (labels never
// overprint), coloured by family and shaped by variant, with a dotted line up to the roof it
// was judged against; roofs named as the verdicts name them, with their value; the roofs'
// thread count said once.
TEST(RooflineSvg, NumberedPointsListedBesideThePlotWithTheRoofTheyWereJudgedAgainst) {
    std::vector<RooflinePoint> pts;
    for (int i = 0; i < 40; ++i)
        pts.push_back({"gemm/fp32/" + std::string(i % 2 ? "naive" : "optimized") + "/" + std::to_string(i),
                       0.5 + i, 1e9 * (i + 1), i < 20 ? "gemm" : "nms", i % 2 ? "naive" : "optimized",
                       i == 3 ? std::optional(9e10) : std::nullopt, i == 3 ? "fp32_fma256 at 1 thread: 4%" : "",
                       {}});
    RooflineSvgOptions o;
    o.title = "ceiling suite on host";
    o.threads = 2;
    const std::string svg = render_roofline_svg(profile(), pts, o);
    auto count = [&](const std::string& what) {
        std::size_t n = 0;
        for (auto at = svg.find(what); at != std::string::npos; at = svg.find(what, at + 1)) ++n;
        return n;
    };
    EXPECT_EQ(count("class=\"point-label\""), 40u);
    EXPECT_EQ(count("class=\"point\""), 40u);
    EXPECT_NE(svg.find(">40. gemm/fp32/naive/39<"), std::string::npos);
    EXPECT_EQ(count("(roofs at 2 threads)"), 2u) << "once in the title element, once drawn";
    EXPECT_EQ(count("threads) ("), 0u);
    EXPECT_EQ(count("class=\"judged\""), 2u) << "the dotted line and its cap, for the one judged point";
    EXPECT_NE(svg.find("judged against fp32_fma256 at 1 thread: 4%"), std::string::npos);
    EXPECT_NE(svg.find("<rect x="), std::string::npos) << "naive points are squares";
    EXPECT_NE(svg.find("fp32_fma256 100 Gop/s"), std::string::npos) << "a roof is labelled with its value";
    // Two families, two colours.
    EXPECT_NE(svg.find("fill=\"#e69f00\""), std::string::npos);
    EXPECT_NE(svg.find("fill=\"#56b4e9\""), std::string::npos);
    // The list sets the height: 40 rows do not fit in the default 460 px.
    EXPECT_EQ(svg.find("height=\"460"), std::string::npos);
}

TEST(HtmlReport, SelfContainedPage) {
    auto r = record_with("step <1>", {1.0, 1.1}, {2, 2.1});
    r.machine_profile = profile();
    const std::string html = render_html_report({r}, {"r.json"});
    EXPECT_NE(html.find("<svg"), std::string::npos);
    EXPECT_NE(html.find("step &lt;1&gt;"), std::string::npos);
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_EQ(html.find("https://"), std::string::npos);
}

TEST(RunSummary, ShowsRegionsAndRanks) {
    auto r = record_with("step", {1.0, 1.1}, {2, 2.1});
    std::ostringstream out;
    render_run_summary(r, out);
    EXPECT_NE(out.str().find("step"), std::string::npos);
    EXPECT_NE(out.str().find("wall time"), std::string::npos);
    auto slow = record_with("step", {3.0, 3.1}, {4, 4.1});
    slow.rank = 1;
    std::ostringstream ranks;
    render_rank_summary({r, slow}, {"a", "b"}, ranks);
    EXPECT_NE(ranks.str().find("slowest: b (rank 1)"), std::string::npos) << ranks.str();
    EXPECT_EQ(command_line({"prog", "a b", "it's"}), "prog 'a b' 'it'\\''s'");
}

// The busy-cores cell shows the cores a region held beside its mean only where it was judged
// at them (held_cores_ratio x the mean, at least one core).
TEST(RunSummary, BusyCoresShowTheCoresHeldWhereTheyJudgedIt) {
    RunRecord rec;
    RecordedRegion team;
    team.busy_cores = 1.34;
    team.peak_busy_cores = 1.98;
    EXPECT_EQ(busy_cores_text(rec, team), "1.34 (1.98 held)");
    team.peak_busy_cores = 1.45;  // below 1.15 x 1.34
    EXPECT_EQ(busy_cores_text(rec, team), "1.34");
    team.busy_cores.reset();
    EXPECT_EQ(busy_cores_text(rec, team), "-");
}

TEST(TimeSeries, RatesUseAWindowAndDecimationKeepsTheShape) {
    std::vector<measure::TreeSample> s;
    for (int i = 0; i <= 10; ++i) {
        measure::TreeSample x;
        x.t_ns = 1000 + i * 10'000'000LL;  // 10 ms apart
        x.cpu_s = 0.01 * (i / 2) * 2;      // ticks arrive in pairs: 20 ms of CPU every 20 ms
        x.rss_bytes = 1e6 * i;
        s.push_back(x);
    }
    const auto series = measure::series_from_samples(s, 1000, 0.05);
    const Series* cpu = nullptr;
    for (const auto& x : series)
        if (x.name == "cpu_cores") cpu = &x;
    ASSERT_NE(cpu, nullptr);
    for (std::size_t i = 5; i < cpu->values.size(); ++i) EXPECT_NEAR(cpu->values[i], 1.0, 0.21) << i;
    auto copy = series;
    measure::decimate(copy, 4);
    for (const auto& x : copy) EXPECT_LE(x.values.size(), 4u);
}

}  // namespace
}  // namespace ceiling::output
