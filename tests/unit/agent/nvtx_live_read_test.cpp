// The NVTX capture read while the program writes it (NvtxCaptureReader::read_available) and
// after it ends (finish): the same capture however the reading was split, nothing read before
// it was written, and nothing refused that was only being created.
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "agent/run/region.hpp"
#include "collectors/clock.hpp"
#include "tests/unit/agent/nvtx_capture_files.hpp"

namespace ceiling::measure {
namespace {

using inject::Event;
using inject::EventKind;
using testing::CaptureFiles;
using testing::event;

constexpr int pid = 41, tid = 41;
constexpr std::uint64_t load = 7;

struct Seen {
    std::string path;
    std::int64_t start_ns, end_ns;
    bool operator==(const Seen&) const = default;
};
std::vector<Seen> seen(const NvtxCapture& c) {
    std::vector<Seen> out;
    for (const auto& r : c.instances) out.push_back({r.path.str(), r.start_ns, r.end_ns});
    return out;
}

Event push(std::int64_t t, std::uint32_t s) { return event(EventKind::push, t, s); }
Event pop(std::int64_t t) { return event(EventKind::pop, t); }

// A thread writing two chunks of four events, its strings as it first names them, read after
// each step: the passes stop where the writer is and go on from there, a name written after the
// first pass is found, and the capture is the one read at once after the end.
TEST(NvtxLiveRead, ReadInPiecesAsTheProgramWritesIsTheCaptureReadAtOnce) {
    CaptureFiles dir;
    NvtxCaptureReader reader(dir.path());
    reader.read_available();  // nothing written yet
    EXPECT_EQ(reader.instances_read(), 0u);

    dir.strings(pid, load, {{1, "outer"}});
    dir.events(pid, load, tid, 0, {push(100, 1)}, 0, 0, 0, 4);
    reader.read_available();
    dir.strings(pid, load, {{1, "outer"}, {2, "inner"}});
    dir.events(pid, load, tid, 0, {push(100, 1), push(200, 2), pop(300)}, 0, 0, 0, 4);
    reader.read_available();
    EXPECT_EQ(reader.instances_read(), 1u) << "inner, closed; outer still open";
    dir.events(pid, load, tid, 0, {push(100, 1), push(200, 2), pop(300), push(400, 2)}, 0, 0, 0, 4);
    dir.events(pid, load, tid, 1, {pop(500)}, 0, 0, 0, 4);
    reader.read_available();
    EXPECT_EQ(reader.instances_read(), 2u);
    dir.events(pid, load, tid, 1, {pop(500), pop(600)}, 0, 0, 0, 4);
    const NvtxCapture live = reader.finish(1000);

    const NvtxCapture at_once = read_nvtx_capture(dir.path(), 1000);
    const std::vector<Seen> want = {{"outer", 100, 600}, {"outer/inner", 200, 300},
                                    {"outer/inner", 400, 500}};
    EXPECT_EQ(seen(at_once), want);
    EXPECT_EQ(seen(live), want);
    EXPECT_EQ(live.recorded_events, at_once.recorded_events);
    EXPECT_EQ(live.recorded_events, 6u);
    EXPECT_TRUE(live.warnings.empty()) << live.warnings.front();
}

// An event stamped after a pass began was written after it too: it waits for the next pass.
TEST(NvtxLiveRead, AnEventStampedAfterThePassBeganIsLeftForTheNext) {
    CaptureFiles dir;
    const std::int64_t later = collectors::now_ns() + 3'600'000'000'000;  // an hour on
    dir.strings(pid, load, {{1, "a"}, {2, "b"}});
    dir.events(pid, load, tid, 0, {push(100, 1), pop(150), push(later, 2), pop(later + 10)});
    NvtxCaptureReader reader(dir.path());
    reader.read_available();
    EXPECT_EQ(reader.instances_read(), 1u);
    const NvtxCapture c = reader.finish(later + 100);
    const std::vector<Seen> want = {{"a", 100, 150}, {"b", later, later + 10}};
    EXPECT_EQ(seen(c), want);
}

// The same in a chunk the writer has filled and left for the next one (which the pass found):
// the rest of the chunk is read next time, not skipped with it.
TEST(NvtxLiveRead, AFullChunksEventsStampedAfterThePassBeganAreNotSkipped) {
    CaptureFiles dir;
    const std::int64_t later = collectors::now_ns() + 3'600'000'000'000;
    dir.strings(pid, load, {{1, "a"}, {2, "b"}, {3, "c"}});
    dir.events(pid, load, tid, 0, {push(100, 1), pop(150), push(later, 2), pop(later + 10)}, 0,
               0, 0, 4);
    dir.events(pid, load, tid, 1, {push(later + 20, 3), pop(later + 30)}, 0, 0, 0, 4);
    NvtxCaptureReader reader(dir.path());
    reader.read_available();
    EXPECT_EQ(reader.instances_read(), 1u);
    const NvtxCapture c = reader.finish(later + 100);
    const std::vector<Seen> want = {
        {"a", 100, 150}, {"b", later, later + 10}, {"c", later + 20, later + 30}};
    EXPECT_EQ(seen(c), want);
    EXPECT_EQ(c.recorded_events, 6u);
}

// A chunk file the library has created but not yet sized and headed is looked at again next
// time, not refused as unreadable; one still unreadable at the end is.
TEST(NvtxLiveRead, AChunkBeingCreatedIsReadOnceItsHeaderIsWritten) {
    CaptureFiles dir;
    dir.strings(pid, load, {{1, "a"}});
    std::ofstream(dir.chunk_path(pid, load, tid, 0)).flush();  // created, empty
    NvtxCaptureReader reader(dir.path());
    reader.read_available();
    EXPECT_EQ(reader.instances_read(), 0u);
    dir.events(pid, load, tid, 0, {push(100, 1), pop(200)});
    std::ofstream(dir.chunk_path(pid, load, tid + 1, 0)).flush();  // never written
    reader.read_available();
    EXPECT_EQ(reader.instances_read(), 1u);
    const NvtxCapture c = reader.finish(1000);
    ASSERT_EQ(c.instances.size(), 1u);
    ASSERT_EQ(c.warnings.size(), 1u);
    EXPECT_NE(c.warnings[0].find("ignored unreadable NVTX event file 41-7-42-0.evt"),
              std::string::npos)
        << c.warnings[0];
}

}  // namespace
}  // namespace ceiling::measure
