#include "agent/inject/cuda_activity_file.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <cxxabi.h>
#include <nlohmann/json.hpp>

namespace ceiling::inject {
namespace {

using nlohmann::json;
namespace g = collectors::gpu;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

json span(std::int64_t start, std::int64_t end) { return {{"start_ns", start}, {"end_ns", end}}; }

// nlohmann casts a floating-point number to an integer type without a range check (undefined
// beyond it): an integer field holding anything but an integer makes the line malformed.
template <typename T>
T integer(const json& v) {
    if (!v.is_number_integer())
        throw json::type_error::create(302, "an integer field holds a " + std::string(v.type_name()), &v);
    return v.get<T>();
}

template <typename T>
T get(const json& j, const char* key, T otherwise) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return otherwise;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return integer<T>(*it);
    return it->get<T>();
}

void read_line(const json& j, CudaActivityFile& f) {
    const auto type = j.at("type").get<std::string>();
    const auto start = get<std::int64_t>(j, "start_ns", 0), end = get<std::int64_t>(j, "end_ns", 0);
    if (type == "header") {
        f.pid = integer<int>(j.at("pid"));
        f.load_ns = integer<std::uint64_t>(j.at("load_ns"));
        f.metrics_requested = get<bool>(j, "metrics", false);
    } else if (type == "kernel") {
        g::KernelActivity k;
        k.name = j.at("name").get<std::string>();
        k.device = get<std::uint32_t>(j, "device", 0);
        k.context = get<std::uint32_t>(j, "context", 0);
        k.stream = get<std::uint32_t>(j, "stream", 0);
        k.correlation = get<std::uint32_t>(j, "correlation", 0);
        k.start_ns = start;
        k.end_ns = end;
        for (auto [key, dims] : {std::pair{"grid", &k.grid}, std::pair{"block", &k.block}})
            if (j.contains(key))
                for (std::size_t d = 0; d < dims->size(); ++d) (*dims)[d] = integer<std::int32_t>(j.at(key).at(d));
        k.registers_per_thread = get<int>(j, "registers", 0);
        k.shared_memory_bytes = get<std::int64_t>(j, "shared_bytes", 0);
        k.graph_id = get<std::uint32_t>(j, "graph", 0);
        f.log.kernels.push_back(std::move(k));
    } else if (type == "copy") {
        g::CopyActivity c;
        c.kind = g::parse_copy_kind(get<std::string>(j, "kind", "unknown")).value_or(g::CopyKind::unknown);
        c.src = g::parse_memory_kind(get<std::string>(j, "src", "unknown")).value_or(g::MemoryKind::unknown);
        c.dst = g::parse_memory_kind(get<std::string>(j, "dst", "unknown")).value_or(g::MemoryKind::unknown);
        c.bytes = get<std::uint64_t>(j, "bytes", 0);
        c.device = get<std::uint32_t>(j, "device", 0);
        c.context = get<std::uint32_t>(j, "context", 0);
        c.stream = get<std::uint32_t>(j, "stream", 0);
        c.correlation = get<std::uint32_t>(j, "correlation", 0);
        c.start_ns = start;
        c.end_ns = end;
        f.log.copies.push_back(c);
    } else if (type == "memset") {
        f.log.memsets.push_back({get<std::uint64_t>(j, "bytes", 0), get<std::uint32_t>(j, "device", 0),
                                 get<std::uint32_t>(j, "context", 0), get<std::uint32_t>(j, "stream", 0),
                                 get<std::uint32_t>(j, "correlation", 0), start, end});
    } else if (type == "sync") {
        f.log.syncs.push_back({g::parse_sync_kind(get<std::string>(j, "kind", "unknown")).value_or(g::SyncKind::unknown),
                               get<std::uint32_t>(j, "context", 0), get<std::uint32_t>(j, "stream", 0),
                               get<std::uint32_t>(j, "correlation", 0), start, end});
    } else if (type == "launch") {
        f.log.launches.push_back({get<std::uint32_t>(j, "correlation", 0),
                                  get<std::uint32_t>(j, "pid", 0), get<std::uint32_t>(j, "tid", 0),
                                  start, end});
    } else if (type == "overhead") {
        f.log.overheads.push_back({get<std::string>(j, "kind", "unknown"), start, end});
    } else if (type == "dropped") {
        f.log.dropped_records += get<std::uint64_t>(j, "records", 0);
    } else if (type == "metrics") {
        KernelMetrics m;
        m.context = get<std::uint32_t>(j, "context", 0);
        m.index = get<std::size_t>(j, "index", 0);
        m.name = get<std::string>(j, "name", "");
        for (const auto& [k, v] : j.at("values").items()) m.values.emplace(k, v.get<double>());
        f.metrics.push_back(std::move(m));
    } else if (type == "error") {
        auto line = get<std::string>(j, "what", "") + ": " + get<std::string>(j, "reason", "");
        if (const auto fix = get<std::string>(j, "fix", ""); !fix.empty()) line += " (fix: " + fix + ")";
        f.errors.push_back(std::move(line));
    } else if (type == "end") {
        f.complete = true;
    }
    // Unknown types come from a newer writer: skipped, like unknown fields.
}

}  // namespace

std::string header_line(int pid, std::uint64_t load_ns, std::optional<unsigned> cupti_version, bool metrics) {
    json j = {{"type", "header"}, {"version", cuda_file_version}, {"pid", pid}, {"load_ns", load_ns},
              {"clock", "CLOCK_MONOTONIC"}, {"metrics", metrics}};
    j["cupti_version"] = cupti_version ? json(*cupti_version) : json(nullptr);
    return dump(j);
}

std::vector<std::string> activity_lines(const g::ActivityLog& log) {
    std::vector<std::string> out;
    for (const auto& k : log.kernels) {
        json j = {{"type", "kernel"}, {"name", k.name}, {"device", k.device}, {"context", k.context},
                  {"stream", k.stream}, {"correlation", k.correlation}, {"grid", k.grid}, {"block", k.block},
                  {"registers", k.registers_per_thread}, {"shared_bytes", k.shared_memory_bytes}, {"graph", k.graph_id}};
        j.update(span(k.start_ns, k.end_ns));
        out.push_back(dump(j));
    }
    for (const auto& c : log.copies) {
        json j = {{"type", "copy"}, {"kind", g::to_string(c.kind)}, {"src", g::to_string(c.src)},
                  {"dst", g::to_string(c.dst)}, {"bytes", c.bytes}, {"device", c.device}, {"context", c.context},
                  {"stream", c.stream}, {"correlation", c.correlation}};
        j.update(span(c.start_ns, c.end_ns));
        out.push_back(dump(j));
    }
    for (const auto& m : log.memsets) {
        json j = {{"type", "memset"}, {"bytes", m.bytes}, {"device", m.device}, {"context", m.context},
                  {"stream", m.stream}, {"correlation", m.correlation}};
        j.update(span(m.start_ns, m.end_ns));
        out.push_back(dump(j));
    }
    for (const auto& s : log.syncs) {
        json j = {{"type", "sync"}, {"kind", g::to_string(s.kind)}, {"context", s.context}, {"stream", s.stream},
                  {"correlation", s.correlation}};
        j.update(span(s.start_ns, s.end_ns));
        out.push_back(dump(j));
    }
    for (const auto& o : log.overheads) {
        json j = {{"type", "overhead"}, {"kind", o.kind}};
        j.update(span(o.start_ns, o.end_ns));
        out.push_back(dump(j));
    }
    for (const auto& l : log.launches) {
        json j = {{"type", "launch"},
                  {"correlation", l.correlation},
                  {"pid", l.process},
                  {"tid", l.thread}};
        j.update(span(l.start_ns, l.end_ns));
        out.push_back(dump(j));
    }
    if (log.dropped_records) out.push_back(dump({{"type", "dropped"}, {"records", log.dropped_records}}));
    return out;
}

std::string metrics_line(std::uint32_t context, std::size_t index, const std::string& name, const g::MetricValues& values) {
    json v = json::object();
    for (const auto& [k, x] : values) v[k] = x;
    return dump({{"type", "metrics"}, {"context", context}, {"index", index}, {"name", name}, {"values", v}});
}

std::string error_line(const std::string& what, const std::string& reason, const std::string& fix) {
    return dump({{"type", "error"}, {"what", what}, {"reason", reason}, {"fix", fix}});
}

std::string end_line(std::int64_t t_ns) { return dump({{"type", "end"}, {"t_ns", t_ns}}); }

std::string demangled(const std::string& symbol) {
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> d(
        abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), &std::free);
    return status == 0 && d ? std::string(d.get()) : symbol;
}

CudaActivityFile read_cuda_activity_file(const std::filesystem::path& path) {
    // The program writes this directory: a FIFO would block the open and a link to a device
    // never ends, so only a regular file (not through a link) is read.
    std::error_code ec;
    if (!std::filesystem::is_regular_file(std::filesystem::symlink_status(path, ec)))
        throw std::invalid_argument(path.string() + ": not a regular file");
    std::ifstream in(path);
    if (!in) throw std::invalid_argument("cannot open " + path.string());
    return read_cuda_activity_file(in, path);
}

CudaActivityFile read_cuda_activity_file(std::istream& in, const std::filesystem::path& path) {
    CudaActivityFile f;
    f.path = path;
    bool header = false;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        try {
            const auto j = json::parse(line);
            if (j.value("type", "") == "header") {
                const int version = get<int>(j, "version", 0);
                if (version != cuda_file_version)
                    throw std::invalid_argument(path.string() + ": CUDA activity file version " +
                                                std::to_string(version) + ", this ceiling reads " +
                                                std::to_string(cuda_file_version));
                header = true;
            }
            read_line(j, f);
        } catch (const json::exception&) {
            ++f.malformed_lines;
        }
    }
    if (!header) throw std::invalid_argument(path.string() + ": not a CUDA activity file (no header line)");
    return f;
}

std::vector<CudaActivityFile> read_cuda_activity_dir(const std::filesystem::path& dir) {
    std::vector<CudaActivityFile> files;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        const auto name = e.path().filename().string();
        if (name.size() > 11 && name.ends_with(".cuda.jsonl")) files.push_back(read_cuda_activity_file(e.path()));
    }
    std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.load_ns < b.load_ns; });
    return files;
}

}  // namespace ceiling::inject
