// `ceiling report`: re-rendering records written by `run` and by `suite`, re-judging with
// another profile, several ranks, the HTML page (in headless Chromium where installed), and
// one-line errors for bad records.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "agent/store/profile_store.hpp"
#include "tests/integration/run_support.hpp"

namespace ceiling::testing {
namespace {

// A small profile: one compute roof and two bandwidth roofs at one thread.
MachineProfile tiny_profile() {
    MachineProfile p;
    p.created_at = "2026-01-01T00:00:00Z";
    p.host.hostname = "test";
    p.host.cpu_model = "Test CPU";
    p.host.logical_cpus = 2;
    p.host.memory_bytes = 8ull << 30;
    ComputeRoof c;
    c.name = "fp32_fma256";
    c.threads = 1;
    c.ops_per_s = summarize({5e10, 5.1e10, 4.9e10});
    p.compute_roofs.push_back(c);
    for (const auto& [level, bw] : {std::pair{"L1", 2e11}, std::pair{"DRAM", 1.5e10}}) {
        BandwidthRoof b;
        b.level = level;
        b.kernel = "read";
        b.threads = 1;
        b.bytes_per_s = summarize({bw, bw, bw});
        p.bandwidth_roofs.push_back(b);
    }
    return p;
}

// A suite-style record: kernels with analytic work, as `ceiling suite` writes them.
RunRecord suite_record(double gemm_s) {
    RunRecord r;
    r.kind = RecordKind::suite;
    r.command = {"ceiling", "suite"};
    r.hostname = "test";
    r.machine_profile = tiny_profile();
    RecordedRegion k;
    k.kind = RegionKind::kernel;
    k.path = k.name = "gemm/blocked/512";
    k.instances = 5;
    Work w;
    w.ops = 2.0 * 512 * 512 * 512;
    w.compulsory_bytes = 3.0 * 512 * 512 * 4;
    w.working_set_bytes = w.compulsory_bytes;
    k.measurement.name = k.path;
    k.measurement.work = w;
    k.measurement.durations_s = {gemm_s, gemm_s * 1.01, gemm_s * 0.99, gemm_s, gemm_s * 1.005};
    k.measurement.duration_s = summarize(k.measurement.durations_s);
    k.total_s_per_execution = {};
    r.regions.push_back(k);
    r.whole.name = "suite";
    return r;
}

TEST(Report, RerendersARunRecord) {
    TempDir dir;
    ASSERT_EQ(ceiling_run(dir / "r.json", {"-q"}, {run_target, "busy", "0.05"}).exit_code, 0);
    const auto r = run_ceiling({"report", "--detail", (dir / "r.json").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("ceiling run:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("wall time"), std::string::npos) << r.out;
}

TEST(Report, RejudgesASuiteRecordAgainstAnotherProfile) {
    TempDir dir;
    store::save_run_record(suite_record(0.02), dir / "suite.json");
    store::save_profile(tiny_profile(), dir / "profile.json");
    const auto r = run_ceiling({"report", (dir / "suite.json").string(), "--profile", (dir / "profile.json").string(),
                                "--threshold", "near_roof=0.5"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("gemm/blocked/512"), std::string::npos) << r.out;
    // Judged: 27% of the one compute roof, near neither roof, so latency bound with its move.
    EXPECT_NE(r.out.find("latency bound: "), std::string::npos) << r.out;
}

TEST(Report, SeveralRanksAreSummarisedAcross) {
    TempDir dir;
    for (const auto& [rank, secs] : {std::pair{"0", "0.05"}, std::pair{"1", "0.15"}})
        ASSERT_EQ(ceiling_run(dir / "job.json", {"-q"}, {run_target, "sleep", secs}, {std::string("PMI_RANK=") + rank})
                      .exit_code,
                  0);
    const auto r = run_ceiling({"report", (dir / "job.rank0.json").string(), (dir / "job.rank1.json").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("Across 2 records"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("slowest: " + (dir / "job.rank1.json").string()), std::string::npos) << r.out;
}

TEST(Report, BadRecordsAreOneLineErrorsNamingTheFile) {
    TempDir dir;
    store::save_run_record(suite_record(0.02), dir / "good.json");
    const std::string good = slurp(dir / "good.json");
    std::ofstream(dir / "truncated.json") << good.substr(0, good.size() / 2);
    std::ofstream(dir / "text.json") << "this is not JSON\n";
    std::ofstream(dir / "schema.json") << R"({"schema_version": 99, "kind": "run"})";
    std::ofstream(dir / "other.json") << R"({"traceEvents": []})";
    for (const char* name : {"truncated.json", "text.json", "schema.json", "other.json", "missing.json"}) {
        const auto path = (dir / name).string();
        const auto r = run_ceiling({"report", path});
        EXPECT_EQ(r.exit_code, 2) << name;
        EXPECT_NE(r.err.find(path), std::string::npos) << name << ": " << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << name << ": " << r.err;
    }
}

TEST(Report, HtmlIsSelfContained) {
    TempDir dir;
    store::save_run_record(suite_record(0.02), dir / "suite.json");
    const auto r = run_ceiling({"report", (dir / "suite.json").string(), "--html", (dir / "r.html").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string html = slurp(dir / "r.html");
    EXPECT_NE(html.find("<svg"), std::string::npos);
    EXPECT_NE(html.find("gemm/blocked/512"), std::string::npos);
    for (const char* fetch : {"<script", "<link", "src=", "url(", "@import", "https://"})
        EXPECT_EQ(html.find(fetch), std::string::npos) << fetch;
}

// Requests a page made, from Chromium's NetLog: URL_REQUEST_START_JOB events other than
// the browser's own background traffic (initiator "not an origin") and file:// loads.
std::vector<std::string> page_requests(const std::filesystem::path& netlog) {
    const auto j = nlohmann::json::parse(slurp(netlog));
    const int start_job = j.at("constants").at("logEventTypes").at("URL_REQUEST_START_JOB");
    std::vector<std::string> urls;
    for (const auto& e : j.at("events")) {
        if (e.value("type", -1) != start_job || !e.contains("params")) continue;
        const auto& p = e["params"];
        const std::string url = p.value("url", ""), initiator = p.value("initiator", "");
        if (url.empty() || url.rfind("file:", 0) == 0 || url.rfind("data:", 0) == 0 || initiator == "not an origin") continue;
        urls.push_back(url);
    }
    return urls;
}

// The headless browser the HTML tests render with; empty where none is installed.
std::string chromium_path() {
    for (const char* c : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
        if (access(c, X_OK) == 0) return c;
    return "";
}

// Headless Chromium: no console errors, no requests from the page (its NetLog), and a
// screenshot that differs from a blank page's. A page that breaks both rules checks that
// the checks see what they look for.
TEST(Report, HtmlRendersInHeadlessChromium) {
    const std::string chromium = chromium_path();
    if (chromium.empty()) GTEST_SKIP() << "no chromium (scripts/setup installs the Debian package)";
    TempDir dir;
    ASSERT_EQ(ceiling_run(dir / "r.json", {"-q"}, {run_target, "busy", "0.05"}).exit_code, 0);
    store::save_run_record(suite_record(0.02), dir / "suite.json");
    ASSERT_EQ(run_ceiling({"report", (dir / "r.json").string(), (dir / "suite.json").string(), "--html",
                           (dir / "r.html").string()})
                  .exit_code,
              0);
    std::ofstream(dir / "blank.html") << "<!DOCTYPE html><html><body></body></html>\n";
    std::ofstream(dir / "bad.html") << "<!DOCTYPE html><html><body><img src=\"http://example.invalid/x.png\">"
                                       "<script>console.error('boom')</script></body></html>\n";
    auto render = [&](const std::string& name) {
        const auto r = run_process({chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                    "--no-first-run", "--disable-extensions", "--disable-background-networking",
                                    "--enable-logging=stderr", "--v=0",
                                    "--user-data-dir=" + (dir / ("profile-" + name)).string(),
                                    "--log-net-log=" + (dir / (name + ".netlog")).string(),
                                    "--window-size=1200,1400", "--screenshot=" + (dir / (name + ".png")).string(),
                                    "file://" + (dir / (name + ".html")).string()});
        return r.err;
    };
    const std::string report = render("r");
    ASSERT_TRUE(std::filesystem::exists(dir / "r.png")) << report;
    render("blank");
    const std::string bad = render("bad");
    // Console messages are logged as "CONSOLE"; errors and CSP violations among them.
    EXPECT_NE(bad.find("CONSOLE"), std::string::npos) << "the console check sees nothing: " << bad;
    EXPECT_EQ(page_requests(dir / "bad.netlog").size(), 1u) << "the request check sees nothing";
    for (const char* problem : {"CONSOLE", "Refused to", "Uncaught"})
        EXPECT_EQ(report.find(problem), std::string::npos) << report;
    const auto requests = page_requests(dir / "r.netlog");
    EXPECT_TRUE(requests.empty()) << "the report fetched " << requests.front();
    const auto size = std::filesystem::file_size(dir / "r.png");
    const auto blank = std::filesystem::file_size(dir / "blank.png");
    EXPECT_GT(size, 2 * blank) << "screenshot looks blank (" << size << " vs blank " << blank << " bytes)";
}

// The pages as a browser builds them (headless Chromium's DOM, not the file's text): a suite
// page is the suite's table (%compute, %memory, bound, verdict per kernel), its comparisons
// and first moves and the roofline, with nothing of a run's layout; a run page's counts are
// whole numbers where they are.
TEST(Report, SuiteAndRunPagesHaveTheirOwnLayoutInTheDom) {
    const std::string chromium = chromium_path();
    if (chromium.empty()) GTEST_SKIP() << "no chromium (scripts/setup installs the Debian package)";
    TempDir dir;
    store::save_run_record(suite_record(0.02), dir / "suite.json");
    ASSERT_EQ(run_ceiling({"report", (dir / "suite.json").string(), "--html", (dir / "s.html").string()}).exit_code, 0);
    ASSERT_EQ(ceiling_run(dir / "r.json", {"-q", "-r", "3"}, {run_target, "busy", "0.02"}).exit_code, 0);
    ASSERT_EQ(run_ceiling({"report", (dir / "r.json").string(), "--html", (dir / "r.html").string()}).exit_code, 0);
    auto dom = [&](const std::string& page) {
        return run_process({chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                            "--disable-extensions", "--user-data-dir=" + (dir / ("profile-" + page)).string(),
                            "--dump-dom", "file://" + (dir / page).string()})
            .out;
    };
    const std::string suite = dom("s.html");
    ASSERT_NE(suite.find("<table class=\"suite\">"), std::string::npos) << suite;
    for (const char* heading : {"<th>%compute</th>", "<th>%memory</th>", "<th>bound</th>", "<th>verdict</th>"})
        EXPECT_NE(suite.find(heading), std::string::npos) << heading;
    EXPECT_NE(suite.find("<td>gemm/blocked/512</td>"), std::string::npos) << "one row per case";
    EXPECT_NE(suite.find("First moves"), std::string::npos);
    EXPECT_NE(suite.find("class=\"point\""), std::string::npos) << "the kernel is on the roofline";
    for (const char* run_only : {"wall time p50", "(0 runs)", "[model]", "<summary>Regions ("})
        EXPECT_EQ(suite.find(run_only), std::string::npos) << run_only << " on a suite page";

    const std::string run = dom("r.html");
    // The answer first, then the roofline, then the details a click away.
    const auto answer = run.find("<pre class=\"answer\">"), roofline = run.find("<h2>Roofline</h2>"),
               details = run.find("<details>"), regions = run.find("<summary>Regions (");
    ASSERT_NE(answer, std::string::npos) << run;
    ASSERT_NE(regions, std::string::npos) << run;
    EXPECT_LT(answer, roofline);
    EXPECT_LT(roofline, details);
    EXPECT_NE(run.find("Run:   ", answer), std::string::npos) << "the verdict in the answer";
    EXPECT_NE(run.find("wall time", details), std::string::npos) << "the detailed summary below";
    EXPECT_EQ(run.find(".0</td>"), std::string::npos) << "a whole count printed with a decimal";
}

// The run page's roofline as Chromium lays it out: a script added to a copy of the page
// (without its CSP, which forbids scripts) measures the rendered boxes: at most 12 points in
// distinct colours, every legend name whole and inside the picture, and no label (roof,
// point number, legend) overprinting another. Fourteen regions with long names and work at
// intensities a decade apart, two of them roofs' labels' neighbours.
TEST(Report, RooflineLabelsNeitherClipNorOverprintInChromium) {
    const std::string chromium = chromium_path();
    if (chromium.empty()) GTEST_SKIP() << "no chromium (scripts/setup installs the Debian package)";
    TempDir dir;
    ASSERT_EQ(ceiling_run(dir / "r.json", {"-q", "--profile", std::string(CEILING_TEST_DATA) + "/profile_vm_quick.json"},
                          {nvtx_target, "many"})
                  .exit_code,
              0);
    ASSERT_EQ(run_ceiling({"report", (dir / "r.json").string(), "--html", (dir / "r.html").string()}).exit_code, 0);
    std::ifstream in(dir / "r.html");
    std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto csp = page.find("<meta http-equiv=\"Content-Security-Policy\"");
    ASSERT_NE(csp, std::string::npos);
    page.erase(csp, page.find('>', csp) + 1 - csp);
    const std::string measure = R"(<script>
(() => {
  const out = {labels: [], clipped: [], overlaps: [], colours: []};
  const svg = [...document.querySelectorAll('svg')].find(s => s.querySelector('.point-label'));
  if (svg) {
    const box = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim());
    const rects = texts.map(t => t.getBoundingClientRect());
    texts.forEach((t, i) => {
      if (rects[i].right > box.right + 0.5 || rects[i].left < box.left - 0.5) out.clipped.push(t.textContent);
      if (t.classList.contains('point-label')) out.labels.push(t.textContent);
    });
    for (let i = 0; i < texts.length; ++i) for (let j = i + 1; j < texts.length; ++j) {
      const a = rects[i], b = rects[j];
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > 1 && h > 1) out.overlaps.push(texts[i].textContent + ' / ' + texts[j].textContent);
    }
    svg.querySelectorAll('g.point > :first-child').forEach(m => out.colours.push(m.getAttribute('fill') || m.getAttribute('stroke')));
  }
  const pre = document.createElement('pre');
  pre.id = 'measured';
  pre.textContent = 'MEASURED' + JSON.stringify(out) + 'END';
  document.body.appendChild(pre);
})();
</script>)";
    page.insert(page.rfind("</body>"), measure);
    std::ofstream(dir / "m.html") << page;
    const std::string dom =
        run_process({chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
                     "--user-data-dir=" + (dir / "profile").string(), "--window-size=1200,1400", "--dump-dom",
                     "file://" + (dir / "m.html").string()})
            .out;
    // The script's own text holds the markers too: the last pair is what it wrote.
    const auto from = dom.rfind("MEASURED{"), to = dom.rfind("}END");
    ASSERT_TRUE(from != std::string::npos && to != std::string::npos && to > from) << dom.substr(0, 2000);
    std::string text = dom.substr(from + 8, to + 1 - (from + 8));
    for (const auto& [entity, c] : {std::pair{"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}})
        for (std::size_t at; (at = text.find(entity)) != std::string::npos;) text.replace(at, std::string(entity).size(), c);
    const auto measured = nlohmann::json::parse(text);
    const auto labels = measured["labels"].get<std::vector<std::string>>();
    EXPECT_EQ(labels.size(), 12u) << "the longest 12 of 14 regions";
    for (const auto& l : labels)
        EXPECT_NE(l.find("a descriptive region name as real programs write them"), std::string::npos)
            << "a legend name cut: " << l;
    EXPECT_TRUE(measured["clipped"].empty()) << measured["clipped"].dump();
    EXPECT_TRUE(measured["overlaps"].empty()) << measured["overlaps"].dump();
    const auto colours = measured["colours"].get<std::vector<std::string>>();
    EXPECT_EQ(std::set<std::string>(colours.begin(), colours.end()).size(), colours.size())
        << measured["colours"].dump();
}

// Region names are the program's (or a shared record's): printed raw, ESC moved the cursor
// and recoloured the terminal, a newline forged a line. Text escapes them; the record and
// JSON keep them exact.
TEST(Report, NamesWithControlCharactersAreEscapedInTextAndKeptInJson) {
    CEILING_NEED_NVTX();
    TempDir dir;
    const std::string evil = "evil\x1b[31mred", lines = "two\nlines\r";
    const auto run = run_ceiling({"run", "--detail", "-o", (dir / "r.json").string(), "--", nvtx_target,
                                  "names", evil, lines});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const RunRecord rec = read_record(dir / "r.json");
    ASSERT_EQ(rec.regions.size(), 2u);
    EXPECT_EQ(rec.regions[0].name, evil);
    EXPECT_EQ(rec.regions[1].name, lines);
    const auto text = run_ceiling({"report", "--detail", (dir / "r.json").string()});
    const auto diff = run_ceiling({"diff", (dir / "r.json").string(), (dir / "r.json").string()});
    for (const auto& [what, out] : {std::pair{"run", run.err}, {"report", text.out}, {"diff", diff.out}}) {
        EXPECT_EQ(out.find('\x1b'), std::string::npos) << what << ": a raw ESC\n" << out;
        EXPECT_EQ(out.find('\r'), std::string::npos) << what;
        EXPECT_EQ(out.find("two\nlines"), std::string::npos) << what << ": a raw newline";
        EXPECT_NE(out.find("evil\\x1b[31mred"), std::string::npos) << what << "\n" << out;
    }
    EXPECT_NE(text.out.find("two\\nlines\\r"), std::string::npos) << text.out;
    const auto json = nlohmann::json::parse(run_ceiling({"report", "--json", (dir / "r.json").string()}).out);
    EXPECT_NE(json.dump().find("evil\\u001b[31mred"), std::string::npos) << "JSON keeps the name";
}

}  // namespace
}  // namespace ceiling::testing
