#include "agent/output/printable_names.hpp"

#include <cstdio>

namespace ceiling::output {

namespace {
bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

// U+0080-U+009F (C1 controls; 0x9b is CSI to some terminals), as UTF-8: 0xc2 0x80-0x9f.
bool is_c1_at(std::string_view s, std::size_t i) {
    return i + 1 < s.size() && static_cast<unsigned char>(s[i]) == 0xc2 &&
           static_cast<unsigned char>(s[i + 1]) >= 0x80 && static_cast<unsigned char>(s[i + 1]) <= 0x9f;
}

bool needs_escaping(std::string_view s) {
    for (std::size_t i = 0; i < s.size(); ++i)
        if (is_control(static_cast<unsigned char>(s[i])) || is_c1_at(s, i)) return true;
    return false;
}

std::string hex(unsigned char c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    return buf;
}
}  // namespace

std::string escaped(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (is_control(c)) {
            out += hex(c);
        } else if (is_c1_at(s, i)) {
            out += hex(static_cast<unsigned char>(s[++i]));
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

std::optional<RunRecord> with_printable_names(const RunRecord& record) {
    bool any = false;
    auto check = [&](const std::string& s) { any = any || needs_escaping(s); };
    for (const auto& r : record.regions) {
        check(r.path);
        check(r.name);
    }
    for (const auto& x : record.executions)
        for (const auto& p : x.processes) check(p.name);
    for (const auto& a : record.command) check(a);
    for (const auto* rows : {&record.op_summary.types, &record.op_summary.models, &record.op_summary.unformulated})
        for (const auto& row : *rows) check(row.name);
    if (!any) return std::nullopt;

    RunRecord copy = record;
    auto fix = [](std::string& s) {
        if (needs_escaping(s)) s = escaped(s);
    };
    for (auto& r : copy.regions) {
        fix(r.path);
        fix(r.name);
        fix(r.parent);
        fix(r.measurement.name);
    }
    for (auto& x : copy.executions)
        for (auto& p : x.processes) fix(p.name);
    for (auto& a : copy.command) fix(a);
    fix(copy.whole.name);
    fix(copy.model_region);
    for (auto* rows : {&copy.op_summary.types, &copy.op_summary.models, &copy.op_summary.unformulated})
        for (auto& row : *rows) fix(row.name);
    if (copy.budgets)
        for (auto& b : copy.budgets->regions) fix(b.region);
    return copy;
}

}  // namespace ceiling::output
