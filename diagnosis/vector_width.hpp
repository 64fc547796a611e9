#pragma once
// Whether a CPU region's compute fraction is that of narrower vectors than the roof it is
// judged against: a matmul at 42 % of the 512-bit FMA roof runs at 84 % of the 256-bit one,
// as a library's AVX2 kernel would (OPENBLAS_CORETYPE=Haswell on an AVX-512 machine), and
// "latency bound: dependency stalls, ..." sends its engineer to the wrong place. Without a
// PMU the width its code ran cannot be counted; the profile's roofs at every width say
// whether one explains the rate, and so what to check first.

#include <map>
#include <optional>
#include <string>

#include "diagnosis/diagnosis.hpp"
#include "diagnosis/machine_profile.hpp"
#include "diagnosis/premises.hpp"
#include "diagnosis/thresholds.hpp"

namespace ceiling {

struct WidthAdvice {
    Finding finding;
    std::string move;  // the first move's prefix, ending in "; then "
};

// For a latency-bound diagnosis (its compute fraction below near_roof) right of the ridge
// (or without bytes): the widest roof of the same
// precision, 1.3x or more below the one judged against (narrower vectors, or scalar code),
// at which its rate lies between near_roof and the roof's tolerance (the ratio of the two
// roofs' 1-thread values scales the fraction). `environment`: the program's allowlisted
// variables, of which those that pick a library's instruction set are named.
// `own_code`: the program's own compiled code (Premise::own_code); a library's op is never
// told to build with -march=native: its lever is the library's kernel for this CPU.
std::optional<WidthAdvice> narrower_vectors(const MachineProfile& profile, const Diagnosis& d,
                                            const Thresholds& t,
                                            const std::map<std::string, std::string>& environment,
                                            bool own_code = true);

// Adds narrower_vectors' finding to `d` and its move after the system's levers already at
// the front of d.first_move (cores idle, threads taking turns), before the roofline's part
// (the side of the ridge, then the table's move).
void weigh_vector_width(const MachineProfile& profile, Diagnosis& d, const Thresholds& t,
                        const std::map<std::string, std::string>& environment,
                        const Evidence& e = {});

}  // namespace ceiling
