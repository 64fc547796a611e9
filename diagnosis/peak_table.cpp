#include "diagnosis/peak_table.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

namespace ceiling {
namespace {

using P = Precision;
using E = Engine;

// Lanes x 2 for FMA; dot products: lanes x pairs-or-quads x 2.
//   vdpbf16ps zmm: 16 fp32 lanes, each += 2 bf16 products -> 16 x 2 x 2 = 64
//   vpdpbusd zmm:  16 int32 lanes, each += 4 u8 x s8 products -> 16 x 4 x 2 = 128
//   tdpbf16ps:     C[16x16 fp32] += A[16x32 bf16] B[32x16 bf16] -> 16 x 16 x 32 x 2 = 16384
//   tdpbusd:       C[16x16 s32] += A[16x64 u8] B[64x16 s8]     -> 16 x 16 x 64 x 2 = 32768
constexpr std::array<InstructionClass, 14> classes = {{
    {"fp64_scalar", P::fp64, E::scalar, "vfmadd231sd", 2, "scalar"},
    {"fp32_scalar", P::fp32, E::scalar, "vfmadd231ss", 2, "scalar"},
    {"fp64_fma128", P::fp64, E::vector, "vfmadd231pd xmm", 4, "128"},
    {"fp32_fma128", P::fp32, E::vector, "vfmadd231ps xmm", 8, "128"},
    {"fp64_fma256", P::fp64, E::vector, "vfmadd231pd ymm", 8, "256"},
    {"fp32_fma256", P::fp32, E::vector, "vfmadd231ps ymm", 16, "256"},
    {"fp64_fma512", P::fp64, E::vector, "vfmadd231pd zmm", 16, "512"},
    {"fp32_fma512", P::fp32, E::vector, "vfmadd231ps zmm", 32, "512"},
    {"fp16_fma512", P::fp16, E::vector, "vfmadd231ph zmm", 64, "512"},
    {"bf16_dot512", P::bf16, E::vector, "vdpbf16ps zmm", 64, "512"},
    {"int8_dot256", P::int8, E::vector, "vpdpbusd ymm", 64, "256"},
    {"int8_dot512", P::int8, E::vector, "vpdpbusd zmm", 128, "512"},
    {"bf16_amx", P::bf16, E::matrix, "tdpbf16ps", 16384, "amx"},
    {"int8_amx", P::int8, E::matrix, "tdpbusd", 32768, "amx"},
}};

// Two FMA pipes at every width a core implements; the usual layout since Haswell.
constexpr std::array<Throughput, 6> fma2_avx2 = {{
    {"fp64_scalar", 2},
    {"fp32_scalar", 2},
    {"fp64_fma128", 2},
    {"fp32_fma128", 2},
    {"fp64_fma256", 2},
    {"fp32_fma256", 2},
}};

// Skylake-SP / Cascade Lake / Ice Lake-SP server cores: two 512-bit FMA units on Xeon
// Platinum and Gold 6xxx, one (port 0 fused from p0+p1) on Bronze, Silver and most Gold
// 5xxx; CPUID's model number is the same for both, so 512-bit rows list both counts and
// the measurement picks. VNNI runs on the same units.
constexpr char skx_fma_units[] =
    "Intel Xeon Scalable datasheets: 2 AVX-512 FMA units on Platinum/Gold 6xxx, 1 on "
    "Bronze/Silver/most Gold 5xxx";
constexpr std::array<Throughput, 10> skx = {{
    {"fp64_scalar", 2},
    {"fp32_scalar", 2},
    {"fp64_fma128", 2},
    {"fp32_fma128", 2},
    {"fp64_fma256", 2},
    {"fp32_fma256", 2},
    {"fp64_fma512", 2, 1, skx_fma_units},
    {"fp32_fma512", 2, 1, skx_fma_units},
    {"int8_dot512", 2, 1, skx_fma_units},
    {"int8_dot256", 2},
}};

// Sapphire/Emerald/Granite Rapids (Golden Cove / Redwood Cove server cores): two 512-bit
// FMA ports (p0, p5), AVX512-FP16 FMAs on the same ports, VNNI on p0/p5; one AMX TMUL
// tile product per 16 cycles. vdpbf16ps zmm: no manual gives its throughput; ceiling
// measured one per 2 cycles on an Emerald Rapids with 12 and with 24 independent chains
// (so throughput-, not latency-bound), i.e. bf16 dot products give the fp32 FMA rate: on
// these cores bf16 pays off through AMX, not AVX512-BF16. Its row says so.
constexpr std::array<Throughput, 14> spr = {{
    {"fp64_scalar", 2},
    {"fp32_scalar", 2},
    {"fp64_fma128", 2},
    {"fp32_fma128", 2},
    {"fp64_fma256", 2},
    {"fp32_fma256", 2},
    {"fp64_fma512", 2},
    {"fp32_fma512", 2},
    {"fp16_fma512", 2},
    {"bf16_dot512", 0.5, 0,
     "ceiling's own measurement on an Emerald Rapids (12 and 24 independent chains); no "
     "manual figure"},
    {"int8_dot256", 2},
    {"int8_dot512", 2},
    {"bf16_amx", 1.0 / 16},
    {"int8_amx", 1.0 / 16},
}};

// Zen and Zen+: two 128-bit FMA pipes (FP0, FP1); a 256-bit FMA is split into two 128-bit
// halves, so one per cycle.
constexpr std::array<Throughput, 6> zen1 = {{
    {"fp64_scalar", 2},
    {"fp32_scalar", 2},
    {"fp64_fma128", 2},
    {"fp32_fma128", 2},
    {"fp64_fma256", 1},
    {"fp32_fma256", 1},
}};

// Zen 4: 256-bit datapaths; a 512-bit instruction occupies a pipe for two cycles.
constexpr std::array<Throughput, 11> zen4 = {{
    {"fp64_scalar", 2},
    {"fp32_scalar", 2},
    {"fp64_fma128", 2},
    {"fp32_fma128", 2},
    {"fp64_fma256", 2},
    {"fp32_fma256", 2},
    {"fp64_fma512", 1},
    {"fp32_fma512", 1},
    {"bf16_dot512", 1},
    {"int8_dot256", 2},
    {"int8_dot512", 1},
}};

// Zen 5 on server and desktop parts (Turin, Granite Ridge) and Strix Halo: full 512-bit
// datapaths, two FMA pipes. Confirmed here on a Turin guest (family 1Ah model 02h): every
// vector roof 95-104 % of this row at its own clock.
constexpr std::array<Throughput, 11> zen5 = {{
    {"fp64_scalar", 2},
    {"fp32_scalar", 2},
    {"fp64_fma128", 2},
    {"fp32_fma128", 2},
    {"fp64_fma256", 2},
    {"fp32_fma256", 2},
    {"fp64_fma512", 2},
    {"fp32_fma512", 2},
    {"bf16_dot512", 2},
    {"int8_dot256", 2},
    {"int8_dot512", 2},
}};

// Zen 5 on Strix Point and Krackan Point (mobile): the FP datapath is 256 bits wide, so a
// 512-bit FMA takes a pipe for two cycles as on Zen 4 (reviews' measurements; AMD's guide
// does not list it per part). Listed with both counts so that a measurement decides.
constexpr char zen5_mobile_datapath[] =
    "reviews of Strix Point (Chips and Cheese, David Huang): 256-bit FP datapath, 512-bit "
    "ops in two halves";
constexpr std::array<Throughput, 11> zen5_mobile = {{
    {"fp64_scalar", 2},
    {"fp32_scalar", 2},
    {"fp64_fma128", 2},
    {"fp32_fma128", 2},
    {"fp64_fma256", 2},
    {"fp32_fma256", 2},
    {"fp64_fma512", 1, 2, zen5_mobile_datapath},
    {"fp32_fma512", 1, 2, zen5_mobile_datapath},
    {"bf16_dot512", 1, 2, zen5_mobile_datapath},
    {"int8_dot256", 2},
    {"int8_dot512", 1, 2, zen5_mobile_datapath},
}};

constexpr std::array haswell_models = {0x3C, 0x3F, 0x45, 0x46, 0x3D, 0x47, 0x4F, 0x56};
constexpr std::array skylake_client_models = {0x4E, 0x5E, 0x8E, 0x9E, 0xA5, 0xA6};
constexpr std::array alder_lake_models = {0x97, 0x9A, 0xB7, 0xBA, 0xBF, 0xAA, 0xAC, 0xC5, 0xC6};
constexpr std::array skx_models = {0x55, 0x6A, 0x6C};
constexpr std::array spr_models = {0x8F, 0xCF, 0xAD, 0xAE};
constexpr std::array zen1_models_17 = {0x01, 0x08, 0x11, 0x18, 0x20};
constexpr std::array zen2_models_17 = {0x31, 0x47, 0x60, 0x68, 0x71, 0x90, 0x98, 0xA0};
constexpr std::array zen3_models_19 = {0x01, 0x08, 0x21, 0x44, 0x50};
constexpr std::array zen4_models_19 = {0x10, 0x11, 0x18, 0x61, 0x74, 0x75, 0x78, 0xA0};
constexpr std::array zen5_models_1a = {0x02, 0x11, 0x44, 0x70};
constexpr std::array zen5_mobile_models_1a = {0x20, 0x24, 0x60};

constexpr char agner[] = "Agner Fog instruction tables; uops.info";
constexpr char intel_opt[] = "Intel 64 and IA-32 Optimization Reference Manual; uops.info";
constexpr char amd_opt[] = "AMD Software Optimization Guide for the Zen family";
constexpr char amd_opt_17h[] = "AMD Software Optimization Guide for Family 17h Processors";

const std::array<Microarchitecture, 11> uarchs = {{
    {"Haswell/Broadwell", "GenuineIntel", 6, haswell_models, fma2_avx2, agner},
    {"Skylake (client)", "GenuineIntel", 6, skylake_client_models, fma2_avx2, agner},
    {"Alder Lake / Raptor Lake / Meteor Lake (P-core)", "GenuineIntel", 6, alder_lake_models,
     fma2_avx2, intel_opt},
    {"Skylake-SP / Cascade Lake / Ice Lake-SP", "GenuineIntel", 6, skx_models, skx, intel_opt},
    {"Sapphire Rapids / Emerald Rapids / Granite Rapids", "GenuineIntel", 6, spr_models, spr,
     intel_opt},
    {"Zen / Zen+", "AuthenticAMD", 0x17, zen1_models_17, zen1, amd_opt_17h},
    {"Zen 2", "AuthenticAMD", 0x17, zen2_models_17, fma2_avx2, amd_opt},
    {"Zen 3", "AuthenticAMD", 0x19, zen3_models_19, fma2_avx2, amd_opt},
    {"Zen 4", "AuthenticAMD", 0x19, zen4_models_19, zen4, amd_opt},
    {"Zen 5", "AuthenticAMD", 0x1A, zen5_models_1a, zen5, amd_opt},
    {"Zen 5 (Strix Point / Krackan Point)", "AuthenticAMD", 0x1A, zen5_mobile_models_1a,
     zen5_mobile, amd_opt},
}};

const Throughput* find_row(const Microarchitecture& uarch, std::string_view roof) {
    for (const auto& t : uarch.throughput)
        if (t.roof == roof) return &t;
    return nullptr;
}

std::string per_cycle(double ipc) {
    char buf[32];
    std::snprintf(buf, sizeof buf, ipc >= 0.75 ? "%.2f/cycle" : "1 per %.1f cycles",
                  ipc >= 0.75 ? ipc : 1 / ipc);
    return buf;
}

// How far apart a measured and a tabled count may be and still agree: the measured clock
// is taken at slightly less than the roof's full density (a little faster), and a shared
// host adds a few percent.
constexpr double agree_within = 0.15;
// Counts a core can plausibly sustain, for a CPU the table does not know: vector pipes
// issue a few per cycle; a tile unit takes 8 to 32 cycles per tile product (16 on SPR).
constexpr std::array plausible_vector = {0.25, 0.5, 1.0, 2.0, 3.0, 4.0};
constexpr std::array plausible_matrix = {1.0 / 32, 1.0 / 16, 1.0 / 8};

bool agrees(double measured, double table) {
    return std::abs(measured / table - 1) <= agree_within;
}

}  // namespace

std::span<const InstructionClass> instruction_classes() { return classes; }

const InstructionClass* find_instruction_class(std::string_view roof) {
    for (const auto& c : classes)
        if (c.roof == roof) return &c;
    return nullptr;
}

std::span<const Microarchitecture> microarchitectures() { return uarchs; }

const Microarchitecture* find_microarchitecture(std::string_view vendor, int family, int model) {
    for (const auto& u : uarchs)
        if (u.vendor == vendor && u.family == family &&
            std::find(u.models.begin(), u.models.end(), model) != u.models.end())
            return &u;
    return nullptr;
}

std::optional<double> instructions_per_cycle(const Microarchitecture& uarch,
                                             std::string_view roof) {
    const auto* row = find_row(uarch, roof);
    return row ? std::optional(row->instructions_per_cycle) : std::nullopt;
}

PortBasis decide_instructions_per_cycle(const Microarchitecture* uarch, std::string_view roof,
                                        std::optional<double> measured) {
    PortBasis b;
    const Throughput* row = uarch ? find_row(*uarch, roof) : nullptr;
    const std::string m = measured ? ", measured " + per_cycle(*measured) : std::string();
    if (row) {
        const std::string where = std::string(uarch->name) + " table row (" +
                                  std::string(row->source.empty() ? uarch->source : row->source) +
                                  ")";
        double ipc = row->instructions_per_cycle;
        if (row->alternative > 0) {
            if (measured && std::abs(*measured - row->alternative) < std::abs(*measured - ipc))
                ipc = row->alternative;
            b.source = where + ": " + per_cycle(row->instructions_per_cycle) + " or " +
                       per_cycle(row->alternative) + m +
                       (measured ? ": picks " + per_cycle(ipc) : ": unconfirmed, took the first");
        } else {
            b.source = where + ": " + per_cycle(ipc) + m;
            if (measured) b.source += agrees(*measured, ipc) ? ": confirmed" : ": DISAGREES";
        }
        b.instructions_per_cycle = ipc;
        b.disagrees = measured && !agrees(*measured, ipc);
        // Where the row lists two counts the measurement chose between them: the theory then
        // follows the measurement, and cannot confirm it.
        b.from_measurement = row->alternative > 0 && measured;
        return b;
    }
    const std::string unknown = uarch ? std::string(uarch->name) + " table has no row for this roof"
                                      : std::string("CPU not in the table");
    if (!measured || !(*measured > 0)) {
        b.source = unknown + ", nothing measured";
        return b;
    }
    const auto* cls = find_instruction_class(roof);
    const std::span<const double> plausible =
        cls && cls->engine == Engine::matrix ? std::span<const double>(plausible_matrix)
                                             : std::span<const double>(plausible_vector);
    const auto nearest =
        std::min_element(plausible.begin(), plausible.end(), [&](double a, double c) {
            return std::abs(std::log(a / *measured)) < std::abs(std::log(c / *measured));
        });
    if (!agrees(*measured, *nearest)) {
        b.source = unknown + m + ": no plausible count near it";
        return b;
    }
    b.instructions_per_cycle = *nearest;
    b.from_measurement = true;
    b.source = unknown + m + ": took " + per_cycle(*nearest);
    return b;
}

std::optional<double> theoretical_ops_per_s(const Microarchitecture& uarch, std::string_view roof,
                                            double clock_hz, int cores) {
    const auto* cls = find_instruction_class(roof);
    const auto ipc = instructions_per_cycle(uarch, roof);
    if (!cls || !ipc || !(clock_hz > 0) || cores < 1) return std::nullopt;
    return clock_hz * *ipc * cls->ops_per_instruction * cores;
}

namespace {

// Dense operations per clock per SM (a multiply-add counts 2), from NVIDIA's architecture
// whitepapers: CUDA-core FMA lanes x 2, tensor-core rates without sparsity.
struct SmRate {
    int cc_major, cc_minor;
    Precision precision;
    Engine engine;
    double ops_per_clock;
};
constexpr std::array<SmRate, 14> sm_rates = {{
    // Hopper GH100 (H100, H200): 128 FP32 and 64 FP64 lanes per SM; 4th-gen tensor cores.
    {9, 0, Precision::fp32, Engine::vector, 256},
    {9, 0, Precision::fp64, Engine::vector, 128},
    {9, 0, Precision::bf16, Engine::matrix, 4096},
    {9, 0, Precision::fp16, Engine::matrix, 4096},
    {9, 0, Precision::tf32, Engine::matrix, 2048},
    {9, 0, Precision::int8, Engine::matrix, 8192},
    {9, 0, Precision::fp64, Engine::matrix, 256},
    // Ampere GA100 (A100): 64 FP32 and 32 FP64 lanes per SM.
    {8, 0, Precision::fp32, Engine::vector, 128},
    {8, 0, Precision::fp64, Engine::vector, 64},
    {8, 0, Precision::bf16, Engine::matrix, 2048},
    {8, 0, Precision::fp16, Engine::matrix, 2048},
    {8, 0, Precision::tf32, Engine::matrix, 1024},
    {8, 0, Precision::int8, Engine::matrix, 4096},
    {8, 0, Precision::fp64, Engine::matrix, 128},
}};

std::string mhz(double hz) {
    return std::to_string(static_cast<long long>(hz / 1e6 + 0.5)) + " MHz";
}

}  // namespace

std::optional<Theoretical> gpu_theoretical_ops(int cc_major, int cc_minor, int multiprocessors,
                                               std::optional<double> clock_hz, Precision p,
                                               Engine e) {
    if (!clock_hz || multiprocessors <= 0) return std::nullopt;
    for (const auto& r : sm_rates)
        if (r.cc_major == cc_major && r.cc_minor == cc_minor && r.precision == p && r.engine == e) {
            std::ostringstream basis;
            basis << multiprocessors << " SMs x " << mhz(*clock_hz) << " (peak clock) x "
                  << r.ops_per_clock << " " << to_string(p) << " op/clock/SM";
            return Theoretical{multiprocessors * *clock_hz * r.ops_per_clock, basis.str()};
        }
    return std::nullopt;
}

std::optional<Theoretical> gpu_theoretical_dram(std::optional<double> memory_clock_hz,
                                                std::optional<int> bus_bits) {
    if (!memory_clock_hz || !bus_bits) return std::nullopt;
    return Theoretical{
        2.0 * *memory_clock_hz * *bus_bits / 8.0,
        "2 x " + mhz(*memory_clock_hz) + " x " + std::to_string(*bus_bits) + "-bit bus"};
}

std::optional<Theoretical> pcie_theoretical(const std::string& link_speed,
                                            const std::string& link_width) {
    double gts = 0;
    int width = 0;
    try {
        gts = std::stod(link_speed);
        width = std::stoi(link_width);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    if (gts <= 0 || width <= 0) return std::nullopt;
    const double coding = gts >= 8 ? 128.0 / 130.0 : 8.0 / 10.0;
    std::ostringstream basis;
    basis << link_speed << " x" << width << ", " << (gts >= 8 ? "128b/130b" : "8b/10b")
          << " coding, per direction";
    return Theoretical{gts * 1e9 * coding * width / 8.0, basis.str()};
}

}  // namespace ceiling
