// `ceiling run`: exit statuses, launch errors, records, repeats, where regions' work ran,
// the trace and interruption, driving the real binary around small test programs (the NVTX
// capture itself: run_capture_test.cpp; budgets: run_budget_test.cpp).
#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <thread>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/integration/run_support.hpp"

namespace ceiling::testing {
namespace {

TEST(Run, ProgramOutputPassesThroughUntouched) {
    TempDir dir;
    const auto r = ceiling_run(dir / "r.json", {}, {run_target, "print", "hello world"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "hello world\n");  // ceiling's own summary goes to stderr
    EXPECT_NE(r.err.find("to stderr: hello world"), std::string::npos);
    EXPECT_NE(r.err.find("ceiling run:"), std::string::npos);
}

// What `run` costs a program starts with what ceiling loads: the libraries of the suite's
// library variants (OpenBLAS, oneDNN, OpenCV: ~10 ms of loading and exit, and a spinning
// OpenBLAS thread) are loaded only when a library variant runs, never by `run`. The wrapped
// shell prints the maps of its parent, ceiling.
TEST(Run, CeilingDoesNotLoadTheSuitesLibraries) {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "sanitizer builds link the module at start-up (kernels/CMakeLists.txt: "
                    "LeakSanitizer and dlopen'ed TLS)";
#endif
    TempDir dir;
    const auto r = ceiling_run(dir / "r.json", {}, {"sh", "-c", "cat /proc/$PPID/maps"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_NE(r.out.find("ceiling"), std::string::npos) << "not ceiling's maps:\n" << r.out;
    for (const char* lib : {"libopenblas", "libdnnl", "libopencv", "libceiling_libraries"})
        EXPECT_EQ(r.out.find(lib), std::string::npos) << lib << " is mapped by ceiling run";
}

TEST(Run, ExitStatusesArePropagatedAndRecorded) {
    struct Case {
        std::vector<std::string> argv;
        int status;
        EndKind kind;
        std::string signal;
    };
    const std::vector<Case> cases = {{{run_target, "exit", "0"}, 0, EndKind::exited, ""},
                                     {{run_target, "exit", "3"}, 3, EndKind::exited, ""},
                                     {{run_target, "segv"}, 128 + SIGSEGV, EndKind::signaled, "SIGSEGV"},
                                     {{run_target, "sigkill"}, 128 + SIGKILL, EndKind::signaled, "SIGKILL"}};
    for (const auto& c : cases) {
        TempDir dir;
        const auto r = ceiling_run(dir / "r.json", {"-q"}, c.argv);
        EXPECT_EQ(r.exit_code, c.status) << c.argv[1] << ": " << r.err;
        const RunRecord rec = read_record(dir / "r.json");  // a crash still leaves a record
        EXPECT_EQ(rec.end.kind, c.kind) << c.argv[1];
        EXPECT_EQ(rec.end.shell_status(), c.status) << c.argv[1];
        EXPECT_EQ(rec.end.signal_name, c.signal) << c.argv[1];
        ASSERT_EQ(rec.executions.size(), 1u);
    }
}

TEST(Run, NotFoundIs127WithOneLine) {
    TempDir dir;
    const auto r = ceiling_run(dir / "r.json", {}, {"ceiling-no-such-program-xyz"});
    EXPECT_EQ(r.exit_code, 127);
    EXPECT_NE(r.err.find("ceiling-no-such-program-xyz: command not found"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "r.json"));
}

TEST(Run, NotExecutableIs126WithOneLine) {
    TempDir dir;
    const auto script = dir / "not-executable";
    std::ofstream(script) << "#!/bin/sh\nexit 0\n";
    chmod(script.c_str(), 0644);
    const auto r = ceiling_run(dir / "r.json", {}, {script.string()});
    EXPECT_EQ(r.exit_code, 126);
    EXPECT_NE(r.err.find("not executable"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(Run, ProgramIsFoundOnPath) {
    TempDir dir;
    const auto r = ceiling_run(
        dir / "r.json", {"--profile", std::string(CEILING_TEST_DATA) + "/profile_synthetic.json"},
        {"true"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(read_record(dir / "r.json").executable.substr(0, 1), "/");
    // Busy cores beside how many the profile's host has.
    EXPECT_NE(r.err.find("cores busy on average (of 4 CPUs)"), std::string::npos) << r.err;
}

double cpu_seconds(const RunRecord& rec) {
    double s = 0;
    for (const auto& c : rec.whole.counters)
        if (c.name == "user_s" || c.name == "system_s") s += c.value;
    return s;
}

TEST(Run, ForkedChildrenAndThreadsAreCountedInFull) {
    TempDir dir;
    // The same fixed work once, then in two threads and a forked child: three times the CPU.
    // The single run goes before and after the three: on a shared host the CPU time of fixed
    // work moved 25 % between runs a second apart (0.24 s, then 0.18 per worker), so the
    // three are judged against the quicker single run from below and the slower from above.
    auto before = ceiling_run(dir / "before.json", {"-q"}, {run_target, "work", "60"});
    auto three = ceiling_run(dir / "three.json", {"-q"}, {run_target, "fork-threads", "60"});
    auto after = ceiling_run(dir / "after.json", {"-q"}, {run_target, "work", "60"});
    ASSERT_EQ(before.exit_code, 0) << before.err;
    ASSERT_EQ(three.exit_code, 0) << three.err;
    ASSERT_EQ(after.exit_code, 0) << after.err;
    const double a = cpu_seconds(read_record(dir / "before.json"));
    const double b = cpu_seconds(read_record(dir / "after.json"));
    const double low = std::min(a, b), high = std::max(a, b);
    const double total = cpu_seconds(read_record(dir / "three.json"));
    ASSERT_GT(low, 0.02);
    EXPECT_GT(total, 2.4 * low) << "single " << a << " and " << b << " s, three workers " << total
                                << " s";
    EXPECT_LT(total, 3.6 * high);
    // perf's task-clock, inherited by threads and children, agrees where it is available.
    for (const auto& c : read_record(dir / "three.json").whole.counters)
        if (c.name == "task_clock_s") {
            EXPECT_GT(c.value, 2.4 * low);
        }
}

TEST(Run, RepeatGivesPercentilesOfWallAndRegions) {
    CEILING_NEED_NVTX();
    TempDir dir;
    const auto r = ceiling_run(dir / "r.json", {"-q", "--repeat", "5", "--warmup", "1"}, {nvtx_target, "nested"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const RunRecord rec = read_record(dir / "r.json");
    ASSERT_EQ(rec.executions.size(), 6u);
    EXPECT_TRUE(rec.executions[0].warmup);
    EXPECT_EQ(rec.whole.duration_s.count, 5u);
    EXPECT_EQ(rec.whole.durations_s.size(), 5u);
    EXPECT_LE(rec.whole.duration_s.median, rec.whole.duration_s.p99);
    const RecordedRegion* outer = rec.region("outer");
    ASSERT_NE(outer, nullptr);
    EXPECT_EQ(outer->instances, 5u);
    EXPECT_EQ(outer->measurement.duration_s.count, 5u);
    EXPECT_EQ(outer->total_s_per_execution.size(), 5u);
    EXPECT_GT(outer->measurement.duration_s.p99, 0.0);
}

// A client's range around requests to a local server ceiling did not start: its process
// idles while the server computes. The record has the cores the host's other processes kept
// busy meanwhile, and the verdict says the work ran outside the program.
TEST(Run, WorkDoneByAnotherProcessIsSaidToRunOutsideIt) {
    CEILING_NEED_NVTX();
    TempDir dir;
    const std::string socket = (dir / "serve.sock").string();
    const pid_t server = fork();
    if (server == 0) {
        execl(nvtx_target.c_str(), nvtx_target.c_str(), "serve", socket.c_str(), nullptr);
        _exit(127);
    }
    ASSERT_GT(server, 0);
    for (int i = 0; i < 500 && !std::filesystem::exists(socket); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const auto r = ceiling_run(dir / "r.json", {"-q"}, {nvtx_target, "ask", socket, "10"});
    int status = 0;
    ::kill(server, SIGTERM);
    ::waitpid(server, &status, 0);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const RunRecord rec = read_record(dir / "r.json");
    const RecordedRegion* infer = rec.region("infer");
    ASSERT_NE(infer, nullptr);
    ASSERT_TRUE(infer->busy_cores);
    EXPECT_LT(*infer->busy_cores, 0.2) << "the client only waits";
    // The server's busy core, less whatever the host lent to others meanwhile.
    ASSERT_TRUE(infer->other_busy_cores);
    EXPECT_GT(*infer->other_busy_cores, 0.5);
    const auto v = std::find_if(rec.region_diagnoses.begin(), rec.region_diagnoses.end(),
                                [](const RegionVerdict& x) { return x.path == "infer"; });
    ASSERT_NE(v, rec.region_diagnoses.end());
    const auto& f = v->diagnosis.findings;
    EXPECT_NE(std::find_if(f.begin(), f.end(),
                           [](const Finding& x) {
                               return x.detail.find("the work ran outside it") != std::string::npos;
                           }),
              f.end());
}

TEST(Run, PreprocessingHeavyProgramIsNotTheModel) {
    CEILING_NEED_NVTX();
    TempDir dir;
    const auto r = ceiling_run(dir / "r.json", {"--model-regions", "forward"}, {nvtx_target, "preprocess", "4"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const RunRecord rec = read_record(dir / "r.json");
    ASSERT_TRUE(rec.region("forward"));
    EXPECT_TRUE(rec.region("forward")->model);
    EXPECT_FALSE(rec.region("preprocess")->model);
    ASSERT_TRUE(rec.diagnosis.has_value());
    ASSERT_TRUE(rec.diagnosis->bound.has_value()) << rec.diagnosis->observation;
    EXPECT_EQ(*rec.diagnosis->bound, Bound::not_the_model);
    ASSERT_TRUE(rec.diagnosis->model_share.has_value());
    EXPECT_LT(rec.diagnosis->model_share->share, 0.3);
    EXPECT_NE(r.err.find("not the model"), std::string::npos) << r.err;
}

// A script's start-up before its first region is most of its wall time: the time in no
// region is split by where it lay, and the first move starts with the start-up.
TEST(Run, StartUpBeforeTheFirstRegionIsNamedAndLeadsTheMove) {
    CEILING_NEED_NVTX();
    TempDir dir;
    const auto r = ceiling_run(dir / "r.json", {"--model-regions", "forward", "--repeat", "2"},
                               {nvtx_target, "startup", "3"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const RunRecord rec = read_record(dir / "r.json");
    ASSERT_EQ(rec.before_regions_s_per_execution.size(), 2u);
    ASSERT_EQ(rec.after_regions_s_per_execution.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
        // busy() spins on the wall clock: at least its time, whatever the host does.
        EXPECT_GE(rec.before_regions_s_per_execution[i], 0.300);
        EXPECT_GE(rec.after_regions_s_per_execution[i], 0.060);
        EXPECT_LT(rec.before_regions_s_per_execution[i] + rec.after_regions_s_per_execution[i],
                  rec.whole.durations_s[i] - rec.region_time_s_per_execution[i] + 1e-6);
    }
    ASSERT_TRUE(rec.diagnosis && rec.diagnosis->bound && rec.diagnosis->model_share) << r.err;
    EXPECT_EQ(*rec.diagnosis->bound, Bound::not_the_model);
    EXPECT_EQ(rec.diagnosis->first_move.rfind("start-up first: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("before the first region, "), std::string::npos) << r.err;
}

TEST(Run, TraceParsesBackWithNestedCompleteEvents) {
    CEILING_NEED_NVTX();
    TempDir dir;
    const auto r = ceiling_run(dir / "r.json", {"-q", "--trace", (dir / "t.json").string(), "--repeat", "2"},
                               {nvtx_target, "nested"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto trace = read_json(dir / "t.json");
    ASSERT_TRUE(trace.contains("traceEvents"));
    const auto& events = trace["traceEvents"];
    ASSERT_GT(events.size(), 10u);
    std::map<std::pair<int, long>, std::vector<std::pair<double, double>>> stacks;  // open X events
    std::map<std::pair<int, long>, double> last_ts;
    std::set<std::string> names, phases;
    for (const auto& e : events) {
        for (const char* field : {"ph", "name", "pid", "tid", "ts"}) ASSERT_TRUE(e.contains(field)) << e.dump();
        const std::string ph = e["ph"];
        phases.insert(ph);
        names.insert(e["name"].get<std::string>());
        const double ts = e["ts"];
        EXPECT_GE(ts, 0.0);
        EXPECT_LT(ts, 600e6) << "timestamps must be relative (microseconds since the first launch)";
        if (ph == "M") continue;
        const auto track = std::make_pair(e["pid"].get<int>(), e["tid"].get<long>());
        EXPECT_GE(ts, last_ts[track]) << "not monotonic on its track: " << e.dump();
        last_ts[track] = ts;
        if (ph != "X") continue;
        ASSERT_TRUE(e.contains("dur"));
        const double end = ts + e["dur"].get<double>();
        auto& stack = stacks[track];
        while (!stack.empty() && stack.back().second <= ts) stack.pop_back();
        if (!stack.empty()) {
            EXPECT_LE(end, stack.back().second + 1e-3) << "overlaps its parent: " << e.dump();
        }
        stack.emplace_back(ts, end);
    }
    for (const char* ph : {"M", "X", "C"}) EXPECT_TRUE(phases.count(ph)) << ph;
    for (const char* n : {"outer", "inner", "worker", "async", "process_name", "thread_name"})
        EXPECT_TRUE(names.count(n)) << n;
    // A domain's push/pop range sits on a track of the thread that pushed it; counters are
    // named once, with their unit, and their series is the value.
    std::map<std::pair<int, long>, std::string> track_names;
    for (const auto& e : events)
        if (e["ph"] == "M" && e["name"] == "thread_name")
            track_names[{e["pid"].get<int>(), e["tid"].get<long>()}] = e["args"]["name"];
    bool domain_on_thread = false;
    for (const auto& e : events) {
        if (e["ph"] == "X" && e["name"] == "load") {
            const auto& t = track_names[{e["pid"].get<int>(), e["tid"].get<long>()}];
            domain_on_thread = domain_on_thread || t == "main thread: domain io";
        }
        if (e["ph"] == "C") {
            EXPECT_EQ(e["args"].size(), 1u) << e.dump();
            EXPECT_TRUE(e["args"].contains("value")) << e.dump();
            EXPECT_EQ(e["name"].get<std::string>().find("bytes ("), std::string::npos) << e.dump();
        }
    }
    EXPECT_TRUE(domain_on_thread) << "io::load is not on a track of the thread that pushed it";
}

// A process the program starts gets a track in the trace even when it records no NVTX range
// (the shell's sleep here): its span as the sampler saw it.
TEST(Run, TraceHasATrackForAChildWithoutRanges) {
    TempDir dir;
    // (Its first sample may catch it between fork and exec, still named sh.)
    const auto r = ceiling_run(dir / "r.json", {"-q", "--trace", (dir / "t.json").string()},
                               {"/bin/sh", "-c", "sleep 0.3 & wait"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto trace = read_json(dir / "t.json");
    bool process = false, span = false;
    for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] == "M" && e["name"] == "process_name") {
            const std::string name = e["args"]["name"];
            process = process || name.find(" child sleep ") != std::string::npos;
        }
        if (e["ph"] == "X" && e["name"] == "sleep" && e.value("cat", "") == "process")
            span = span || e["dur"].get<double>() > 100e3;  // us: most of its 0.3 s
    }
    EXPECT_TRUE(process) << trace.dump().substr(0, 2000);
    EXPECT_TRUE(span) << "no span of most of the child's 0.3 s";
}

// A cloud VM keeps its hostname when its instance type changes, so the per-host cache file
// can hold another CPU's profile: never judged against; a profile the user chose is used, and
// the record and the warning say whose roofs they are.
TEST(Run, AnotherCpusSavedProfileIsNotUsedAndAChosenOneIsSaid) {
    TempDir dir;
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    const std::string other = std::string(CEILING_TEST_DATA) + "/profile_synthetic.json";
    std::filesystem::create_directories(dir / "ceiling");
    std::filesystem::copy_file(other, dir / "ceiling" / ("machine-" + std::string(host) + ".json"));
    const std::vector<std::string> env = {"XDG_CACHE_HOME=" + dir.path().string(),
                                          "CEILING_PROFILE="};

    const auto saved = ceiling_run(dir / "saved.json", {}, {run_target, "print", "x"}, env);
    ASSERT_EQ(saved.exit_code, 0) << saved.err;
    const auto s = read_record(dir / "saved.json");
    EXPECT_FALSE(s.machine_profile) << "judged against another CPU's roofs";
    const auto note = std::find_if(s.notes.begin(), s.notes.end(), [](const std::string& n) {
        return n.find("measured on Synthetic 4-core test machine") != std::string::npos;
    });
    ASSERT_NE(note, s.notes.end()) << saved.err;
    EXPECT_NE(note->find("not judged against it; run `ceiling machine` on this host"),
              std::string::npos)
        << *note;
    EXPECT_NE(saved.err.find("not judged against it"), std::string::npos) << saved.err;

    const auto chosen =
        ceiling_run(dir / "chosen.json", {"--profile", other}, {run_target, "print", "x"}, env);
    ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
    const auto c = read_record(dir / "chosen.json");
    ASSERT_TRUE(c.machine_profile);
    EXPECT_TRUE(std::any_of(c.notes.begin(), c.notes.end(), [](const std::string& n) {
        return n.find("Synthetic 4-core test machine") != std::string::npos &&
               n.find("judged against that machine's roofs") != std::string::npos;
    })) << chosen.err;
}

// Storage traffic near the storage roof reads as I/O bound, and traffic beyond it as the page
// cache's. 16 MiB written with O_DIRECT and fsync, then the record judged again (`report
// --profile`) against profiles whose write roof puts that rate at 80 % and at 400 % of it:
// the same measurement, so the shares are exact. Written under the build tree: a tmpfs /tmp
// would show no storage traffic at all.
TEST(Run, StorageNearItsRoofIsIoBound) {
    TempDir dir;
    const std::string out =
        (std::filesystem::current_path() / ("ceiling-storage-" + std::to_string(::getpid())))
            .string();
    const auto r = ceiling_run(dir / "r.json", {"-q"},
                               {"dd", "if=/dev/zero", "of=" + out, "bs=1M", "count=16",
                                "oflag=direct", "conv=fsync", "status=none"});
    std::filesystem::remove(out);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const RunRecord rec = read_record(dir / "r.json");
    std::optional<double> written;
    for (const auto& c : rec.executions.at(0).counters)
        if (c.name == "storage_write_bytes") written = c.value;
    if (!written || *written < 8 << 20)
        GTEST_SKIP() << "the build tree's filesystem passed no writes to storage";
    const double rate = *written / rec.whole.duration_s.mean;
    const auto judged_at = [&](double share) {
        nlohmann::json profile = nlohmann::json::parse(
            testing::slurp(std::string(CEILING_TEST_DATA) + "/profile_synthetic.json"));
        profile["storage"] = {{"directory", "/data"},
                              {"device", "vda"},
                              {"file_bytes", 64 << 20},
                              {"read_bytes_per_s", nlohmann::json(summarize({1e9}))},
                              {"write_bytes_per_s", nlohmann::json(summarize({rate / share}))}};
        const auto path = dir / ("profile-" + std::to_string(share) + ".json");
        { std::ofstream(path) << profile.dump(); }
        return run_ceiling({"report", "--detail", (dir / "r.json").string(), "--profile", path.string()});
    };
    const auto near = judged_at(0.8);
    ASSERT_EQ(near.exit_code, 0) << near.err;
    EXPECT_NE(near.out.find("80% of the storage write roof)"), std::string::npos) << near.out;
    EXPECT_NE(near.out.find("storage_roof_share 80%"), std::string::npos) << near.out;
    EXPECT_NE(near.out.find("not the model (I/O bound)"), std::string::npos) << near.out;
    const auto beyond = judged_at(4.0);
    ASSERT_EQ(beyond.exit_code, 0) << beyond.err;
    EXPECT_NE(beyond.out.find("400% of the storage write roof: the page cache took it"),
              std::string::npos)
        << beyond.out;
    // Its rate is not storage's; only its waits on storage may call it I/O bound (direct
    // writes block for the device).
    EXPECT_EQ(beyond.out.find("storage_roof_share"), std::string::npos) << beyond.out;
    if (beyond.out.find("I/O bound") != std::string::npos)
        EXPECT_NE(beyond.out.find("because threads blocked on storage"), std::string::npos)
            << beyond.out;
}

TEST(Run, UnwritableOutputFailsBeforeTheProgramStarts) {
    TempDir dir;
    const auto r = ceiling_run("/proc/ceiling-cannot-write/r.json", {}, {run_target, "print", "MARKER"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.out.find("MARKER"), std::string::npos);
    EXPECT_NE(r.err.find("/proc/ceiling-cannot-write/r.json"), std::string::npos) << r.err;
}

// The method's deliberate stop after the budget checks: stop with margin to spare, else the
// next lever, with how close the longest judged region runs to its roof.
// Records named by default are never replaced, also when several end in the same second.
TEST(Run, DefaultNamesNeverReplaceAnEarlierRecord) {
    TempDir dir;
    const std::string cmd = "cd '" + dir.path().string() + "' && for i in 1 2 3; do '" +
                            std::string(CEILING_BINARY) + "' run -q -r 2 -- /bin/true || exit 1; done";
    const auto r = run_process({"sh", "-c", cmd});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    int records = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
        const std::string name = e.path().filename().string();
        EXPECT_EQ(name.rfind("ceiling-run-", 0), 0u) << e.path();
        EXPECT_EQ(read_record(e.path()).executions.size(), 2u) << "-r is --repeat";
        // Quiet, yet the name ceiling chose is said: the user has no other way to know it.
        EXPECT_NE(r.err.find("record: " + name + "\n"), std::string::npos) << r.err;
        ++records;
    }
    EXPECT_EQ(records, 3);
}

// A record that cannot be written after the program ran: the summary is still printed and
// the error says where the record could not go; the program's success does not hide it.
TEST(Run, ARecordThatCannotBeWrittenStillLeavesTheSummary) {
    TempDir dir;
    const auto d = dir / "out";
    std::filesystem::create_directory(d);
    // The program replaces the record's directory with a file.
    const auto r = ceiling_run(d / "r.json", {},
                               {"/bin/sh", "-c", "rm -rf '" + d.string() + "' && touch '" + d.string() + "'"});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("wall time"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("cannot write " + (d / "r.json").string()), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("record: "), std::string::npos) << r.err;
}

// A trace that cannot be written beside a record that was: the error says the record was
// saved (not "the summary above is all that is kept"), and --json names it.
TEST(Run, ATraceThatCannotBeWrittenSaysTheRecordWasSaved) {
    TempDir dir;
    const auto d = dir / "traces";
    std::filesystem::create_directory(d);
    const auto r = ceiling_run(dir / "r.json", {"--trace", (d / "t.json").string(), "--json", (dir / "s.json").string()},
                               {"/bin/sh", "-c", "rm -rf '" + d.string() + "' && touch '" + d.string() + "'"});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("cannot write " + (d / "t.json").string()), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("the record was saved: " + (dir / "r.json").string()), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("all that is kept"), std::string::npos) << r.err;
    EXPECT_EQ(read_json(dir / "s.json").at("record"), (dir / "r.json").string());
    EXPECT_FALSE(read_record(dir / "r.json").command.empty());
}

// SIGINT between two executions of a quick program (the execution it reaches may end well
// before the signal arrives) still ends the run with 128+SIGINT.
TEST(Run, InterruptedBetweenExecutionsExitsWith130) {
    for (int attempt = 0; attempt < 3; ++attempt) {
        TempDir dir;
        const auto out = dir / "r.json";
        // A quick program that says when it ran: the signal comes after the first execution
        // (ceiling's handlers are in place; a slow sanitizer build starts late), between others.
        Background bg({"run", "-q", "--repeat", "100000", "--output", out.string(), "--", run_target,
                       "print", "ran"},
                      dir.path());
        ASSERT_TRUE(bg.wait_for_output("ran")) << bg.err();
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        bg.signal(SIGINT);
        EXPECT_EQ(bg.wait(), 128 + SIGINT) << bg.err();
        const RunRecord rec = read_record(out);
        EXPECT_TRUE(rec.partial);
        EXPECT_NE(rec.partial_reason.find("interrupted by SIGINT"), std::string::npos) << rec.partial_reason;
    }
}

TEST(Run, InterruptLeavesAValidPartialRecord) {
    TempDir dir;
    const auto out = dir / "r.json";
    Background bg({"run", "-q", "--repeat", "3", "--output", out.string(), "--", run_target, "sleep", "30"}, dir.path());
    ASSERT_TRUE(bg.wait_for_output("ready")) << bg.err();
    bg.signal(SIGINT);  // from kill(2), so ceiling forwards it
    EXPECT_EQ(bg.wait(), 128 + SIGINT) << bg.err();
    const RunRecord rec = read_record(out);
    EXPECT_TRUE(rec.partial);
    EXPECT_NE(rec.partial_reason.find("SIGINT"), std::string::npos) << rec.partial_reason;
    EXPECT_EQ(rec.executions.size(), 1u);
    EXPECT_EQ(rec.end.signal_name, "SIGINT");
    // Nothing half-written beside it.
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
        EXPECT_EQ(e.path().filename().string().find(".r.json."), std::string::npos) << e.path();
}

TEST(Run, SamplingFillsTimeSeriesUnlessOff) {
    TempDir dir;
    ASSERT_EQ(ceiling_run(dir / "on.json", {"-q", "--interval", "5ms"}, {run_target, "busy", "0.2"}).exit_code, 0);
    const RunRecord on = read_record(dir / "on.json");
    std::map<std::string, std::size_t> points;
    for (const auto& s : on.executions.at(0).time_series) points[s.name] = s.values.size();
    EXPECT_GT(points["cpu_cores"], 5u);
    EXPECT_GT(points["rss_bytes"], 5u);
    ASSERT_EQ(ceiling_run(dir / "off.json", {"-q", "--interval", "0"}, {run_target, "busy", "0.05"}).exit_code, 0);
    const RunRecord off = read_record(dir / "off.json");
    for (const auto& s : off.executions.at(0).time_series) EXPECT_TRUE(s.values.empty()) << s.name;
    EXPECT_FALSE(off.options.interval_s.has_value());
}

TEST(Run, EachRankWritesItsOwnRecord) {
    TempDir dir;
    const auto r = ceiling_run(dir / "job.json", {"-q"}, {run_target, "exit", "0"},
                               {"OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=4"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const RunRecord rec = read_record(dir / "job.rank3.json");
    EXPECT_EQ(rec.rank, 3);
    EXPECT_EQ(rec.world_size, 4);
    EXPECT_EQ(rec.rank_source, "OMPI_COMM_WORLD_RANK");
    EXPECT_EQ(rec.environment.at("OMPI_COMM_WORLD_SIZE"), "4");
}

TEST(Run, RecordKeepsOnlyAllowlistedEnvironment) {
    TempDir dir;
    const auto r = ceiling_run(dir / "r.json", {"-q"}, {run_target, "exit", "0"},
                               {"OMP_NUM_THREADS=2", "CEILING_TEST_SECRET=hunter2"});
    ASSERT_EQ(r.exit_code, 0);
    const std::string text = slurp(dir / "r.json");
    EXPECT_EQ(text.find("hunter2"), std::string::npos);
    EXPECT_EQ(read_record(dir / "r.json").environment.at("OMP_NUM_THREADS"), "2");
}

}  // namespace
}  // namespace ceiling::testing
