#include "agent/run/interned.hpp"

#include <mutex>
#include <unordered_set>

namespace ceiling::measure {

namespace {

struct TextHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

// Node-based, so an element's address never changes; never destroyed, so a handle held by a
// static outlives nothing it points to.
struct Pool {
    std::mutex mutex;
    std::unordered_set<std::string, TextHash, std::equal_to<>> strings;
};

Pool& pool() {
    static Pool* p = new Pool;
    return *p;
}

const std::string* intern(std::string_view s) {
    Pool& p = pool();
    const std::lock_guard lock(p.mutex);
    if (const auto it = p.strings.find(s); it != p.strings.end()) return &*it;
    return &*p.strings.emplace(s).first;
}

}  // namespace

// Constant-initialised where the library's std::string constructor is constexpr (GCC 12);
// clang 14 initialises it dynamically, which is as safe: a handle only takes its address.
const std::string Interned::empty_text{};

// One empty string, the default one.
Interned::Interned(std::string_view s) : p_(s.empty() ? &empty_text : intern(s)) {}

}  // namespace ceiling::measure
