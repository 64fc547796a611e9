// The capture directory of one execution of `ceiling run`: the wrapped program (through the
// NVTX and CUDA injection libraries, or on its own: it knows CEILING_NVTX_DIR and
// CEILING_CUDA_DIR) writes what it likes there, so the directory is untrusted input. The input
// is unpacked into a fresh directory, which then goes through what run_program does with it:
// read the NVTX capture and the CUDA activity files, count and place the GPU operations,
// aggregate the regions, serialise them as the record and the trace are written, and remove
// the directory. A finding: a crash, a hang, any exception, a change outside the directory, or
// a region `ceiling report` would refuse to read back.
//
// Input: entries of {u8 kind, u16 length (little-endian), `length` bytes}. The kind picks a
// suffix and what to create from the tables below: a file holding the bytes, or something a
// hostile program could leave instead of a file (a FIFO, a directory, a symlink to a file or
// directory outside, or to an endless device). Names: "<i><suffix>", except that the i-th
// .str takes the i-th distinct image name ("<pid>-<load ns>") of the .evt headers, as the NVTX
// library names them, so that strings and events meet.
// tests/fuzz/pack_capture packs a real capture directory into this form (the seeds).

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/inject/nvtx_event_format.hpp"
#include "agent/run/gpu_run.hpp"
#include "agent/run/region.hpp"
#include "agent/store/chrome_trace.hpp"
#include "diagnosis/quantity_domains.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

namespace fs = std::filesystem;
using namespace ceiling;

enum class Make { file, fifo, directory, link_to_outside_file, link_to_outside_dir, link_to_dev_zero };
constexpr std::array<std::string_view, 3> suffixes = {".str", ".evt", ".cuda.jsonl"};
constexpr std::array<Make, 6> makes = {Make::file,
                                       Make::fifo,
                                       Make::directory,
                                       Make::link_to_outside_file,
                                       Make::link_to_outside_dir,
                                       Make::link_to_dev_zero};

struct Entry {
    std::string_view suffix;
    Make make;
    std::string_view bytes;
};

std::vector<Entry> unpack(const std::uint8_t* data, std::size_t size) {
    std::vector<Entry> out;
    std::size_t at = 0;
    while (at + 3 <= size) {
        const unsigned kind = data[at];
        const std::size_t length = data[at + 1] | (std::size_t{data[at + 2]} << 8);
        at += 3;
        const std::size_t n = std::min(length, size - at);
        out.push_back({suffixes[kind % suffixes.size()], makes[(kind / suffixes.size()) % makes.size()],
                       std::string_view(reinterpret_cast<const char*>(data + at), n)});
        at += n;
    }
    return out;
}

// A scratch directory per process: the capture directory is made afresh inside it for each
// input, beside "outside", which the capture's links point into and which must survive.
struct Scratch {
    fs::path base, capture, outside_file, outside_dir;
    Scratch() {
        // $TMPDIR: scripts/fuzz points it at tmpfs, and removes what a timeout leaves there.
        std::string t = (fs::temp_directory_path() / "ceiling-fuzz-XXXXXX").string();
        base = ::mkdtemp(t.data());
        capture = base / "capture";
        outside_file = base / "outside" / "file";
        outside_dir = base / "outside" / "dir";
        fs::create_directories(outside_dir);
        std::ofstream(outside_file) << "outside";
        std::ofstream(outside_dir / "inner") << "inner";
    }
    ~Scratch() { fs::remove_all(base); }

    // What outside the capture directory looked like before; anything else is a finding.
    void check_outside_unchanged() const {
        std::string content;
        std::getline(std::ifstream(outside_file), content);
        if (content != "outside") fuzz::finding("a file outside the capture directory changed");
        if (!fs::exists(outside_dir / "inner"))
            fuzz::finding("a file outside the capture directory was removed");
        for (const auto& e : fs::directory_iterator(base))
            if (e.path().filename() != "outside")
                fuzz::finding("something was left beside the capture directory: " +
                              e.path().filename().string());
    }
};

void create(const Scratch& s, const fs::path& path, const Entry& e) {
    switch (e.make) {
        case Make::file: std::ofstream(path, std::ios::binary) << e.bytes; break;
        case Make::fifo: ::mkfifo(path.c_str(), 0600); break;
        case Make::directory: fs::create_directory(path); break;
        case Make::link_to_outside_file: fs::create_symlink(s.outside_file, path); break;
        case Make::link_to_outside_dir: fs::create_directory_symlink(s.outside_dir, path); break;
        case Make::link_to_dev_zero: fs::create_symlink("/dev/zero", path); break;
    }
}

// The image an .evt entry's header names, "<pid>-<load ns>" as the library names its .str.
std::string image_of(std::string_view evt, std::size_t i) {
    inject::EventFileHeader h;
    if (evt.size() < sizeof h) return std::to_string(i);
    std::memcpy(&h, evt.data(), sizeof h);
    return std::to_string(h.pid) + "-" + std::to_string(h.load_ns);
}

void unpack_into(const Scratch& s, const std::vector<Entry>& entries) {
    std::vector<std::string> images;
    for (std::size_t i = 0; i < entries.size(); ++i)
        if (entries[i].suffix == ".evt") {
            std::string image = image_of(entries[i].bytes, i);
            if (std::find(images.begin(), images.end(), image) == images.end())
                images.push_back(std::move(image));
        }
    std::size_t strings = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const Entry& e = entries[i];
        std::string stem = std::to_string(i);
        if (e.suffix == ".str" && strings < images.size()) stem = images[strings++];
        const fs::path path = s.capture / (stem + std::string(e.suffix));
        std::error_code ec;
        if (fs::symlink_status(path, ec).type() == fs::file_type::not_found) create(s, path, e);
    }
}

// As run_program.cpp: the NVTX side, the CUDA side, then the regions of the record.
void read_like_run(const fs::path& dir) {
    constexpr std::int64_t start_ns = 1'000'000'000, end_ns = 2'000'000'000;
    const measure::NvtxCapture capture = measure::read_nvtx_capture(dir, end_ns, 2);
    const measure::GpuRun gpu = measure::read_gpu_run(dir, collectors::gpu::Interval{start_ns, end_ns});
    (void)measure::gpu_counters(gpu);
    const auto ops = measure::place_gpu_operations(gpu, capture);
    static const std::optional<std::regex> model{std::regex("model|forward")};
    const auto regions = measure::aggregate_regions({&capture}, model, 100);
    (void)measure::covered_s(capture, [](const measure::RegionInstance&) { return true; });
    // The record and the trace are written with nlohmann's default (strict) dump, and what run
    // writes, report must read back: no quantity outside its domain.
    const nlohmann::json written = regions;
    (void)written.dump(1);
    if (const auto bad = find_out_of_domain(written))
        fuzz::finding("run would write a region report refuses: " + *bad);
    store::ChromeTrace trace(start_ns);
    int sort_index = 0;
    measure::add_gpu_tracks(trace, gpu, ops, capture, 1000, "run 1", 1, sort_index);
    (void)trace.dump();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const Scratch scratch;
    fs::create_directory(scratch.capture);
    unpack_into(scratch, unpack(data, size));
    fuzz::only_throws<fuzz::NoException>([&] { read_like_run(scratch.capture); });
    // run_program removes each execution's capture directory once it is read.
    std::error_code ec;
    fs::remove_all(scratch.capture, ec);
    if (ec) fuzz::finding("the capture directory could not be removed: " + ec.message());
    scratch.check_outside_unchanged();
    return 0;
}
