#pragma once
// The vocabulary every part of ceiling shares: what a piece of work is, which precision
// and which execution engine it runs on. Names are tables kept in step with the enums.

#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

namespace ceiling {

enum class Precision { fp64, fp32, fp16, bf16, tf32, int8 };
inline constexpr std::array<std::string_view, 6> precision_names = {"fp64", "fp32", "fp16",
                                                                    "bf16", "tf32", "int8"};

// The execution resource whose roof applies to a piece of work. A kernel on AMX tiles or
// tensor cores is compared with the matrix roof, never with the FMA roof (otherwise a
// library GEMM reads as 1000% of peak).
//   scalar: one lane (x86 scalar FMA)
//   vector: SIMD FMA / dot-product units on a CPU, CUDA cores on a GPU
//   matrix: AMX tiles on a CPU, tensor cores on a GPU
enum class Engine { scalar, vector, matrix };
inline constexpr std::array<std::string_view, 3> engine_names = {"scalar", "vector", "matrix"};

enum class Device { cpu, gpu };
inline constexpr std::array<std::string_view, 2> device_names = {"cpu", "gpu"};

template <typename E, std::size_t N>
std::string_view enum_name(E e, const std::array<std::string_view, N>& names) {
    return names.at(static_cast<std::size_t>(e));
}
template <typename E, std::size_t N>
std::optional<E> enum_parse(std::string_view s, const std::array<std::string_view, N>& names) {
    for (std::size_t i = 0; i < N; ++i)
        if (names[i] == s) return static_cast<E>(i);
    return std::nullopt;
}

inline std::string_view to_string(Precision p) { return enum_name(p, precision_names); }
inline std::string_view to_string(Engine e) { return enum_name(e, engine_names); }
inline std::string_view to_string(Device d) { return enum_name(d, device_names); }
inline std::optional<Precision> parse_precision(std::string_view s) {
    return enum_parse<Precision>(s, precision_names);
}
inline std::optional<Engine> parse_engine(std::string_view s) {
    return enum_parse<Engine>(s, engine_names);
}
inline std::optional<Device> parse_device(std::string_view s) {
    return enum_parse<Device>(s, device_names);
}

// What a piece of work does, known analytically (reference kernels, declared regions) or
// from counters. Operations count one FMA as 2 (multiply and add), for integer dot
// products likewise one multiply-accumulate as 2.
struct Work {
    Precision precision = Precision::fp32;
    Engine engine = Engine::vector;
    Device device = Device::cpu;
    double ops = 0;                // operations per execution
    double compulsory_bytes = 0;   // fewest bytes: each input read once, each output written once
    double working_set_bytes = 0;  // bytes touched; decides which memory level serves it
    // Of compulsory_bytes, those stored (each output once); absent = the mix of loads and
    // stores is unknown. Decides which stream kernel's bandwidth roof judges the work
    // (diagnosis.cpp): a read-only stream reaches more bytes/s than one with stores.
    std::optional<double> written_bytes;

    // Operations per byte; NaN when no bytes are known (an unknown is not zero).
    double intensity() const {
        return compulsory_bytes > 0 ? ops / compulsory_bytes : std::nan("");
    }
};

}  // namespace ceiling
