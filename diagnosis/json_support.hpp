#pragma once
// JSON glue shared by every serialisable type: optionals as null, enums by name (an
// unknown name is an error, never silently the first enumerator).

#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "diagnosis/work.hpp"

namespace nlohmann {
template <typename T>
struct adl_serializer<std::optional<T>> {
    static void to_json(json& j, const std::optional<T>& v) {
        if (v)
            j = *v;
        else
            j = nullptr;
    }
    static void from_json(const json& j, std::optional<T>& v) {
        if (j.is_null())
            v.reset();
        else
            v = j.get<T>();
    }
};
}  // namespace nlohmann

namespace ceiling {

template <typename E, std::size_t N>
E enum_from_json(const nlohmann::json& j, const std::array<std::string_view, N>& names,
                 const char* what) {
    const auto s = j.get<std::string>();
    if (auto e = enum_parse<E>(s, names)) return *e;
    throw std::invalid_argument(std::string("unknown ") + what + " '" + s + "'");
}

inline void to_json(nlohmann::json& j, Precision p) { j = std::string(to_string(p)); }
inline void from_json(const nlohmann::json& j, Precision& p) {
    p = enum_from_json<Precision>(j, precision_names, "precision");
}
inline void to_json(nlohmann::json& j, Engine e) { j = std::string(to_string(e)); }
inline void from_json(const nlohmann::json& j, Engine& e) {
    e = enum_from_json<Engine>(j, engine_names, "engine");
}
inline void to_json(nlohmann::json& j, Device d) { j = std::string(to_string(d)); }
inline void from_json(const nlohmann::json& j, Device& d) {
    d = enum_from_json<Device>(j, device_names, "device");
}

// Reads an optional member: absent or null both mean "not known".
template <typename T>
void get_optional(const nlohmann::json& j, const char* key, std::optional<T>& out) {
    if (auto it = j.find(key); it != j.end() && !it->is_null())
        out = it->get<T>();
    else
        out.reset();
}

}  // namespace ceiling
