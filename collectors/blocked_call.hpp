#pragma once
// Where a thread that is not running waits: the system call it is blocked in
// (/proc/PID/task/TID/syscall, readable by the program's parent) and, for a call on a file
// descriptor, what that descriptor is (the link /proc/PID/fd/N). Sampled with the threads'
// states, this is an off-CPU profile without a PMU, eBPF or privileges: "the process waits (I/O,
// locks, sleep, a device)" becomes which of them, and a program that flushes a log after every
// record (fdatasync, 1 % of the storage write roof, its core idle) is told from one waiting on
// a socket or a lock. The kernel's state is read as it is; nothing here measures time.

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace ceiling::collectors {

enum class WaitKind {
    storage_flush,  // fsync, fdatasync, msync, sync_file_range: until storage holds the data
    storage,        // reads and writes of files and block devices, file system calls, faults
    pipe,           // reads and writes of pipes: another process or thread of a pipeline
    socket,         // reads, writes, accepts and connects on sockets: a peer, the network
    device,         // character devices (a terminal, /dev/nvidia*) and ioctl (a driver)
    poll,           // poll, select, epoll: an event loop waiting on any of its descriptors
    lock,           // futex (mutexes, condition variables, a pool's idle workers), flock
    sleep,          // nanosleep, pause, signal waits: the program's own timing
    child,          // wait4, waitid: waiting for processes it started
    async_io,       // io_getevents, io_uring_enter: completions of asynchronous I/O
    other,          // any other call, or one on a descriptor of another kind
    unreadable,     // its system call could not be read (another user's, a non-dumpable one)
};
inline constexpr std::size_t wait_kind_count = 12;
inline constexpr std::array<std::string_view, wait_kind_count> wait_kind_names = {
    "storage_flush", "storage", "pipe",  "socket",   "device", "poll",
    "lock",          "sleep",   "child", "async_io", "other",  "unreadable"};
// The kinds that are waits on storage: what the I/O row's storage_wait_threads counts.
inline constexpr std::array<WaitKind, 2> storage_wait_kinds = {WaitKind::storage_flush,
                                                               WaitKind::storage};
// The kinds that wait on something outside the program's own work: its own timing, a peer or
// the network, an event loop's descriptors. What the waiting row's outside_wait_threads
// counts. (Pipes are hand-offs between its own stages, told by the serial-stage finding;
// locks are its threads' turns; children and devices do work ceiling judges where it runs.)
inline constexpr std::array<WaitKind, 3> outside_wait_kinds = {WaitKind::sleep, WaitKind::socket,
                                                               WaitKind::poll};

// Each kind in a few words, for text.
inline constexpr std::array<std::string_view, wait_kind_count> wait_kind_labels = {
    "storage flushes", "file I/O", "pipes", "sockets", "devices", "event loops",
    // A pool's idle workers park in futex too: "locks" alone read as contention.
    "futex (locks, condition variables, thread joins, idle pool workers)", "sleeps", "children",
    "async I/O", "other calls", "calls not readable"};

// A blocked thread's /proc/PID/task/TID/syscall: "NR arg1 ... arg6 sp pc" in a system call,
// "-1 sp pc" blocked outside one (a page fault), "running". nullopt when running or malformed.
struct BlockedCall {
    long number = -1;                   // -1: not in a system call
    std::optional<std::uint64_t> arg0;  // the first argument (a descriptor for I/O calls)
};
std::optional<BlockedCall> parse_proc_syscall(std::string_view text);

// What a descriptor's link (readlink of /proc/PID/fd/N) names, as the kind a wait on it is:
// "socket:[..]", "pipe:[..]", a path under /dev/ (a terminal or a driver: device; a block
// device: storage, told by `is_block_device`), "anon_inode:[eventfd]" and the like (poll: a
// descriptor other threads signal), any other path (storage).
WaitKind kind_of_descriptor(std::string_view link,
                            const std::function<bool(std::string_view)>& is_block_device);

// The kind of wait a blocked call is. Calls on a descriptor ask `link_of` for its link
// (nullopt when unreadable: other). Outside a system call a thread in uninterruptible sleep
// (state D) waits on a fault (storage: a mapped file's page, swap); otherwise other.
WaitKind classify_wait(const BlockedCall& call, bool uninterruptible,
                       const std::function<std::optional<std::string>(int fd)>& link_of,
                       const std::function<bool(std::string_view)>& is_block_device);

}  // namespace ceiling::collectors
