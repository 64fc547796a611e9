#pragma once
// A string kept once for the life of the process, held by a pointer-sized handle.
//
// Why: a program may record hundreds of thousands of NVTX ranges under a handful of names,
// and each region instance carries its name, domain, path and parent's path. As std::strings
// those made an instance ~300 bytes whose copies, moves and destruction were a large share
// of reading a capture; as handles the instance is trivially copyable and destructible, and
// equal strings compare by address.
//
// The handle converts to const std::string& wherever one is taken (map keys, regexes,
// functions) and is assigned from any string, so an instance is written as before:
//     r.name = "gemm";  r.path = r.parent.str() + "/" + r.name.str();
// Interning is thread-safe; strings are never freed (they are the distinct names a run saw).

#include <compare>
#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace ceiling::measure {

class Interned {
public:
    Interned() : p_(&empty_text) {}  // inline: an instance default-constructs four
    Interned(std::string_view s);
    Interned(const std::string& s) : Interned(std::string_view(s)) {}
    Interned(const char* s) : Interned(std::string_view(s)) {}

    const std::string& str() const { return *p_; }
    operator const std::string&() const { return *p_; }
    operator std::string_view() const { return *p_; }
    const char* c_str() const { return p_->c_str(); }
    bool empty() const { return p_->empty(); }
    std::size_t size() const { return p_->size(); }

    // One address per distinct text: equality is a pointer compare; order is the text's.
    friend bool operator==(Interned a, Interned b) { return a.p_ == b.p_; }
    // Text compares for the other string types: without them a std::string would be interned
    // to be compared (the implicit constructor), a hash lookup under a lock.
    friend bool operator==(Interned a, const std::string& b) { return *a.p_ == b; }
    friend bool operator==(Interned a, std::string_view b) { return *a.p_ == b; }
    friend bool operator==(Interned a, const char* b) { return *a.p_ == b; }
    friend std::strong_ordering operator<=>(Interned a, Interned b) { return *a.p_ <=> *b.p_; }
    friend std::ostream& operator<<(std::ostream& os, Interned s) { return os << *s.p_; }

    std::size_t hash() const { return std::hash<const void*>()(p_); }

private:
    static const std::string empty_text;  // the default handle points here
    const std::string* p_;
};

}  // namespace ceiling::measure

template <>
struct std::hash<ceiling::measure::Interned> {
    std::size_t operator()(ceiling::measure::Interned s) const { return s.hash(); }
};
