// libceiling_inject_nvtx.so: loaded by NVTX itself into a program that `ceiling run` starts
// (NVTX_INJECTION64_PATH names it), records every NVTX range and mark with a CLOCK_MONOTONIC
// timestamp into per-thread memory-mapped files (agent/inject/nvtx_event_format.hpp) that
// ceiling reads once the program has ended.
//
// The protocol (nvtx3/nvtxDetail/nvtxInit.h, nvtxImpl.h): on the first NVTX call the
// program's NVTX copy dlopens this library and calls InitializeInjectionNvtx2 with its
// export-table getter. NVTX_ETID_CALLBACKS gives GetModuleFunctionTable(module), an array
// indexed by callback id (NVTX_CBID_*) of pointers to the program's function-pointer slots;
// writing our functions into those slots routes every later NVTX call here. Returning 0
// leaves NVTX a no-op, which is what happens outside `ceiling run` (no CEILING_NVTX_DIR).
//
// Cost per range: a string hash with a per-thread cache, two clock reads and two 32-byte
// stores into a mapped page; no lock and no system call except when a 4 MiB chunk fills,
// and, at most once per cpu_read_interval_ns in the whole process, a read of the process's
// CPU time (all threads), so that a range whose work runs on threads it starts is judged
// against the roof of the cores really busy.
// No dependency beyond libc and libstdc++, no sanitizer runtime (it is loaded into programs
// built without one).

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; absent from older C library headers
#endif

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "agent/inject/nvtx_event_format.hpp"

namespace {

using ceiling::inject::Event;
using ceiling::inject::EventFileHeader;
using ceiling::inject::EventKind;

// 4 MiB of events per chunk: a new file every ~0.6 s at 100k ranges/s, and a sparse file on
// tmpfs costs only the pages written (rounded up to 256 KiB: ThreadState::populate).
constexpr std::uint64_t chunk_events = (std::uint64_t{4} << 20) / sizeof(Event);
constexpr std::size_t chunk_bytes = sizeof(EventFileHeader) + chunk_events * sizeof(Event);

std::int64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Process-wide state. Allocated once and never freed: threads may still record while the
// process runs its exit handlers, so nothing here may have a destructor.
struct Globals {
    char dir[PATH_MAX] = {};
    int pid = 0;
    std::uint64_t load_ns = 0;
    std::atomic<std::uint64_t> next_range_id{1};
    std::atomic<std::int64_t> last_cpu_read_ns{0};  // process-wide: one read serves all threads
    pthread_mutex_t strings_mutex = PTHREAD_MUTEX_INITIALIZER;
    int strings_fd = -1;
    std::unordered_map<std::string, std::uint32_t>* strings = nullptr;
    std::vector<const std::string*>* by_id = nullptr;  // index id - 1
    // calibrate_recording's, for the chunk headers
    float range_ns = 0, cpu_read_ns = 0, calibration_ns = 0;
};
Globals* g = nullptr;

void write_string_record(std::uint32_t id, const std::string& text) {
    if (g->strings_fd < 0) return;
    std::string rec(8 + text.size(), '\0');
    const auto len = static_cast<std::uint32_t>(text.size());
    std::memcpy(rec.data(), &id, 4);
    std::memcpy(rec.data() + 4, &len, 4);
    std::memcpy(rec.data() + 8, text.data(), text.size());
    // One write per record on an O_APPEND descriptor: whole records even if the program
    // crashes right after.
    const ssize_t n = ::write(g->strings_fd, rec.data(), rec.size());
    (void)n;
}

void open_strings_file() {
    char path[PATH_MAX + 128];  // dir is at most PATH_MAX - 64, the rest is numbers
    std::snprintf(path, sizeof path, "%s/%d-%llu.str", g->dir, g->pid,
                  static_cast<unsigned long long>(g->load_ns));
    g->strings_fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
}

// At exit: the process's peak resident set (VmHWM of /proc/self/status) into IMAGE.peak, so
// that `ceiling run` knows it exactly however short the program (its sampler reads it every
// interval, a lower bound between reads). System calls and the stack only: other exit
// handlers may already have run.
void record_peak_memory() {
    if (!g) return;
    char buf[4096];
    const int in = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (in < 0) return;
    const ssize_t n = ::read(in, buf, sizeof buf - 1);
    ::close(in);
    if (n <= 0) return;
    buf[n] = 0;
    const char* at = std::strstr(buf, "\nVmHWM:");
    if (!at) return;
    const std::uint64_t bytes = std::strtoull(at + 7, nullptr, 10) * 1024;
    char path[PATH_MAX + 128];
    std::snprintf(path, sizeof path, "%s/%d-%llu.peak", g->dir, g->pid,
                  static_cast<unsigned long long>(g->load_ns));
    const int out = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out < 0) return;
    [[maybe_unused]] const ssize_t w = ::write(out, &bytes, sizeof bytes);
    ::close(out);
}

// Interns under the lock; returns the id and a pointer to the stable copy.
std::uint32_t intern_slow(const char* text, std::size_t len, const std::string** stable) {
    pthread_mutex_lock(&g->strings_mutex);
    auto [it, inserted] = g->strings->try_emplace(std::string(text, len), 0);
    if (inserted) {
        it->second = static_cast<std::uint32_t>(g->by_id->size() + 1);
        g->by_id->push_back(&it->first);
        write_string_record(it->second, it->first);
    }
    *stable = &it->first;
    const std::uint32_t id = it->second;
    pthread_mutex_unlock(&g->strings_mutex);
    return id;
}

struct CacheEntry {
    std::uint64_t hash = 0;
    const std::string* text = nullptr;
    std::uint32_t id = 0;
};

// A string seen at an address: a program names its ranges from the same literals or buffers
// (the PyTorch instrumentation's cached messages), so the address finds the entry and a
// compare of the text there, with no hash of it, confirms it (a buffer reused for another
// text misses, and the hash decides).
struct AddressEntry {
    const char* address = nullptr;
    const std::string* text = nullptr;
    std::uint32_t id = 0;
};

// Per-thread: the current chunk and a small cache of interned strings.
struct ThreadState {
    Event* next = nullptr;
    Event* end = nullptr;
    void* map = nullptr;
    std::uint32_t chunk = 0;
    int tid = 0;
    int depth = 0;
    std::int64_t last_thread_cpu_ns = 0;  // when this thread last read its own CPU time
    bool failed = false;  // could not create a chunk: stop trying on this thread
    // The capture's file system ran out of space: this thread records nothing more, and
    // counts what it drops in the header of the chunk it keeps mapped.
    bool full = false;
    int fd = -1;  // the chunk's file, kept open to reserve its pages before they are written
    CacheEntry cache[256];
    AddressEntry by_address[256];

    ~ThreadState() { release(); }
    void release() {
        if (map) ::munmap(map, chunk_bytes);
        if (fd >= 0) ::close(fd);
        map = nullptr;
        fd = -1;
        next = end = nullptr;
    }
    // An event that cannot be recorded: counted where the reader finds it.
    void drop() {
        if (full && map) ++static_cast<EventFileHeader*>(map)->dropped_events;
    }
    // Reserves the chunk's bytes [offset, offset + len) in its file before they are written:
    // a mapped sparse file whose file system is full (a 64 MiB /dev/shm) kills the program
    // with SIGBUS at the first store into an unbacked page, so a failed reservation stops
    // recording instead.
    bool reserve(std::size_t offset, std::size_t len) {
        return ::posix_fallocate(fd, static_cast<off_t>(offset), static_cast<off_t>(len)) == 0;
    }
    bool open_chunk() {
        if (full) return false;
        release();
        if (failed) return false;
        if (tid == 0) tid = static_cast<int>(::syscall(SYS_gettid));
        char path[PATH_MAX + 128];  // dir is at most PATH_MAX - 64, the rest is numbers
        std::snprintf(path, sizeof path, "%s/%d-%llu-%d-%u.evt", g->dir, g->pid,
                      static_cast<unsigned long long>(g->load_ns), tid, chunk);
        fd = ::open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0) return failed = true, false;
        void* m = MAP_FAILED;
        // The header's page reserved before it is written (the rest as populate reaches it).
        if (::ftruncate(fd, static_cast<off_t>(chunk_bytes)) == 0 && reserve(0, populate_bytes))
            m = ::mmap(nullptr, chunk_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
            ::close(fd);
            fd = -1;
            ::unlink(path);  // nothing of it was written: no empty chunk for the reader
            return failed = true, false;
        }
        map = m;
        auto* header = new (m) EventFileHeader{};
        // The magic last (a release): `ceiling run` reads the header while the program runs
        // and takes it only once the magic is there (reading it twice: nvtx_capture.cpp).
        header->magic = 0;
        header->pid = g->pid;
        header->tid = tid;
        header->load_ns = g->load_ns;
        header->capacity = chunk_events;
        header->chunk = chunk++;
        header->event_bytes = sizeof(Event);
        header->range_ns = g->range_ns;
        header->cpu_read_ns = g->cpu_read_ns;
        header->calibration_ns = g->calibration_ns;
        std::atomic_ref<std::uint32_t>(header->magic).store(ceiling::inject::event_file_magic,
                                                            std::memory_order_release);
        next = reinterpret_cast<Event*>(static_cast<char*>(m) + sizeof(EventFileHeader));
        end = next + chunk_events;
        populate(static_cast<char*>(m), true);
        return true;
    }
    // Maps in the chunk's pages from `from` (page aligned) to the next populate_bytes
    // boundary at once, ahead of the writes: written one 4 KiB page fault at a time, the
    // 13 MB of events of 200 000 ranges cost ~3 000 faults in the program. A thread that
    // records little still costs only what it wrote, rounded up to populate_bytes.
    // Reserves them first (`reserved`: already done); false, and the thread stops recording,
    // where the file system has no room for them.
    bool populate(char* from, bool reserved = false) {
        const auto a = reinterpret_cast<std::uintptr_t>(from);
        const auto base = reinterpret_cast<std::uintptr_t>(map);
        const auto to = std::min((a | (populate_bytes - 1)) + 1, base + chunk_bytes);
        if (!reserved && fd >= 0 && to > a && !reserve(a - base, to - a)) {
            full = true;
            end = next;
            return false;
        }
        if (!populate_failed && to > a && ::madvise(from, to - a, MADV_POPULATE_WRITE) != 0)
            populate_failed = true;  // before Linux 5.14: pages fault in as before
        return true;
    }
    static constexpr std::uintptr_t populate_bytes = std::uintptr_t{256} << 10;
    bool populate_failed = false;
};
thread_local ThreadState state;

// FNV-1a (64 bit) over the bytes, giving the length too; the cache then compares the text.
// First the text last seen at this address: a byte-at-a-time hash of a PyTorch op's
// 100-character message was most of what recording its range cost.
std::uint32_t intern(const char* text) {
    if (!text) return 0;
    AddressEntry& a = state.by_address[(reinterpret_cast<std::uintptr_t>(text) >> 3) & 255];
    if (a.address == text && std::strncmp(text, a.text->c_str(), a.text->size() + 1) == 0)
        return a.id;
    std::uint64_t h = 1469598103934665603ull;
    std::size_t n = 0;
    for (; text[n]; ++n) {
        h ^= static_cast<unsigned char>(text[n]);
        h *= 1099511628211ull;
    }
    CacheEntry& c = state.cache[h & 255];
    if (!(c.text && c.hash == h && c.text->size() == n &&
          std::memcmp(c.text->data(), text, n) == 0)) {
        const std::string* stable = nullptr;
        const std::uint32_t id = intern_slow(text, n, &stable);
        c = {h, stable, id};
    }
    a = {text, c.text, c.id};
    return c.id;
}

// UTF-32 (Linux wchar_t) to UTF-8, for the W variants; rare, so no cache.
std::uint32_t intern_wide(const wchar_t* text) {
    if (!text) return 0;
    std::string out;
    for (; *text; ++text) {
        auto c = static_cast<std::uint32_t>(*text);
        if (c < 0x80) {
            out += static_cast<char>(c);
        } else if (c < 0x800) {
            out += static_cast<char>(0xC0 | (c >> 6));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            out += static_cast<char>(0xE0 | (c >> 12));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (c >> 18));
            out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        }
    }
    return intern(out.c_str());
}

std::uint32_t message_of(const nvtxEventAttributes_t* a) {
    if (!a) return 0;
    switch (a->messageType) {
        case NVTX_MESSAGE_TYPE_ASCII:
            return intern(a->message.ascii);
        case NVTX_MESSAGE_TYPE_UNICODE:
            return intern_wide(a->message.unicode);
        case NVTX_MESSAGE_TYPE_REGISTERED:
            // Our nvtxDomainRegisterString handed out the id as the handle.
            return static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(a->message.registered));
        default:
            return 0;
    }
}

std::uint32_t domain_of(nvtxDomainHandle_t d) {
    return static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(d));
}

void emit_to(ThreadState& s, EventKind kind, std::int64_t t, std::uint32_t string,
             std::uint32_t domain, std::uint64_t range_id) {
    if (s.next == s.end && !s.open_chunk()) return s.drop();
    if ((reinterpret_cast<std::uintptr_t>(s.next) & (ThreadState::populate_bytes - 1)) == 0 &&
        !s.populate(reinterpret_cast<char*>(s.next)))
        return s.drop();
    Event* e = s.next++;
    e->t_ns = t;
    e->range_id = range_id;
    e->string = string;
    e->domain = domain;
    // `kind` marks the event valid: it must reach memory after the other fields, in case the
    // program dies between the stores (a signal lands between instructions of this thread)
    // and for `ceiling run`, which reads the chunk while it is written (a plain store on
    // x86-64; its reader reads a block again after seeing a kind: nvtx_capture.cpp).
    std::atomic_ref<std::uint8_t>(e->kind).store(static_cast<std::uint8_t>(kind),
                                                 std::memory_order_release);
}
void emit(EventKind kind, std::int64_t t, std::uint32_t string, std::uint32_t domain,
          std::uint64_t range_id) {
    emit_to(state, kind, t, string, domain, range_id);
}

// Reads `clock` (a CPU-time clock) into a `kind` event stamped with the middle of the system
// call, and returns the time after it, so that a range opened next starts after our work.
std::int64_t emit_cpu_clock(EventKind kind, clockid_t clock, std::int64_t t) {
    timespec ts{};
    clock_gettime(clock, &ts);
    const std::int64_t after = now_ns();
    emit(kind, t + (after - t) / 2, 0, 0,
         static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
             static_cast<std::uint64_t>(ts.tv_nsec));
    return after;
}

// The process's CPU time when the last read is at least cpu_read_interval_ns old (one thread
// wins the exchange; the others go on).
std::int64_t read_cpu_if_due(std::int64_t t) {
    std::int64_t last = g->last_cpu_read_ns.load(std::memory_order_relaxed);
    if (t - last < ceiling::inject::cpu_read_interval_ns ||
        !g->last_cpu_read_ns.compare_exchange_strong(last, t, std::memory_order_relaxed))
        return t;
    return emit_cpu_clock(EventKind::cpu_time, CLOCK_PROCESS_CPUTIME_ID, t);
}

// This thread's own CPU time when its last read is at least cpu_read_interval_ns old.
std::int64_t read_thread_cpu_if_due(std::int64_t t) {
    if (t - state.last_thread_cpu_ns < ceiling::inject::cpu_read_interval_ns) return t;
    state.last_thread_cpu_ns = t;
    return emit_cpu_clock(EventKind::thread_cpu_time, CLOCK_THREAD_CPUTIME_ID, t);
}

// Push: the name is interned and the CPU times read before the clock, and pop reads the
// clock first, so our own work stays outside the measured range.
int push(std::uint32_t string, std::uint32_t domain) {
    emit(EventKind::push, read_thread_cpu_if_due(read_cpu_if_due(now_ns())), string, domain, 0);
    return state.depth++;
}
int pop(std::uint32_t domain) {
    const std::int64_t t = now_ns();
    if (state.depth == 0) return -1;  // unbalanced pop: NVTX reports an error, so do we
    emit(EventKind::pop, t, 0, domain, 0);
    read_thread_cpu_if_due(read_cpu_if_due(t));
    return --state.depth;
}
nvtxRangeId_t start(std::uint32_t string, std::uint32_t domain) {
    const std::uint64_t id = g->next_range_id.fetch_add(1, std::memory_order_relaxed);
    emit(EventKind::start, read_cpu_if_due(now_ns()), string, domain, id);
    return id;
}
void end(nvtxRangeId_t id, std::uint32_t domain) {
    const std::int64_t t = now_ns();
    emit(EventKind::end, t, 0, domain, id);
    read_cpu_if_due(t);
}
// What recording costs this program, so that `ceiling run` can say how much of its wall time
// is ours (events x cost): timed once, at the first NVTX call, on this machine and in this
// process (a VM whose clock_gettime falls back to a system call shows it here). A range is
// what push and pop do (the name's lookup in the thread's cache, two clock reads, the
// CPU-time check, two event stores) into scratch events: the median of 5 batches of 128
// after one warm-up batch. A floor: the program's own lines our stores evict are not in
// it. Then the median of 15 reads of the process's CPU time.
void calibrate_recording() {
    const std::int64_t start = now_ns();
    constexpr int pairs = 128, batches = 5, cpu_reads = 15;
    auto* scratch = new ThreadState;  // freed below; its events live in `events`
    auto* events = new Event[2 * pairs];
    scratch->populate_failed = true;  // no mapped chunk behind it
    const char* name = "ceiling: recording cost";
    double per_batch[batches];
    // No CPU-time read falls due while this runs (the check is timed, not the read): a read
    // would open this thread's first chunk before the costs it carries are known.
    g->last_cpu_read_ns.store(INT64_MAX / 2, std::memory_order_relaxed);
    for (int b = -1; b < batches; ++b) {
        scratch->next = events;
        scratch->end = events + 2 * pairs;
        const std::int64_t t0 = now_ns();
        for (int i = 0; i < pairs; ++i) {
            emit_to(*scratch, EventKind::push, read_cpu_if_due(now_ns()), intern(name), 0, 0);
            const std::int64_t t = now_ns();
            emit_to(*scratch, EventKind::pop, t, 0, 0, 0);
            read_cpu_if_due(t);
        }
        if (b >= 0) per_batch[b] = static_cast<double>(now_ns() - t0) / pairs;
    }
    std::sort(per_batch, per_batch + batches);
    g->range_ns = static_cast<float>(per_batch[batches / 2]);
    double per_read[cpu_reads];
    for (double& r : per_read) {
        timespec ts{};
        const std::int64_t t0 = now_ns();
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        r = static_cast<double>(now_ns() - t0);
    }
    std::sort(per_read, per_read + cpu_reads);
    g->cpu_read_ns = static_cast<float>(per_read[cpu_reads / 2]);
    g->last_cpu_read_ns.store(0, std::memory_order_relaxed);  // the first range reads it
    scratch->next = scratch->end = nullptr;
    delete scratch;
    delete[] events;
    g->calibration_ns = static_cast<float>(now_ns() - start);
}

void mark(std::uint32_t string, std::uint32_t domain) {
    emit(EventKind::mark, now_ns(), string, domain, 0);
}

// NVTX entry points (the signatures of the *_impl_fntype typedefs in nvtxTypes.h).
void NVTX_API mark_ex(const nvtxEventAttributes_t* a) { mark(message_of(a), 0); }
void NVTX_API mark_a(const char* m) { mark(intern(m), 0); }
void NVTX_API mark_w(const wchar_t* m) { mark(intern_wide(m), 0); }
nvtxRangeId_t NVTX_API start_ex(const nvtxEventAttributes_t* a) { return start(message_of(a), 0); }
nvtxRangeId_t NVTX_API start_a(const char* m) { return start(intern(m), 0); }
nvtxRangeId_t NVTX_API start_w(const wchar_t* m) { return start(intern_wide(m), 0); }
void NVTX_API end_id(nvtxRangeId_t id) { end(id, 0); }
int NVTX_API push_ex(const nvtxEventAttributes_t* a) { return push(message_of(a), 0); }
int NVTX_API push_a(const char* m) { return push(intern(m), 0); }
int NVTX_API push_w(const wchar_t* m) { return push(intern_wide(m), 0); }
int NVTX_API pop_default() { return pop(0); }
void NVTX_API name_category_a(uint32_t, const char*) {}
void NVTX_API name_category_w(uint32_t, const wchar_t*) {}
void NVTX_API name_thread_a(uint32_t tid, const char* name) {
    emit(EventKind::thread_name, now_ns(), intern(name), 0, tid);
}
void NVTX_API name_thread_w(uint32_t tid, const wchar_t* name) {
    emit(EventKind::thread_name, now_ns(), intern_wide(name), 0, tid);
}

void NVTX_API domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
    mark(message_of(a), domain_of(d));
}
nvtxRangeId_t NVTX_API domain_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
    return start(message_of(a), domain_of(d));
}
void NVTX_API domain_end(nvtxDomainHandle_t d, nvtxRangeId_t id) { end(id, domain_of(d)); }
int NVTX_API domain_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
    return push(message_of(a), domain_of(d));
}
int NVTX_API domain_pop(nvtxDomainHandle_t d) { return pop(domain_of(d)); }
void NVTX_API domain_name_category_a(nvtxDomainHandle_t, uint32_t, const char*) {}
void NVTX_API domain_name_category_w(nvtxDomainHandle_t, uint32_t, const wchar_t*) {}
// Handles are our string ids (never 0 for a real string), so resolving one costs nothing.
nvtxStringHandle_t NVTX_API register_string_a(nvtxDomainHandle_t, const char* s) {
    return reinterpret_cast<nvtxStringHandle_t>(static_cast<std::uintptr_t>(intern(s)));
}
nvtxStringHandle_t NVTX_API register_string_w(nvtxDomainHandle_t, const wchar_t* s) {
    return reinterpret_cast<nvtxStringHandle_t>(static_cast<std::uintptr_t>(intern_wide(s)));
}
nvtxDomainHandle_t NVTX_API domain_create_a(const char* name) {
    return reinterpret_cast<nvtxDomainHandle_t>(static_cast<std::uintptr_t>(intern(name)));
}
nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t* name) {
    return reinterpret_cast<nvtxDomainHandle_t>(static_cast<std::uintptr_t>(intern_wide(name)));
}
void NVTX_API domain_destroy(nvtxDomainHandle_t) {}
void NVTX_API initialize(const void*) {}

// The child of a fork is a new process: it gets its own image name and strings file (with
// every string interned so far, so handles created before the fork stay valid) and drops
// the parent's chunk, which the parent keeps writing.
void before_fork() { pthread_mutex_lock(&g->strings_mutex); }
void after_fork_parent() { pthread_mutex_unlock(&g->strings_mutex); }
void after_fork_child() {
    g->pid = static_cast<int>(::getpid());
    g->load_ns = static_cast<std::uint64_t>(now_ns());
    g->last_cpu_read_ns.store(0, std::memory_order_relaxed);  // a new process: a new CPU clock
    g->calibration_ns = 0;  // the parent's costs hold here, untimed again
    if (g->strings_fd >= 0) ::close(g->strings_fd);
    open_strings_file();
    for (std::size_t i = 0; i < g->by_id->size(); ++i)
        write_string_record(static_cast<std::uint32_t>(i + 1), *(*g->by_id)[i]);
    pthread_mutex_unlock(&g->strings_mutex);
    state.release();
    state.chunk = 0;
    state.tid = 0;
    state.failed = false;
    state.full = false;
}

struct Slot {
    unsigned id;
    NvtxFunctionPointer fn;
};

template <typename F>
NvtxFunctionPointer fp(F f) {
    return reinterpret_cast<NvtxFunctionPointer>(f);
}

bool install(const NvtxExportTableCallbacks* cb, NvtxCallbackModule module,
             std::initializer_list<Slot> slots) {
    NvtxFunctionTable table = nullptr;
    unsigned int size = 0;
    if (!cb->GetModuleFunctionTable(module, &table, &size) || !table) return false;
    for (const Slot& s : slots)
        if (s.id < size && table[s.id]) *table[s.id] = s.fn;
    return true;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
    const char* dir = std::getenv(ceiling::inject::nvtx_dir_env);
    if (!dir || !*dir || std::strlen(dir) >= PATH_MAX - 64 || !get_export_table) return 0;
    const auto* cb =
        static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
    if (!cb || cb->struct_size < sizeof(NvtxExportTableCallbacks)) return 0;

    g = new Globals;
    std::strncpy(g->dir, dir, sizeof g->dir - 1);
    g->pid = static_cast<int>(::getpid());
    g->load_ns = static_cast<std::uint64_t>(now_ns());
    g->strings = new std::unordered_map<std::string, std::uint32_t>;
    g->by_id = new std::vector<const std::string*>;
    open_strings_file();
    if (g->strings_fd < 0) return 0;  // the directory is gone: record nothing
    calibrate_recording();
    std::atexit(record_peak_memory);  // forked children inherit it, with their own image name

    const bool core = install(cb, NVTX_CB_MODULE_CORE,
                              {{NVTX_CBID_CORE_MarkEx, fp(mark_ex)},
                               {NVTX_CBID_CORE_MarkA, fp(mark_a)},
                               {NVTX_CBID_CORE_MarkW, fp(mark_w)},
                               {NVTX_CBID_CORE_RangeStartEx, fp(start_ex)},
                               {NVTX_CBID_CORE_RangeStartA, fp(start_a)},
                               {NVTX_CBID_CORE_RangeStartW, fp(start_w)},
                               {NVTX_CBID_CORE_RangeEnd, fp(end_id)},
                               {NVTX_CBID_CORE_RangePushEx, fp(push_ex)},
                               {NVTX_CBID_CORE_RangePushA, fp(push_a)},
                               {NVTX_CBID_CORE_RangePushW, fp(push_w)},
                               {NVTX_CBID_CORE_RangePop, fp(pop_default)},
                               {NVTX_CBID_CORE_NameCategoryA, fp(name_category_a)},
                               {NVTX_CBID_CORE_NameCategoryW, fp(name_category_w)},
                               {NVTX_CBID_CORE_NameOsThreadA, fp(name_thread_a)},
                               {NVTX_CBID_CORE_NameOsThreadW, fp(name_thread_w)}});
    // CORE2 (domains, registered strings) appeared in NVTX v2; an older NVTX lacks it.
    install(cb, NVTX_CB_MODULE_CORE2,
            {{NVTX_CBID_CORE2_DomainMarkEx, fp(domain_mark_ex)},
             {NVTX_CBID_CORE2_DomainRangeStartEx, fp(domain_start_ex)},
             {NVTX_CBID_CORE2_DomainRangeEnd, fp(domain_end)},
             {NVTX_CBID_CORE2_DomainRangePushEx, fp(domain_push_ex)},
             {NVTX_CBID_CORE2_DomainRangePop, fp(domain_pop)},
             {NVTX_CBID_CORE2_DomainNameCategoryA, fp(domain_name_category_a)},
             {NVTX_CBID_CORE2_DomainNameCategoryW, fp(domain_name_category_w)},
             {NVTX_CBID_CORE2_DomainRegisterStringA, fp(register_string_a)},
             {NVTX_CBID_CORE2_DomainRegisterStringW, fp(register_string_w)},
             {NVTX_CBID_CORE2_DomainCreateA, fp(domain_create_a)},
             {NVTX_CBID_CORE2_DomainCreateW, fp(domain_create_w)},
             {NVTX_CBID_CORE2_DomainDestroy, fp(domain_destroy)},
             {NVTX_CBID_CORE2_Initialize, fp(initialize)}});
    if (!core) return 0;

    if (const auto* v = static_cast<const NvtxExportTableVersionInfo*>(
            get_export_table(NVTX_ETID_VERSIONINFO));
        v && v->struct_size >= sizeof(NvtxExportTableVersionInfo) && v->SetInjectionNvtxVersion)
        v->SetInjectionNvtxVersion(NVTX_VERSION);
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    return 1;
}
