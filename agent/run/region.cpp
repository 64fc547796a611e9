#include "agent/run/region.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <functional>
#include <type_traits>

namespace ceiling::measure {

// Copied, moved and freed by the hundred thousand when a program records many ranges: kept
// to plain bytes (interned strings, no owning members).
static_assert(std::is_trivially_copyable_v<RegionInstance> && std::is_trivially_destructible_v<RegionInstance>);

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

struct Multiplier {
    std::string_view suffix;
    double scale;
};
// Longest suffixes first so "Gi" is not read as "G" followed by garbage.
constexpr std::array<Multiplier, 9> multipliers = {{{"Ki", 1024.0},
                                                    {"Mi", 1048576.0},
                                                    {"Gi", 1073741824.0},
                                                    {"Ti", 1099511627776.0},
                                                    {"k", 1e3},
                                                    {"K", 1e3},
                                                    {"M", 1e6},
                                                    {"G", 1e9},
                                                    {"T", 1e12}}};

// A non-negative finite amount with an optional multiplier; an amount of bytes may end in
// "B" as the command line's do ("8MB", "12MiB", "512B"). Infinite after scaling is refused:
// a record must read back (bytes=2e19 stored null before).
std::optional<double> parse_amount(std::string_view text, bool bytes) {
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc()) return std::nullopt;
    std::string_view rest(end, static_cast<std::size_t>(text.data() + text.size() - end));
    if (bytes && !rest.empty() && rest.back() == 'B') rest.remove_suffix(1);
    const auto checked = [](double x) {
        return std::isfinite(x) && x >= 0 ? std::optional(x) : std::nullopt;
    };
    if (rest.empty()) return checked(v);
    for (const auto& m : multipliers)
        if (rest == m.suffix) return checked(v * m.scale);
    return std::nullopt;
}

// The largest double below 2^64: what a record's *_bytes fields may hold and read back
// (diagnosis/quantity_domains.cpp).
constexpr double max_declared_bytes = 18446744073709549568.0;

}  // namespace

DeclaredName parse_declared_work(std::string_view message) {
    DeclaredName out;
    const std::string_view t = trim(message);
    const auto open = t.rfind('{');
    if (t.empty() || t.back() != '}' || open == std::string_view::npos) {
        out.name = std::string(t);
        return out;
    }
    out.name = std::string(trim(t.substr(0, open)));
    std::string_view body = t.substr(open + 1, t.size() - open - 2);
    Work w;
    bool declared = false;
    auto fail = [&](const std::string& why) {
        DeclaredName bad;
        bad.name = std::string(t);
        bad.error = "region '" + std::string(t) + "': " + why;
        return bad;
    };
    while (!body.empty()) {
        const auto sep = body.find_first_of(" ,;\t");
        const std::string_view item = body.substr(0, sep);
        body = sep == std::string_view::npos ? std::string_view() : body.substr(sep + 1);
        if (item.empty()) continue;
        const auto eq = item.find('=');
        if (eq == std::string_view::npos)
            return fail("'" + std::string(item) + "' is not key=value");
        const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
        if (key == "ops" || key == "bytes" || key == "working_set" || key == "written") {
            const auto v = parse_amount(value, key != "ops");
            if (!v) return fail("'" + std::string(value) + "' is not a non-negative amount");
            // A record keeps byte amounts as 64-bit counts: more would not read back.
            if (key != "ops" && *v > max_declared_bytes)
                return fail("'" + std::string(value) + "' bytes is more than a 64-bit count holds");
            if (key == "written")
                w.written_bytes = *v;
            else
                (key == "ops"     ? w.ops
                 : key == "bytes" ? w.compulsory_bytes
                                  : w.working_set_bytes) = *v;
            declared = declared || (key != "working_set" && key != "written");
        } else if (key == "precision") {
            const auto p = parse_precision(value);
            if (!p) return fail("unknown precision '" + std::string(value) + "'");
            w.precision = *p;
        } else if (key == "engine") {
            const auto e = parse_engine(value);
            if (!e) return fail("unknown engine '" + std::string(value) + "'");
            w.engine = *e;
        } else if (key == "device") {
            const auto d = parse_device(value);
            if (!d) return fail("unknown device '" + std::string(value) + "'");
            w.device = *d;
        } else {
            return fail("unknown key '" + std::string(key) +
                        "' (ops, bytes, working_set, written, precision, engine, device)");
        }
    }
    // The stores among the bytes: decides which stream kernel's roof judges the region.
    if (w.written_bytes && *w.written_bytes > w.compulsory_bytes)
        return fail("written= is part of bytes=, so at most bytes= (" +
                    std::to_string(static_cast<long long>(w.compulsory_bytes)) + ")");
    if (declared) out.work = w;
    return out;
}

bool is_model_region(const std::regex& model, const std::string& name, const std::string& path) {
    return std::regex_search(name, model) || std::regex_search(path, model);
}

double covered_s(const NvtxCapture& capture,
                 const std::function<bool(const RegionInstance&)>& select,
                 std::pair<std::int64_t, std::int64_t>* ends) {
    // The union of spans taken in start order. Instances come by process, thread and start,
    // so one thread's are merged as they come; only when a start goes back (another thread)
    // are the spans collected and sorted (200 000 instances: 3 MB of fresh memory).
    struct Union {
        std::int64_t total = 0, begin = 0, end = 0;
        bool open = false;
        void add(std::int64_t b, std::int64_t e) {
            if (open && b <= end) {
                end = std::max(end, e);
                return;
            }
            if (open) total += end - begin;
            begin = b;
            end = e;
            open = true;
        }
        double seconds() const { return static_cast<double>(total + (open ? end - begin : 0)) * 1e-9; }
    };
    Union in_order;
    bool sorted = true, any = false;
    std::int64_t first = 0, last = 0;
    for (const auto& r : capture.instances) {
        if (!select(r)) continue;
        first = any ? std::min(first, r.start_ns) : r.start_ns;
        last = any ? std::max(last, r.end_ns) : r.end_ns;
        any = true;
        if (sorted && in_order.open && r.start_ns < in_order.begin) {
            sorted = false;
            if (!ends) break;  // the spans are collected below
        }
        if (sorted) in_order.add(r.start_ns, r.end_ns);
    }
    if (ends && any) *ends = {first, last};
    if (sorted) return in_order.seconds();
    std::vector<std::pair<std::int64_t, std::int64_t>> spans;
    for (const auto& r : capture.instances)
        if (select(r)) spans.emplace_back(r.start_ns, r.end_ns);
    std::sort(spans.begin(), spans.end());
    Union all;
    for (const auto& [b, e] : spans) all.add(b, e);
    return all.seconds();
}

}  // namespace ceiling::measure
