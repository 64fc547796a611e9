// Findings of the capture_dir and cuda_activity fuzz targets (tests/fuzz/), each reduced to
// what made it fail. The capture directory is written by the wrapped program, so whatever it
// holds, reading it must return (with a warning or note where something was skipped) rather
// than crash, hang, throw or touch anything outside the directory.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <limits>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/inject/cuda_activity_file.hpp"
#include "agent/inject/nvtx_event_format.hpp"
#include "agent/run/gpu_run.hpp"
#include "agent/run/region.hpp"
#include "diagnosis/quantity_domains.hpp"
#include "diagnosis/run_record.hpp"

namespace ceiling::measure {
namespace {

namespace fs = std::filesystem;
using inject::Event;
using inject::EventFileHeader;
using inject::EventKind;

class Dir {
public:
    Dir() {
        std::string t = (fs::temp_directory_path() / "ceiling-capture-finding-XXXXXX").string();
        path_ = ::mkdtemp(t.data());
    }
    ~Dir() { fs::remove_all(path_); }
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

Event event(EventKind k, std::int64_t t, std::uint32_t string = 0) {
    Event e{};
    e.t_ns = t;
    e.string = string;
    e.kind = static_cast<std::uint8_t>(k);
    return e;
}

// An event file with any header the program cares to write, then `events` and nothing else.
void write_events(const fs::path& path, const EventFileHeader& h, const std::vector<Event>& events) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    out.write(reinterpret_cast<const char*>(events.data()),
              static_cast<std::streamsize>(events.size() * sizeof(Event)));
}

EventFileHeader header(std::uint64_t capacity) {
    EventFileHeader h;
    h.pid = 7;
    h.tid = 7;
    h.load_ns = 1;
    h.capacity = capacity;
    h.event_bytes = sizeof(Event);
    return h;
}

TEST(CaptureFuzzFindings, EventCountBeyondTheFileIsNotAllocated) {
    // capture_dir-crash-307c25ef: a header claiming ~2^47 events made the reader allocate
    // that many (ASan: allocation-size-too-big; without it std::bad_alloc ended the run).
    Dir dir;
    write_events(dir.path() / "7-1-7-0.evt", header(std::uint64_t{1} << 47),
                 {event(EventKind::push, 100), event(EventKind::pop, 200)});
    const NvtxCapture cap = read_nvtx_capture(dir.path(), 1000, 1);
    ASSERT_EQ(cap.instances.size(), 1u);
    EXPECT_EQ(cap.instances[0].start_ns, 100);
    EXPECT_EQ(cap.instances[0].end_ns, 200);
}

// A reader that hangs must fail its test, not stall the suite: `check` runs in a child with
// a deadline (SIGALRM ends it) and an address-space cap (an endless read fails there instead
// of eating the machine's memory); the child's exit status says whether its checks held.
template <typename F>
[[noreturn]] void run_checked(F& check) {
    ::alarm(20);
#if !defined(__SANITIZE_ADDRESS__)
    // ASan reserves terabytes of address space for its shadow: there the deadline alone holds.
    const rlimit cap{std::uint64_t{4} << 30, std::uint64_t{4} << 30};
    ::setrlimit(RLIMIT_AS, &cap);
#endif
    std::exit(check() ? 0 : 1);
}

template <typename F>
void within_deadline(F&& check) {
    EXPECT_EXIT(run_checked(check), ::testing::ExitedWithCode(0), "");
}

bool has_warning(const std::vector<std::string>& warnings, const std::string& part) {
    for (const auto& w : warnings)
        if (w.find(part) != std::string::npos) return true;
    return false;
}

// The recorded events of a well-formed image beside the hostile entry: they must still count.
void write_good_image(const fs::path& dir) {
    write_events(dir / "7-1-7-0.evt", header(4), {event(EventKind::push, 100, 1), event(EventKind::pop, 200)});
    std::ofstream out(dir / "7-1.str", std::ios::binary);
    const std::uint32_t id = 1, len = 4;
    out.write(reinterpret_cast<const char*>(&id), 4).write(reinterpret_cast<const char*>(&len), 4) << "step";
}

bool read_despite(const fs::path& dir, const std::string& name) {
    const NvtxCapture cap = read_nvtx_capture(dir, 1000, 1);
    return cap.instances.size() == 1 && cap.instances[0].name == "step" &&
           has_warning(cap.warnings, name + " in the NVTX capture: not a regular file");
}

TEST(CaptureFuzzFindings, StringTableLinkedToAnEndlessDeviceIsNotRead) {
    // capture_dir-timeout-36b942d8: IMAGE.str linked to /dev/zero read {id 0, length 0}
    // records for ever.
    Dir dir;
    write_good_image(dir.path());
    fs::create_symlink("/dev/zero", dir.path() / "8-1.str");
    within_deadline([&] { return read_despite(dir.path(), "8-1.str"); });
}

TEST(CaptureFuzzFindings, FifosInsteadOfCaptureFilesDoNotBlock) {
    // Opening a FIFO for reading waits for a writer that never comes; the program can leave one
    // under any name the reader opens.
    for (const std::string name : {"8-1-8-0.evt", "8-1.str"}) {
        Dir dir;
        write_good_image(dir.path());
        ASSERT_EQ(::mkfifo((dir.path() / name).c_str(), 0600), 0) << name;
        within_deadline([&] { return read_despite(dir.path(), name); });
    }
}

TEST(CaptureFuzzFindings, CudaFilesThatAreNotRegularFilesBecomeANote) {
    // capture_dir-oom-c5cd7dee: NAME.cuda.jsonl linked to /dev/zero was read as one endless
    // line until memory ran out; a FIFO of that name blocked the open.
    for (const bool fifo : {false, true}) {
        Dir dir;
        const fs::path bad = dir.path() / "9-1.cuda.jsonl";
        if (fifo)
            ASSERT_EQ(::mkfifo(bad.c_str(), 0600), 0);
        else
            fs::create_symlink("/dev/zero", bad);
        within_deadline([&] {
            const GpuRun gpu = read_gpu_run(dir.path());
            return gpu.processes.empty() && has_warning(gpu.notes, "9-1.cuda.jsonl: not a regular file");
        });
    }
}

TEST(CaptureFuzzFindings, IntegerFieldsHoldingHugeFloatsMakeTheLineMalformed) {
    // cuda_activity-crash-43fa947e: "start_ns": 2.22222e+21 was cast to int64 (undefined
    // behaviour; in practice INT64_MIN) and the kernel kept that time. Every integer field read
    // from a line, the header's and a kernel's grid included, takes only integers.
    const std::string header = R"({"type":"header","version":1,"pid":5,"load_ns":7})";
    const std::vector<std::string> bad = {
        R"({"type":"kernel","name":"k","start_ns":2.22222e+21,"end_ns":1})",
        R"({"type":"kernel","name":"k","start_ns":1,"end_ns":2,"grid":[1e30,1,1]})",
        R"({"type":"copy","bytes":1e300,"start_ns":1,"end_ns":2})",
        R"({"type":"memset","correlation":-1e200,"start_ns":1,"end_ns":2})",
    };
    for (const auto& line : bad) {
        std::istringstream in(header + "\n" + line + "\n");
        const auto f = inject::read_cuda_activity_file(in, "x.cuda.jsonl");
        EXPECT_EQ(f.malformed_lines, 1u) << line;
        EXPECT_TRUE(f.log.empty()) << line;
    }
    std::istringstream huge_pid(R"({"type":"header","version":1,"pid":1e300,"load_ns":7})");
    EXPECT_EQ(inject::read_cuda_activity_file(huge_pid, "x.cuda.jsonl").malformed_lines, 1u);
    // Undefined behaviour only a UBSan build (scripts/test's second pass) sees: the header's
    // version was converted the same way; such a header is no header.
    std::istringstream huge_version(R"({"type":"header","version":1e300,"pid":5,"load_ns":7})");
    EXPECT_THROW(inject::read_cuda_activity_file(huge_version, "x.cuda.jsonl"), std::invalid_argument);
}

TEST(CaptureFuzzFindings, NamesThatAreNotUtf8StillLetTheRecordBeWritten) {
    // capture_dir-crash-e5bd622a: a range named in Latin-1 ("caf\xe9") reached the record's
    // JSON, whose strict dump threw type_error 316, so run lost its record. Each invalid sequence
    // reads as U+FFFD; the declared work after it still counts.
    Dir dir;
    write_events(dir.path() / "7-1-7-0.evt", header(4),
                 {event(EventKind::push, 100, 1), event(EventKind::pop, 200)});
    std::ofstream out(dir.path() / "7-1.str", std::ios::binary);
    const std::string name = "caf\xe9 {ops=1k}";
    const std::uint32_t id = 1, len = static_cast<std::uint32_t>(name.size());
    out.write(reinterpret_cast<const char*>(&id), 4).write(reinterpret_cast<const char*>(&len), 4) << name;
    out.close();
    const NvtxCapture cap = read_nvtx_capture(dir.path(), 1000, 1);
    ASSERT_EQ(cap.instances.size(), 1u);
    EXPECT_EQ(cap.instances[0].name, "caf\xef\xbf\xbd");
    ASSERT_TRUE(cap.instances[0].work.has_value());
    EXPECT_EQ(cap.instances[0].work->ops, 1000);
    const auto regions = aggregate_regions({&cap}, std::nullopt);
    EXPECT_NO_THROW((void)nlohmann::json(regions).dump(1));
}

TEST(CaptureFuzzFindings, TimesOutsideTheExecutionAreHeldToIt) {
    // capture_dir-crash-9558d28e: a pop at t = -9223365211662292295 after a push at
    // 6825309165962 overflowed end - start (undefined), and a duration came out negative:
    // a record `ceiling report` then refuses. Times lie in [0, the program's end], a range
    // never ends before it starts, and nested time never exceeds the window.
    constexpr std::int64_t end = 10'000'000'000'000;
    Dir dir;
    write_events(dir.path() / "7-1-7-0.evt", header(16),
                 {event(EventKind::push, 6825309165962), event(EventKind::pop, -9223365211662292295),
                  event(EventKind::push, std::numeric_limits<std::int64_t>::min()),
                  event(EventKind::push, 100), event(EventKind::pop, std::numeric_limits<std::int64_t>::max()),
                  event(EventKind::push, 0), event(EventKind::pop, end), event(EventKind::pop, 50)});
    const NvtxCapture cap = read_nvtx_capture(dir.path(), end, 1);
    ASSERT_EQ(cap.instances.size(), 4u);
    for (const auto& r : cap.instances) {
        EXPECT_GE(r.start_ns, 0);
        EXPECT_LE(r.end_ns, end);
        EXPECT_GE(r.end_ns, r.start_ns);
        EXPECT_GE(r.child_ns, 0);
        EXPECT_LE(r.child_ns, end);
    }
    const auto regions = aggregate_regions({&cap}, std::nullopt);
    EXPECT_EQ(find_out_of_domain(nlohmann::json(regions)), std::nullopt);
}

}  // namespace
}  // namespace ceiling::measure
