#include "collectors/pfm_api.hpp"

#include <cstdlib>
#include <cstring>
#include <mutex>

#ifdef CEILING_HAVE_PFM
#include <perfmon/pfmlib_perf_event.h>
#endif

namespace ceiling::collectors {

#ifdef CEILING_HAVE_PFM
namespace {

std::mutex& pfm_mutex() {
    static std::mutex m;
    return m;
}

std::optional<int> pmu_id(std::string_view name) {
    int i = 0;
    pfm_for_all_pmus(i) {
        pfm_pmu_info_t info{};
        info.size = sizeof info;
        if (pfm_get_pmu_info(static_cast<pfm_pmu_t>(i), &info) != PFM_SUCCESS) continue;
        if (info.name && name == info.name) return i;
    }
    return std::nullopt;
}

class SystemPfmApi final : public PfmApi {
  public:
    explicit SystemPfmApi(std::optional<std::string> forced) : forced_(std::move(forced)) {
        std::lock_guard<std::mutex> lock(pfm_mutex());
        if (forced_) {
            // LIBPFM_FORCE_PMU is read by pfm_initialize(); terminate first so it is read again.
            if (const char* old = std::getenv("LIBPFM_FORCE_PMU")) saved_ = old;
            setenv("LIBPFM_FORCE_PMU", forced_->c_str(), 1);
            pfm_terminate();
        }
        rc_ = pfm_initialize();
    }
    ~SystemPfmApi() override {
        if (!forced_) return;
        std::lock_guard<std::mutex> lock(pfm_mutex());
        if (saved_)
            setenv("LIBPFM_FORCE_PMU", saved_->c_str(), 1);
        else
            unsetenv("LIBPFM_FORCE_PMU");
        pfm_terminate();
        pfm_initialize();
    }

    Capability status() const override {
        if (rc_ != PFM_SUCCESS)
            return Capability::no(std::string("libpfm4 failed to initialise: ") +
                                  pfm_strerror(rc_));
        return Capability::yes("libpfm4 " + version());
    }

    std::string version() const override {
#ifdef CEILING_PFM_RELEASE
        return CEILING_PFM_RELEASE;
#else
        const int v = pfm_get_version();
        return std::to_string(PFM_MAJ_VERSION(v)) + "." + std::to_string(PFM_MIN_VERSION(v));
#endif
    }

    std::optional<std::string> host_pmu() const override {
        if (rc_ != PFM_SUCCESS) return std::nullopt;
        // pfm_terminate() leaves earlier models flagged active, so after a re-initialisation
        // the forced model is not necessarily the first active one: name it directly.
        if (forced_ && pmu_id(*forced_)) return forced_;
        std::optional<std::string> architectural;
        int i = 0;
        pfm_for_all_pmus(i) {
            pfm_pmu_info_t info{};
            info.size = sizeof info;
            if (pfm_get_pmu_info(static_cast<pfm_pmu_t>(i), &info) != PFM_SUCCESS) continue;
            if (!info.is_present || info.type != PFM_PMU_TYPE_CORE || !info.name) continue;
            // ix86arch is the architectural fallback: a specific model is better.
            if (std::strcmp(info.name, "ix86arch") == 0)
                architectural = info.name;
            else
                return std::string(info.name);
        }
        return architectural;
    }

    PfmResult encode(std::string_view event) const override {
        PfmResult out;
        if (rc_ != PFM_SUCCESS) {
            out.error = std::string("libpfm4 failed to initialise: ") + pfm_strerror(rc_);
            return out;
        }
        perf_event_attr attr{};
        attr.size = sizeof attr;
        char* fstr = nullptr;
        pfm_perf_encode_arg_t arg{};
        arg.size = sizeof arg;
        arg.attr = &attr;
        arg.fstr = &fstr;
        // A bare name resolves against the first active model; when forced, that might be a
        // stale one (see host_pmu), so qualify it with the forced model.
        std::string name(event);
        if (forced_ && name.find("::") == std::string::npos) name = *forced_ + "::" + name;
        // Privilege levels are left to the caller (PerfEventSet decides exclude_kernel
        // from what perf_event_paranoid allows); libpfm keeps them out of config for perf.
        const int rc = pfm_get_os_event_encoding(name.c_str(), PFM_PLM0 | PFM_PLM3,
                                                 PFM_OS_PERF_EVENT_EXT, &arg);
        if (rc != PFM_SUCCESS) {
            out.error = pfm_strerror(rc);
            std::free(fstr);
            return out;
        }
        PfmEncoding e;
        e.encoding = {attr.type, attr.config, attr.config1, attr.config2};
        e.canonical = fstr ? fstr : name;
        std::free(fstr);
        out.value = std::move(e);
        return out;
    }

    std::vector<std::string> event_names(std::string_view pmu) const override {
        std::vector<std::string> names;
        if (rc_ != PFM_SUCCESS) return names;
        const auto id = pmu_id(pmu);
        if (!id) return names;
        pfm_pmu_info_t pinfo{};
        pinfo.size = sizeof pinfo;
        if (pfm_get_pmu_info(static_cast<pfm_pmu_t>(*id), &pinfo) != PFM_SUCCESS) return names;
        for (int e = pinfo.first_event; e != -1; e = pfm_get_event_next(e)) {
            pfm_event_info_t info{};
            info.size = sizeof info;
            if (pfm_get_event_info(e, PFM_OS_NONE, &info) != PFM_SUCCESS || !info.name) continue;
            names.emplace_back(info.name);
            for (int a = 0; a < info.nattrs; ++a) {
                pfm_event_attr_info_t ai{};
                ai.size = sizeof ai;
                if (pfm_get_event_attr_info(e, a, PFM_OS_NONE, &ai) != PFM_SUCCESS) continue;
                if (ai.type == PFM_ATTR_UMASK && ai.name)
                    names.push_back(std::string(info.name) + ":" + ai.name);
            }
        }
        return names;
    }

  private:
    std::optional<std::string> forced_;
    std::optional<std::string> saved_;
    int rc_ = PFM_ERR_NOINIT;
};

}  // namespace

std::unique_ptr<PfmApi> make_pfm_api(std::optional<std::string> forced_pmu) {
    return std::make_unique<SystemPfmApi>(std::move(forced_pmu));
}

#else  // no libpfm4: the same interface, saying why nothing can be encoded

namespace {
class AbsentPfmApi final : public PfmApi {
  public:
    Capability status() const override {
        return Capability::no("ceiling was built without libpfm4",
                              "install libpfm4-dev (scripts/setup does) and rebuild");
    }
    std::string version() const override { return {}; }
    std::optional<std::string> host_pmu() const override { return std::nullopt; }
    PfmResult encode(std::string_view) const override {
        return {std::nullopt, "ceiling was built without libpfm4"};
    }
    std::vector<std::string> event_names(std::string_view) const override { return {}; }
};
}  // namespace

std::unique_ptr<PfmApi> make_pfm_api(std::optional<std::string>) {
    return std::make_unique<AbsentPfmApi>();
}

#endif

}  // namespace ceiling::collectors
