#include "collectors/blocked_call.hpp"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include <sys/syscall.h>

namespace ceiling::collectors {
namespace {

// A call whose wait is told by its descriptor (arg0) rather than by the call itself.
constexpr WaitKind by_descriptor = WaitKind::unreadable;

struct CallKind {
    long number;
    WaitKind kind;  // by_descriptor: the kind of the descriptor in arg0
};

// System calls by number, from the C library's names for this architecture (numbers differ
// between x86-64 and arm64; a call this architecture lacks is left out).
const std::vector<CallKind>& call_kinds() {
    using W = WaitKind;
    static const std::vector<CallKind> table = [] {
        std::vector<CallKind> t = {
            {SYS_read, by_descriptor},
            {SYS_write, by_descriptor},
            {SYS_pread64, by_descriptor},
            {SYS_pwrite64, by_descriptor},
            {SYS_readv, by_descriptor},
            {SYS_writev, by_descriptor},
            {SYS_preadv, by_descriptor},
            {SYS_pwritev, by_descriptor},
            {SYS_preadv2, by_descriptor},
            {SYS_pwritev2, by_descriptor},
            {SYS_sendfile, by_descriptor},
            {SYS_splice, by_descriptor},
            {SYS_fsync, W::storage_flush},
            {SYS_fdatasync, W::storage_flush},
            {SYS_msync, W::storage_flush},
            {SYS_sync, W::storage_flush},
            {SYS_syncfs, W::storage_flush},
            {SYS_sync_file_range, W::storage_flush},
            {SYS_openat, W::storage},
            {SYS_newfstatat, W::storage},
            {SYS_statx, W::storage},
            {SYS_getdents64, W::storage},
            {SYS_unlinkat, W::storage},
            {SYS_renameat, W::storage},
            {SYS_mkdirat, W::storage},
            {SYS_fallocate, W::storage},
            {SYS_ftruncate, W::storage},
            {SYS_copy_file_range, W::storage},
            {SYS_close, W::storage},
            {SYS_recvfrom, W::socket},
            {SYS_recvmsg, W::socket},
            {SYS_recvmmsg, W::socket},
            {SYS_sendto, W::socket},
            {SYS_sendmsg, W::socket},
            {SYS_sendmmsg, W::socket},
            {SYS_accept, W::socket},
            {SYS_accept4, W::socket},
            {SYS_connect, W::socket},
            {SYS_ioctl, W::device},
            {SYS_ppoll, W::poll},
            {SYS_pselect6, W::poll},
            {SYS_epoll_pwait, W::poll},
            {SYS_futex, W::lock},
            {SYS_flock, W::lock},
            {SYS_nanosleep, W::sleep},
            {SYS_clock_nanosleep, W::sleep},
            {SYS_rt_sigsuspend, W::sleep},
            {SYS_rt_sigtimedwait, W::sleep},
            {SYS_wait4, W::child},
            {SYS_waitid, W::child},
            {SYS_io_getevents, W::async_io},
            {SYS_io_pgetevents, W::async_io},
            {SYS_io_uring_enter, W::async_io},
        };
        // Calls only older architectures keep (x86-64 has them, arm64 does not).
#ifdef SYS_open
        t.push_back({SYS_open, W::storage});
#endif
#ifdef SYS_stat
        t.push_back({SYS_stat, W::storage});
        t.push_back({SYS_lstat, W::storage});
#endif
#ifdef SYS_unlink
        t.push_back({SYS_unlink, W::storage});
        t.push_back({SYS_rename, W::storage});
#endif
#ifdef SYS_poll
        t.push_back({SYS_poll, W::poll});
        t.push_back({SYS_select, W::poll});
        t.push_back({SYS_epoll_wait, W::poll});
#endif
#ifdef SYS_epoll_pwait2
        t.push_back({SYS_epoll_pwait2, W::poll});
#endif
#ifdef SYS_futex_waitv
        t.push_back({SYS_futex_waitv, W::lock});
#endif
#ifdef SYS_pause
        t.push_back({SYS_pause, W::sleep});
#endif
        return t;
    }();
    return table;
}

}  // namespace

std::optional<BlockedCall> parse_proc_syscall(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
    if (text.empty() || text == "running") return std::nullopt;
    const std::string s(text);
    char* end = nullptr;
    const long number = std::strtol(s.c_str(), &end, 10);
    if (end == s.c_str() || (*end != ' ' && *end != '\0') || number < -1) return std::nullopt;
    BlockedCall c;
    c.number = number;
    if (number >= 0 && *end == ' ') {
        char* after = nullptr;
        const unsigned long long a = std::strtoull(end + 1, &after, 16);
        if (after != end + 1) c.arg0 = a;
    }
    return c;
}

WaitKind kind_of_descriptor(std::string_view link,
                            const std::function<bool(std::string_view)>& is_block_device) {
    if (link.starts_with("socket:")) return WaitKind::socket;
    if (link.starts_with("pipe:")) return WaitKind::pipe;
    if (link.starts_with("anon_inode:")) return WaitKind::poll;
    if (link.starts_with("/dev/"))
        return is_block_device && is_block_device(link) ? WaitKind::storage : WaitKind::device;
    if (link.starts_with("/")) return WaitKind::storage;
    return WaitKind::other;
}

WaitKind classify_wait(const BlockedCall& call, bool uninterruptible,
                       const std::function<std::optional<std::string>(int fd)>& link_of,
                       const std::function<bool(std::string_view)>& is_block_device) {
    if (call.number < 0) return uninterruptible ? WaitKind::storage : WaitKind::other;
    const auto& table = call_kinds();
    const auto it = std::find_if(table.begin(), table.end(),
                                 [&](const CallKind& k) { return k.number == call.number; });
    if (it == table.end()) return WaitKind::other;
    if (it->kind != by_descriptor) return it->kind;
    // A descriptor is an int; the register holds it sign-extended or not.
    if (!call.arg0 || !link_of) return WaitKind::other;
    const auto fd = static_cast<std::int32_t>(static_cast<std::uint32_t>(*call.arg0));
    if (fd < 0) return WaitKind::other;
    const auto link = link_of(fd);
    return link ? kind_of_descriptor(*link, is_block_device) : WaitKind::other;
}

}  // namespace ceiling::collectors
