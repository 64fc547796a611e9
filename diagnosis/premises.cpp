#include "diagnosis/premises.hpp"

#include <array>

namespace ceiling {
namespace {

// Cores busy at or above which two of them stored at once may be the case.
constexpr double two_cores_busy_min = 1.5;

struct PremiseRow {
    Premise premise;
    std::string_view name;
    bool (*holds)(const Evidence&);
};

constexpr std::array<PremiseRow, 3> premises = {{
    {Premise::own_code, "own_code", [](const Evidence& e) { return !e.library_op; }},
    // A library's dense-tensor kernel computes its addresses (strides, indices it was given);
    // only the program's own code may walk a list, a tree or a hash chain.
    {Premise::loads_may_depend, "loads_may_depend", [](const Evidence& e) { return !e.library_op; }},
    {Premise::stores_from_two_threads, "stores_from_two_threads",
     [](const Evidence& e) {
         return e.busy_cores && *e.busy_cores >= two_cores_busy_min &&
                (!e.written_bytes || *e.written_bytes > 0);
     }},
}};

const PremiseRow& row(Premise p) { return premises[static_cast<std::size_t>(p)]; }

}  // namespace

bool licensed(Premise p, const Evidence& e) { return row(p).holds(e); }
std::string_view premise_name(Premise p) { return row(p).name; }

}  // namespace ceiling
