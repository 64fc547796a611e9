// libpfm4 told to assume a CPU model (LIBPFM_FORCE_PMU, read by pfm_initialize) encodes
// the FLOP events of Sapphire Rapids and Zen into the perf_event type/config the vendors
// document. Expected values: Intel core events are PERF_TYPE_RAW (4) with
// config = umask << 8 | event code (Intel SDM vol. 3B, IA32_PERFEVTSELx layout); AMD's
// PERF_CTL layout puts the unit mask in the same place for these events.

#include <gtest/gtest.h>

#include "collectors/pfm_api.hpp"
#include "collectors/pmu_tables.hpp"

namespace ceiling::collectors {
namespace {

#ifndef CEILING_HAVE_PFM
TEST(PfmEncoding, NeedsLibpfm4) { GTEST_SKIP() << "built without libpfm4"; }
#else

struct Expected {
    const char* event;
    std::uint64_t config;
};

void expect_encodings(const char* pmu, std::initializer_list<Expected> expected) {
    const auto pfm = make_pfm_api(pmu);
    ASSERT_TRUE(pfm->status().available) << pfm->status().reason;
    ASSERT_EQ(pfm->host_pmu(), pmu) << "libpfm4 did not take LIBPFM_FORCE_PMU=" << pmu;
    for (const auto& e : expected) {
        const PfmResult r = pfm->encode(e.event);
        ASSERT_TRUE(r.value) << e.event << ": " << r.error;
        EXPECT_EQ(r.value->encoding.type, static_cast<std::uint32_t>(PERF_TYPE_RAW)) << e.event;
        EXPECT_EQ(r.value->encoding.config, e.config)
            << e.event << ": got 0x" << std::hex << r.value->encoding.config;
    }
}

TEST(PfmEncoding, SapphireRapidsFlopEvents) {
    // FP_ARITH_INST_RETIRED is event 0xC7; its umasks select width and precision:
    //   SCALAR_DOUBLE      0x01 -> 0x01 << 8 | 0xC7 = 0x01C7
    //   SCALAR_SINGLE      0x02 -> 0x02C7
    //   128B_PACKED_DOUBLE 0x04 -> 0x04C7
    //   128B_PACKED_SINGLE 0x08 -> 0x08C7
    //   256B_PACKED_DOUBLE 0x10 -> 0x10C7
    //   256B_PACKED_SINGLE 0x20 -> 0x20C7
    //   512B_PACKED_DOUBLE 0x40 -> 0x40C7
    //   512B_PACKED_SINGLE 0x80 -> 0x80C7
    // FP_ARITH_INST_RETIRED2 (AVX512-FP16) is event 0xCF: 512B_PACKED_HALF 0x10 -> 0x10CF.
    // LONGEST_LAT_CACHE.MISS is event 0x2E umask 0x41 -> 0x412E.
    expect_encodings("spr", {{"FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", 0x01c7},
                             {"FP_ARITH_INST_RETIRED:SCALAR_SINGLE", 0x02c7},
                             {"FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE", 0x04c7},
                             {"FP_ARITH_INST_RETIRED:128B_PACKED_SINGLE", 0x08c7},
                             {"FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE", 0x10c7},
                             {"FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE", 0x20c7},
                             {"spr::FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE", 0x40c7},
                             {"spr::FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE", 0x80c7},
                             {"FP_ARITH_INST_RETIRED2:512B_PACKED_HALF", 0x10cf},
                             {"LONGEST_LAT_CACHE:MISS", 0x412e}});
}

TEST(PfmEncoding, Zen4AndZen3FlopEvents) {
    // RETIRED_SSE_AVX_FLOPS is event 0x03. Unit mask ANY sets every subevent:
    //   Zen 4: ADD_SUB 0x01 | MULT 0x02 | DIV 0x04 | MAC 0x08 | BFLOAT_MAC 0x10 = 0x1F
    //          -> 0x1F << 8 | 0x03 = 0x1F03
    //   Zen 3: ADD_SUB 0x01 | MULT 0x02 | DIV 0x04 | MAC 0x08 = 0x0F -> 0x0F03
    // ANY_DATA_CACHE_FILLS_FROM_SYSTEM is event 0x44; DRAM_IO_NEAR 0x08 | DRAM_IO_FAR 0x40
    //   = 0x48 -> 0x4844.
    expect_encodings("amd64_fam19h_zen4",
                     {{"RETIRED_SSE_AVX_FLOPS:ANY", 0x1f03},
                      {"RETIRED_SSE_AVX_FLOPS:MAC_FLOPS", 0x0803},
                      {"ANY_DATA_CACHE_FILLS_FROM_SYSTEM:DRAM_IO_NEAR:DRAM_IO_FAR", 0x4844}});
    expect_encodings("amd64_fam19h_zen3",
                     {{"amd64_fam19h_zen3::RETIRED_SSE_AVX_FLOPS:ANY", 0x0f03}});
}

TEST(PfmEncoding, EveryTableEventEncodesForItsModel) {
    // The tables name events; libpfm4 must know each one for the model it is listed under.
    for (const UarchEvents& t : uarch_events()) {
        const auto pfm = make_pfm_api(std::string(t.pmu));
        if (pfm->host_pmu() != t.pmu) {
            ADD_FAILURE() << "libpfm4 does not know PMU model " << t.pmu;
            continue;
        }
        std::vector<std::string_view> events = {t.cycles, t.instructions};
        for (const auto& f : t.flops) events.push_back(f.event);
        for (const auto& r : t.dram_bytes)
            if (r.sysfs_pmu.empty())
                for (const auto& b : r.terms) events.push_back(b.event);
        for (std::string_view e : events) {
            const PfmResult r = pfm->encode(std::string(t.pmu) + "::" + std::string(e));
            EXPECT_TRUE(r.value) << t.pmu << "::" << e << ": " << r.error;
        }
    }
}

TEST(PfmEncoding, UnknownNamesAreErrorsAndNamesAreListed) {
    const auto pfm = make_pfm_api("spr");
    const PfmResult r = pfm->encode("FP_ARITH_INST_RETIRD:SCALAR_DOUBLE");
    EXPECT_FALSE(r.value);
    EXPECT_FALSE(r.error.empty());
    const auto names = pfm->event_names("spr");
    EXPECT_NE(std::find(names.begin(), names.end(), "FP_ARITH_INST_RETIRED:SCALAR_DOUBLE"),
              names.end());
}

TEST(PfmEncoding, ForcingRestoresTheEnvironment) {
    setenv("LIBPFM_FORCE_PMU", "skx", 1);
    { const auto forced = make_pfm_api("spr"); }
    ASSERT_NE(std::getenv("LIBPFM_FORCE_PMU"), nullptr);
    EXPECT_STREQ(std::getenv("LIBPFM_FORCE_PMU"), "skx");
    unsetenv("LIBPFM_FORCE_PMU");
    { const auto forced = make_pfm_api("spr"); }
    EXPECT_EQ(std::getenv("LIBPFM_FORCE_PMU"), nullptr);
}

#endif

}  // namespace
}  // namespace ceiling::collectors
