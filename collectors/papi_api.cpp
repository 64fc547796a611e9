#include "collectors/papi_api.hpp"

#include <mutex>

#ifdef CEILING_HAVE_PAPI
#include <papi.h>
#include <pthread.h>
#endif

namespace ceiling::collectors {

namespace {

#ifdef CEILING_HAVE_PAPI

unsigned long thread_id() { return static_cast<unsigned long>(pthread_self()); }

class SystemPapiApi final : public PapiApi {
  public:
    SystemPapiApi() {
        static std::once_flag once;
        static int init_rc = 0;
        std::call_once(once, [] {
            init_rc = PAPI_library_init(PAPI_VER_CURRENT);
            if (init_rc == PAPI_VER_CURRENT) {
                // Per-thread counting needs thread support; multiplexing needs its own init.
                PAPI_thread_init(thread_id);
                PAPI_multiplex_init();
            }
        });
        rc_ = init_rc;
    }

    PapiStatus status() override {
        PapiStatus s;
        s.version = std::to_string(PAPI_VERSION_MAJOR(PAPI_VERSION)) + "." +
                    std::to_string(PAPI_VERSION_MINOR(PAPI_VERSION)) + "." +
                    std::to_string(PAPI_VERSION_REVISION(PAPI_VERSION)) + "." +
                    std::to_string(PAPI_VERSION_INCREMENT(PAPI_VERSION));
        if (rc_ != PAPI_VER_CURRENT) {
            s.error = rc_ > 0 ? "PAPI library version mismatch" : PAPI_strerror(rc_);
            return s;
        }
        s.initialised = true;
        if (const PAPI_hw_info_t* hw = PAPI_get_hardware_info()) {
            s.virtual_machine = hw->virtualized != 0;
            s.vm_vendor = hw->virtual_vendor_string;
        }
        for (int c = 0; c < PAPI_num_components(); ++c) {
            const PAPI_component_info_t* info = PAPI_get_component_info(c);
            if (!info) continue;
            PapiComponent comp;
            comp.name = info->name;
            comp.description = info->description;
            comp.disabled = info->disabled != 0;
            comp.disabled_reason = info->disabled_reason;
            comp.counters = info->num_cntrs;
            comp.native_events = info->num_native_events;
            if (comp.name == "perf_event" && !comp.disabled) s.hardware_counters = comp.counters;
            s.components.push_back(std::move(comp));
        }
        return s;
    }

    bool event_exists(std::string_view name) override {
        if (rc_ != PAPI_VER_CURRENT) return false;
        return PAPI_query_named_event(std::string(name).c_str()) == PAPI_OK;
    }

    int start(const std::vector<std::string>& events, bool& multiplexed,
              std::string& error) override {
        multiplexed = false;
        if (rc_ != PAPI_VER_CURRENT) {
            error = "PAPI is not initialised";
            return -1;
        }
        int set = PAPI_NULL;
        int rc = PAPI_create_eventset(&set);
        if (rc == PAPI_OK) rc = add_all(set, events);
        if (rc == PAPI_ECNFLCT) {
            // More events than counters: a multiplexed set (bound to the CPU component
            // first, as PAPI requires) instead of dropping any.
            PAPI_cleanup_eventset(set);
            rc = PAPI_assign_eventset_component(set, 0);
            if (rc == PAPI_OK) rc = PAPI_set_multiplex(set);
            if (rc == PAPI_OK) rc = add_all(set, events);
            multiplexed = rc == PAPI_OK;
        }
        if (rc == PAPI_OK) rc = PAPI_start(set);
        if (rc != PAPI_OK) {
            error = PAPI_strerror(rc);
            if (set != PAPI_NULL) {
                PAPI_cleanup_eventset(set);
                PAPI_destroy_eventset(&set);
            }
            return -1;
        }
        return set;
    }

    bool stop(int handle, std::vector<long long>& values, std::string& error) override {
        int set = handle;
        int n = PAPI_num_events(set);
        if (n < 0) n = 0;
        values.assign(static_cast<std::size_t>(n), 0);
        const int rc = PAPI_stop(set, values.data());
        PAPI_cleanup_eventset(set);
        PAPI_destroy_eventset(&set);
        if (rc != PAPI_OK) {
            error = PAPI_strerror(rc);
            return false;
        }
        return true;
    }

  private:
    static int add_all(int set, const std::vector<std::string>& events) {
        for (const auto& e : events)
            if (const int rc = PAPI_add_named_event(set, e.c_str()); rc != PAPI_OK) return rc;
        return PAPI_OK;
    }
    int rc_ = 0;
};

#endif

class AbsentPapiApi final : public PapiApi {
  public:
    PapiStatus status() override {
        PapiStatus s;
        s.error = "ceiling was built without PAPI";
        return s;
    }
    bool event_exists(std::string_view) override { return false; }
    int start(const std::vector<std::string>&, bool&, std::string& error) override {
        error = "ceiling was built without PAPI";
        return -1;
    }
    bool stop(int, std::vector<long long>&, std::string& error) override {
        error = "ceiling was built without PAPI";
        return false;
    }
};

}  // namespace

std::unique_ptr<PapiApi> make_papi_api() {
#ifdef CEILING_HAVE_PAPI
    return std::make_unique<SystemPapiApi>();
#else
    return std::make_unique<AbsentPapiApi>();
#endif
}

Capability papi_capability(const PapiStatus& s) {
    if (!s.initialised) {
        if (s.error == "ceiling was built without PAPI")
            return Capability::no(s.error, "install libpapi-dev (scripts/setup does) and rebuild");
        return Capability::no("PAPI failed to initialise: " + s.error);
    }
    if (s.hardware_counters > 0)
        return Capability::yes("PAPI " + s.version + ", " + std::to_string(s.hardware_counters) +
                               " hardware counters");
    std::string why = "PAPI " + s.version + " sees 0 hardware counters";
    for (const auto& c : s.components)
        if (c.name == "perf_event" && c.disabled && !c.disabled_reason.empty())
            why += " (perf_event component disabled: " + c.disabled_reason + ")";
    if (s.virtual_machine)
        return Capability::no(why + "; no CPU PMU exposed in this VM" +
                                  (s.vm_vendor.empty() ? "" : " (" + s.vm_vendor + ")"),
                              "enable the virtual PMU in the hypervisor");
    return Capability::no(why, "check `ceiling doctor`'s CPU PMU line for the cause");
}

PapiCollector::PapiCollector(PapiApi* api) : api_(api) {
    if (!api_) {
        own_ = make_papi_api();
        api_ = own_.get();
    }
}

PapiCollector::~PapiCollector() {
    if (handle_ >= 0) {
        std::vector<long long> ignored;
        std::string error;
        api_->stop(handle_, ignored, error);
    }
}

Capability PapiCollector::probe() { return papi_capability(api_->status()); }

void PapiCollector::start() {
    events_.clear();
    warnings_.clear();
    for (const auto& p : papi_presets) {
        if (api_->event_exists(p.name))
            events_.emplace_back(p.name);
        else
            warnings_.push_back("PAPI preset " + std::string(p.name) +
                                " is not defined on this CPU");
    }
    if (events_.empty()) throw CollectorError(Capability::no("no PAPI preset is available here"));
    std::string error;
    handle_ = api_->start(events_, multiplexed_, error);
    if (handle_ < 0)
        throw CollectorError(Capability::no("PAPI could not start counting: " + error));
}

Readings PapiCollector::stop() {
    Readings r;
    r.warnings = warnings_;
    if (handle_ < 0) return r;
    std::vector<long long> values;
    std::string error;
    const bool ok = api_->stop(handle_, values, error);
    handle_ = -1;
    if (!ok) {
        r.warnings.push_back("PAPI could not read its counters: " + error);
        return r;
    }
    if (multiplexed_)
        r.warnings.push_back("PAPI multiplexed " + std::to_string(events_.size()) +
                             " presets: values are estimates scaled by PAPI");
    for (std::size_t i = 0; i < events_.size() && i < values.size(); ++i) {
        Reading reading;
        reading.name = "papi:" + events_[i];
        reading.value = static_cast<double>(values[i]);
        for (const auto& p : papi_presets)
            if (p.name == events_[i]) reading.unit = std::string(p.unit);
        reading.source = ReadingSource::pmu;
        reading.low_confidence = multiplexed_;
        r.values.push_back(std::move(reading));
    }
    return r;
}

}  // namespace ceiling::collectors
