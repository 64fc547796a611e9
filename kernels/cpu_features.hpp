#pragma once
// Which instruction sets this CPU and OS let us run, for choosing roof and reference
// kernels at run time. One binary serves every x86-64 machine: nothing here assumes
// an ISA, and a feature the OS has not enabled (XSAVE state) counts as absent.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ceiling::kernels {

struct CpuFeatures {
    bool sse2 = false;
    bool avx = false;
    bool avx2 = false;
    bool fma = false;
    bool avx512f = false;
    bool avx512bw = false;
    bool avx512vl = false;
    bool avx512_vnni = false;
    bool avx512_bf16 = false;
    bool avx512_fp16 = false;
    bool avx_vnni = false;
    bool amx_tile = false;  // CPU support and OS XSAVE support; permission is separate
    bool amx_bf16 = false;
    bool amx_int8 = false;

    std::string vendor;  // CPUID leaf 0
    std::string brand;   // CPUID leaves 0x80000002..4
    int family = 0;      // display family (base + extended)
    int model = 0;       // display model (base + extended << 4)
    int stepping = 0;
    bool hypervisor = false;
    std::string hypervisor_vendor;  // CPUID leaf 0x40000000, e.g. "KVMKVMKVM"

    // Names of the present features ("avx512f", "amx_bf16", ...), for reports.
    std::vector<std::string> names() const;
    bool has(std::string_view name) const;
};

// Read once (CPUID and XGETBV) and cached.
const CpuFeatures& cpu_features();

// Data cache sizes in bytes, for choosing cache blocks at run time (a core's L1d and L2,
// the whole L3 of cpu0). From sysfs (the kernel's view, what lscpu prints), else sysconf
// (glibc reads CPUID); a size neither reports reads as the fallback noted.
struct CacheSizes {
    std::size_t l1d = 32 << 10;   // fallback 32 KiB
    std::size_t l2 = 1 << 20;     // fallback 1 MiB
    std::size_t l3 = 8 << 20;     // fallback 8 MiB
};
const CacheSizes& cache_sizes();

// Linux requires a process to ask for the AMX tile-data state before using it
// (arch_prctl ARCH_REQ_XCOMP_PERM). Returns an empty string when permitted, else why not.
std::string request_amx_permission();

}  // namespace ceiling::kernels
