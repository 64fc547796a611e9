#include "diagnosis/premises.hpp"

#include <array>
#include <cctype>

namespace ceiling {
namespace {

// Cores busy at or above which two of them stored at once may be the case.
constexpr double two_cores_busy_min = 1.5;

struct PremiseRow {
    Premise premise;
    std::string_view name;
    bool (*holds)(const Evidence&);
};

// An op time under which a framework's fixed cost per op (dispatch, checks, the output's
// allocation: a few microseconds on a CPU) is a visible share of it.
constexpr double short_op_s = 100e-6;

constexpr std::array<PremiseRow, 9> premises = {{
    {Premise::measured_bound, "measured_bound", [](const Evidence&) { return true; }},
    {Premise::own_code, "own_code", [](const Evidence& e) { return !e.library_op; }},
    // A library's dense-tensor kernel computes its addresses (strides, indices it was given);
    // only the program's own code may walk a list, a tree or a hash chain.
    {Premise::loads_may_depend, "loads_may_depend", [](const Evidence& e) { return !e.library_op; }},
    {Premise::stores_from_two_threads, "stores_from_two_threads",
     [](const Evidence& e) {
         return e.busy_cores && *e.busy_cores >= two_cores_busy_min &&
                (!e.written_bytes || *e.written_bytes > 0);
     }},
    // Threads that synchronise: more than one worked on it, by the sampler's count of its
    // working threads or the cores they kept busy.
    {Premise::threads_shared, "threads_shared",
     [](const Evidence& e) {
         return (e.threads && *e.threads >= 2) || (e.busy_cores && *e.busy_cores >= two_cores_busy_min);
     }},
    {Premise::accelerator, "accelerator", [](const Evidence& e) { return e.accelerator.value_or(false); }},
    {Premise::interpreted, "interpreted", [](const Evidence& e) { return e.interpreted.value_or(false); }},
    {Premise::library_op, "library_op", [](const Evidence& e) { return e.library_op; }},
    {Premise::short_ops, "short_ops", [](const Evidence& e) { return e.op_s && *e.op_s < short_op_s; }},
}};

const PremiseRow& row(Premise p) { return premises[static_cast<std::size_t>(p)]; }

}  // namespace

bool licensed(Premise p, const Evidence& e) { return row(p).holds(e); }
std::string_view premise_name(Premise p) { return row(p).name; }

std::optional<bool> runs_interpreter(const std::vector<std::string>& command) {
    if (command.empty()) return std::nullopt;
    std::string name = command.front().substr(command.front().find_last_of('/') + 1);
    // python3.11, pypy3, node18: the name without its version.
    while (!name.empty() && (std::isdigit(static_cast<unsigned char>(name.back())) || name.back() == '.'))
        name.pop_back();
    for (const std::string_view i : {"python", "pypy", "perl", "ruby", "node", "Rscript", "julia", "lua"})
        if (name == i) return true;
    return false;
}

}  // namespace ceiling
