#pragma once
// JSON glue shared by every serialisable type: optionals as null, enums by name (an
// unknown name is an error, never silently the first enumerator).

#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

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

// A member of a file that could not be read, named by its path from the top:
// "regions[3].unclosed: type must be boolean, but is string" (the JSON library's own words
// name no field).
struct FieldError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

namespace json_detail {
// "[json.exception.type_error.302] type must be ..." -> "type must be ..."
inline std::string library_words(const std::exception& e) {
    std::string w = e.what();
    const auto end = w.find("] ");
    if (w.starts_with("[json.exception.") && end != std::string::npos) w.erase(0, end + 2);
    return w;
}
// "key" before what went wrong below it: "key.rest: why", "key[3].rest: why", "key: why".
template <typename F>
void naming(const std::string& key, F&& read) {
    try {
        read();
    } catch (const FieldError& e) {
        const std::string inner = e.what();
        throw FieldError(key + (inner.starts_with("[") ? "" : ".") + inner);
    } catch (const nlohmann::json::exception& e) {
        throw FieldError(key + ": " + library_words(e));
    } catch (const std::invalid_argument& e) {  // a wrong type found here, an unknown enum name
        throw FieldError(key + ": " + e.what());
    }
}
template <typename T>
struct is_vector : std::false_type {};
template <typename T>
struct is_vector<std::vector<T>> : std::true_type {};
template <>
struct is_vector<std::vector<bool>> : std::false_type {};
}  // namespace json_detail

// `j` into `out`; the elements of a list each named by their index.
template <typename T>
void read_json(const nlohmann::json& j, T& out) {
    if constexpr (json_detail::is_vector<T>::value) {
        if (!j.is_array()) throw std::invalid_argument(std::string("type must be array, but is ") + j.type_name());
        out.clear();
        out.reserve(j.size());
        for (std::size_t i = 0; i < j.size(); ++i)
            json_detail::naming("[" + std::to_string(i) + "]", [&] { read_json(j[i], out.emplace_back()); });
    } else {
        j.get_to(out);
    }
}

// A member that must be there, read into `out`; errors name it (FieldError).
template <typename T>
void get_field(const nlohmann::json& j, const std::string& key, T& out) {
    if (!j.is_object()) throw std::invalid_argument(std::string("type must be object, but is ") + j.type_name());
    const auto it = j.find(key);
    if (it == j.end()) throw FieldError(key + ": missing");
    json_detail::naming(key, [&] { read_json(*it, out); });
}

// Reads an optional member: absent or null both mean "not known"; errors name it.
template <typename T>
void get_optional(const nlohmann::json& j, const char* key, std::optional<T>& out) {
    out.reset();
    if (!j.is_object()) throw std::invalid_argument(std::string("type must be object, but is ") + j.type_name());
    if (auto it = j.find(key); it != j.end() && !it->is_null())
        json_detail::naming(key, [&] { read_json(*it, out.emplace()); });
}

}  // namespace ceiling
