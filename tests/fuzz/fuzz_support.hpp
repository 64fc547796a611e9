#pragma once
// Shared by the fuzz targets. A reader may refuse bad input with the exception it documents;
// any other exception is a finding, printed with its type before abort() so that libFuzzer
// keeps the input (an exception escaping LLVMFuzzerTestOneInput would say less).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <typeinfo>

namespace ceiling::fuzz {

// For readers that document no refusal at all: no exception has this type.
struct NoException {};

template <typename Allowed, typename F>
void only_throws(F&& read) {
    try {
        read();
    } catch (const Allowed&) {
    } catch (const std::exception& e) {
        std::fprintf(stderr, "finding: unexpected exception %s: %s\n", typeid(e).name(), e.what());
        std::abort();
    } catch (...) {
        std::fprintf(stderr, "finding: unexpected exception of a non-std type\n");
        std::abort();
    }
}

// A finding that is not a crash (a property the reader promises was broken).
[[noreturn]] inline void finding(const std::string& what) {
    std::fprintf(stderr, "finding: %s\n", what.c_str());
    std::abort();
}

inline std::string text(const std::uint8_t* data, std::size_t size) {
    return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace ceiling::fuzz
