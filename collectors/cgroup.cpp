#include "collectors/cgroup.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

namespace ceiling::collectors {
namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    for (std::size_t start = 0;;) {
        const auto end = s.find(sep, start);
        out.push_back(s.substr(start, end == std::string_view::npos ? end : end - start));
        if (end == std::string_view::npos) return out;
        start = end + 1;
    }
}

bool lists(std::string_view comma_list, std::string_view name) {
    const auto items = split(comma_list, ',');
    return std::find(items.begin(), items.end(), name) != items.end();
}

struct Mount {
    std::string root;   // the hierarchy's path mounted there
    std::string point;  // where
    bool v2 = false;
    std::string options;  // v1: the controllers among the super options
};

// /proc/PID/mountinfo (proc(5)): "ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - TYPE
// SOURCE SUPER_OPTIONS".
std::vector<Mount> cgroup_mounts(std::string_view text) {
    std::vector<Mount> out;
    std::istringstream in{std::string(text)};
    for (std::string line; std::getline(in, line);) {
        std::istringstream fields(line);
        std::vector<std::string> f;
        for (std::string w; fields >> w;) f.push_back(w);
        const auto dash = std::find(f.begin(), f.end(), "-");
        if (f.size() < 5 || dash == f.end() || f.end() - dash < 4) continue;
        const std::string& type = dash[1];
        if (type != "cgroup" && type != "cgroup2") continue;
        out.push_back({f[3], f[4], type == "cgroup2", dash[3]});
    }
    return out;
}

struct Group {
    std::string path;  // as /proc/PID/cgroup names it
    std::string dir;   // its directory on the described machine
    std::string top;   // the mount point: the highest ancestor visible
    int version = 0;
};

// The directory of `pid`'s group in the hierarchy of `controller`: a v1 mount of that
// controller if there is one, else the v2 hierarchy.
std::optional<Group> group_of(std::string_view cgroup_text, const std::vector<Mount>& mounts,
                              std::string_view controller) {
    std::optional<std::string> v1_path, v2_path;
    std::istringstream in{std::string(cgroup_text)};
    for (std::string line; std::getline(in, line);) {
        const auto first = line.find(':');
        const auto second = first == std::string::npos ? first : line.find(':', first + 1);
        if (second == std::string::npos) continue;
        const std::string_view controllers =
            std::string_view(line).substr(first + 1, second - first - 1);
        const std::string path = line.substr(second + 1);
        if (line.compare(0, first, "0") == 0 && controllers.empty())
            v2_path = path;
        else if (lists(controllers, controller))
            v1_path = path;
    }
    auto place = [](const Mount& m, const std::string& path, int version) -> std::optional<Group> {
        // Inside a container without its own cgroup namespace the mount's root is the
        // container's group and the path names it from the host's root: the part below the
        // mount's root is what is visible.
        std::string rel = path;
        if (m.root != "/" && rel.compare(0, m.root.size(), m.root) == 0)
            rel = rel.substr(m.root.size());
        else if (m.root != "/")
            rel.clear();  // named from elsewhere: the mount itself is the group
        while (!rel.empty() && rel.back() == '/') rel.pop_back();
        return Group{path, m.point + rel, m.point, version};
    };
    if (v1_path)
        for (const auto& m : mounts)
            if (!m.v2 && lists(m.options, controller)) return place(m, *v1_path, 1);
    if (v2_path)
        for (const auto& m : mounts)
            if (m.v2) return place(m, *v2_path, 2);
    return std::nullopt;
}

// The group's directory and its ancestors up to the mount point, innermost first.
std::vector<std::string> upwards(const Group& g) {
    std::vector<std::string> dirs;
    for (std::string d = g.dir;;) {
        dirs.push_back(d);
        if (d.size() <= g.top.size()) break;
        const auto slash = d.rfind('/');
        if (slash == std::string::npos || slash < g.top.size()) {
            dirs.push_back(g.top);
            break;
        }
        d = d.substr(0, std::max<std::size_t>(slash, g.top.size()));
    }
    return dirs;
}

std::optional<CpuQuota> quota_in(const FsRoot& root, const std::string& dir, int version) {
    double quota = 0, period = 0;
    if (version == 1) {
        const auto q = root.read_int(dir + "/cpu.cfs_quota_us");
        const auto p = root.read_int(dir + "/cpu.cfs_period_us");
        if (!q || !p || *q <= 0 || *p <= 0) return std::nullopt;
        quota = static_cast<double>(*q);
        period = static_cast<double>(*p);
    } else {
        const auto line = root.read_line(dir + "/cpu.max");
        if (!line) return std::nullopt;
        const auto f = split(*line, ' ');
        if (f.size() != 2 || f[0] == "max") return std::nullopt;
        const auto q = parse_double(f[0]), p = parse_double(f[1]);
        if (!q || !p || *q <= 0 || *p <= 0) return std::nullopt;
        quota = *q;
        period = *p;
    }
    return CpuQuota{quota / period, period / 1e6, {}, dir + "/cpu.stat", version};
}

// v1 writes "no limit" as the largest page-aligned signed 64-bit value.
constexpr double unlimited_bytes = 1ULL << 60;

std::optional<double> memory_file_limit(const FsRoot& root, const std::string& path) {
    const auto line = root.read_line(path);
    if (!line || *line == "max") return std::nullopt;
    const auto v = parse_double(*line);
    if (!v || *v <= 0 || *v >= unlimited_bytes) return std::nullopt;
    return v;
}

// v2 also has memory.high: above it the group's allocations are throttled and its memory
// reclaimed hard (systemd's MemoryHigh=), so the footprint it can hold at speed is the
// lower of the two.
std::optional<double> memory_limit_in(const FsRoot& root, const std::string& dir, int version) {
    if (version == 1) return memory_file_limit(root, dir + "/memory.limit_in_bytes");
    auto limit = memory_file_limit(root, dir + "/memory.max");
    if (const auto high = memory_file_limit(root, dir + "/memory.high"))
        limit = std::min(limit.value_or(*high), *high);
    return limit;
}

}  // namespace

CgroupLimits read_cgroup_limits(const FsRoot& root, std::string_view pid) {
    CgroupLimits out;
    const std::string base = "/proc/" + std::string(pid);
    const auto cgroup = root.read_text(base + "/cgroup");
    const auto mountinfo = root.read_text(base + "/mountinfo");
    if (!cgroup || !mountinfo) return out;
    const auto mounts = cgroup_mounts(*mountinfo);
    if (const auto g = group_of(*cgroup, mounts, "cpu")) {
        for (const auto& dir : upwards(*g)) {
            auto q = quota_in(root, dir, g->version);
            if (q && (!out.cpu || q->cpus < out.cpu->cpus)) {
                // Named as the process sees it: the dirs above its own are its ancestors.
                q->group = dir == g->dir ? g->path : dir.substr(g->top.size());
                if (q->group.empty()) q->group = "/";
                out.cpu = std::move(q);
            }
        }
    }
    if (const auto g = group_of(*cgroup, mounts, "memory")) {
        for (const auto& dir : upwards(*g)) {
            const auto m = memory_limit_in(root, dir, g->version);
            if (m && (!out.memory_limit_bytes || *m < *out.memory_limit_bytes)) {
                out.memory_limit_bytes = m;
                out.memory_group = dir == g->dir ? g->path : dir.substr(g->top.size());
                if (out.memory_group.empty()) out.memory_group = "/";
            }
        }
    }
    return out;
}

std::optional<CpuThrottling> parse_cpu_stat(std::string_view text, int version) {
    std::optional<double> periods, throttled, time;
    std::istringstream in{std::string(text)};
    for (std::string key, value; in >> key >> value;) {
        const auto v = parse_double(value);
        if (!v) continue;
        if (key == "nr_periods") periods = v;
        if (key == "nr_throttled") throttled = v;
        if (version == 1 && key == "throttled_time") time = *v / 1e9;
        if (version == 2 && key == "throttled_usec") time = *v / 1e6;
    }
    if (!periods || !throttled || !time) return std::nullopt;
    return CpuThrottling{*periods, *throttled, *time};
}

std::optional<CpuThrottling> read_cpu_throttling(const FsRoot& root, const CpuQuota& quota) {
    const auto text = root.read_text(quota.stat_path);
    if (!text) return std::nullopt;
    return parse_cpu_stat(*text, quota.version);
}

CpuThrottling throttling_delta(const CpuThrottling& before, const CpuThrottling& after) {
    return {std::max(0.0, after.periods - before.periods),
            std::max(0.0, after.throttled_periods - before.throttled_periods),
            std::max(0.0, after.throttled_s - before.throttled_s)};
}

}  // namespace ceiling::collectors
