#include "kernels/cpu_features.hpp"

#include <asm/prctl.h>
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace ceiling::kernels {
namespace {

struct Regs {
    unsigned a = 0, b = 0, c = 0, d = 0;
};

Regs cpuid(unsigned leaf, unsigned sub = 0) {
    Regs r;
    __cpuid_count(leaf, sub, r.a, r.b, r.c, r.d);
    return r;
}

unsigned long long xgetbv0() {
    unsigned lo = 0, hi = 0;
    asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (static_cast<unsigned long long>(hi) << 32) | lo;
}

bool bit(unsigned v, int n) { return ((v >> n) & 1u) != 0; }

std::string regs_string(std::initializer_list<unsigned> words) {
    std::string s;
    for (unsigned w : words)
        for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((w >> (8 * i)) & 0xff));
    s.erase(std::find(s.begin(), s.end(), '\0'), s.end());
    return s;
}

CpuFeatures detect() {
    CpuFeatures f;
    const unsigned max_leaf = __get_cpuid_max(0, nullptr);
    const Regs l0 = cpuid(0);
    f.vendor = regs_string({l0.b, l0.d, l0.c});
    const Regs l1 = cpuid(1);
    const int base_family = static_cast<int>((l1.a >> 8) & 0xf);
    const int base_model = static_cast<int>((l1.a >> 4) & 0xf);
    f.family = base_family == 0xf ? base_family + static_cast<int>((l1.a >> 20) & 0xff) : base_family;
    f.model = (base_family == 0x6 || base_family == 0xf)
                  ? base_model + (static_cast<int>((l1.a >> 16) & 0xf) << 4)
                  : base_model;
    f.stepping = static_cast<int>(l1.a & 0xf);
    f.hypervisor = bit(l1.c, 31);
    if (f.hypervisor) {
        const Regs h = cpuid(0x40000000);
        f.hypervisor_vendor = regs_string({h.b, h.c, h.d});
    }
    if (__get_cpuid_max(0x80000000, nullptr) >= 0x80000004) {
        const Regs b2 = cpuid(0x80000002), b3 = cpuid(0x80000003), b4 = cpuid(0x80000004);
        f.brand = regs_string({b2.a, b2.b, b2.c, b2.d, b3.a, b3.b, b3.c, b3.d, b4.a, b4.b, b4.c, b4.d});
        f.brand.erase(0, f.brand.find_first_not_of(' '));
    }

    f.sse2 = bit(l1.d, 26);
    // The OS must save the wider registers on context switch (XCR0), or the feature is unusable.
    const bool osxsave = bit(l1.c, 27);
    const unsigned long long xcr0 = osxsave ? xgetbv0() : 0;
    const bool os_avx = (xcr0 & 0x6) == 0x6;            // XMM and YMM state
    const bool os_avx512 = os_avx && (xcr0 & 0xe0) == 0xe0;  // opmask, ZMM_Hi256, Hi16_ZMM
    const bool os_amx = (xcr0 & 0x60000) == 0x60000;     // XTILECFG and XTILEDATA
    f.avx = os_avx && bit(l1.c, 28);
    f.fma = f.avx && bit(l1.c, 12);
    if (max_leaf >= 7) {
        const Regs l7 = cpuid(7, 0);
        const Regs l7s1 = cpuid(7, 1);
        f.avx2 = f.avx && bit(l7.b, 5);
        f.avx512f = os_avx512 && bit(l7.b, 16);
        f.avx512bw = f.avx512f && bit(l7.b, 30);
        f.avx512vl = f.avx512f && bit(l7.b, 31);
        f.avx512_vnni = f.avx512f && bit(l7.c, 11);
        f.avx512_fp16 = f.avx512f && bit(l7.d, 23);
        f.avx512_bf16 = f.avx512f && bit(l7s1.a, 5);
        f.avx_vnni = f.avx2 && bit(l7s1.a, 4);
        f.amx_tile = os_amx && bit(l7.d, 24);
        f.amx_bf16 = f.amx_tile && bit(l7.d, 22);
        f.amx_int8 = f.amx_tile && bit(l7.d, 25);
    }
    return f;
}

struct Named {
    const char* name;
    bool CpuFeatures::*flag;
};
constexpr Named feature_table[] = {
    {"sse2", &CpuFeatures::sse2},         {"avx", &CpuFeatures::avx},
    {"avx2", &CpuFeatures::avx2},         {"fma", &CpuFeatures::fma},
    {"avx512f", &CpuFeatures::avx512f},   {"avx512bw", &CpuFeatures::avx512bw},
    {"avx512vl", &CpuFeatures::avx512vl}, {"avx512_vnni", &CpuFeatures::avx512_vnni},
    {"avx512_bf16", &CpuFeatures::avx512_bf16}, {"avx512_fp16", &CpuFeatures::avx512_fp16},
    {"avx_vnni", &CpuFeatures::avx_vnni}, {"amx_tile", &CpuFeatures::amx_tile},
    {"amx_bf16", &CpuFeatures::amx_bf16}, {"amx_int8", &CpuFeatures::amx_int8},
};

}  // namespace

std::vector<std::string> CpuFeatures::names() const {
    std::vector<std::string> out;
    for (const auto& f : feature_table)
        if (this->*f.flag) out.emplace_back(f.name);
    return out;
}

bool CpuFeatures::has(std::string_view name) const {
    for (const auto& f : feature_table)
        if (name == f.name) return this->*f.flag;
    return false;
}

const CpuFeatures& cpu_features() {
    static const CpuFeatures f = detect();
    return f;
}

namespace {
// "48K", "2048K", "32M" (sysfs cache sizes) -> bytes; 0 when unreadable.
std::size_t parse_cache_size(const std::string& text) {
    std::size_t pos = 0;
    unsigned long long v = 0;
    try {
        v = std::stoull(text, &pos);
    } catch (...) {
        return 0;
    }
    const char unit = pos < text.size() ? text[pos] : ' ';
    const unsigned long long scale = unit == 'K' ? 1ull << 10 : unit == 'M' ? 1ull << 20 : unit == 'G' ? 1ull << 30 : 1;
    return static_cast<std::size_t>(v * scale);
}

std::string read_line(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}
}  // namespace

const CacheSizes& cache_sizes() {
    static const CacheSizes c = [] {
        CacheSizes out;
        std::size_t* sizes[3] = {&out.l1d, &out.l2, &out.l3};
        bool found[3] = {false, false, false};
        // The kernel's view first (sysfs, what lscpu shows): in a VM glibc's CPUID-based
        // sysconf can report the host's whole L3 (320 MiB on a 2-vCPU Zen 4 guest whose
        // sysfs says 32 MiB).
        for (int i = 0; i < 8; ++i) {
            const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
            const std::string level = read_line(dir + "level"), type = read_line(dir + "type");
            if (level.empty()) break;
            const int l = level[0] - '0';
            if (l < 1 || l > 3 || type == "Instruction") continue;
            if (const auto bytes = parse_cache_size(read_line(dir + "size")); bytes > 0) {
                *sizes[l - 1] = bytes;
                found[l - 1] = true;
            }
        }
        const int names[3] = {_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL2_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE};
        for (int i = 0; i < 3; ++i)
            if (const long v = sysconf(names[i]); !found[i] && v > 0) *sizes[i] = static_cast<std::size_t>(v);
        return out;
    }();
    return c;
}

std::string request_amx_permission() {
    if (!cpu_features().amx_tile) return "the CPU or the OS does not support AMX tiles";
    constexpr int xfeature_xtiledata = 18;
#ifdef ARCH_REQ_XCOMP_PERM
    const long rc = syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, xfeature_xtiledata);
#else
    const long rc = syscall(SYS_arch_prctl, 0x1023, xfeature_xtiledata);
#endif
    if (rc != 0)
        return std::string("arch_prctl(ARCH_REQ_XCOMP_PERM) refused: ") + std::strerror(errno) +
               " (needs Linux >= 5.16 with AMX enabled)";
    return {};
}

}  // namespace ceiling::kernels
