// The system call a blocked thread waits in, and what its descriptor is, as a kind of wait:
// parsed from /proc's text as the kernel writes it, classified by this architecture's call
// numbers.
#include "collectors/blocked_call.hpp"

#include <map>

#include <gtest/gtest.h>
#include <sys/syscall.h>

namespace ceiling::collectors {
namespace {

TEST(BlockedCall, ParsesTheKernelsSyscallFile) {
    // fdatasync(3) as /proc/PID/syscall shows it, then a page fault, then a running thread.
    const auto flush = parse_proc_syscall(
        std::to_string(SYS_fdatasync) +
        " 0x3 0x7f549f002000 0x20000 0x0 0xffffffff 0x0 0x7fffc08ad3b8 0x7f549f1752ad\n");
    ASSERT_TRUE(flush);
    EXPECT_EQ(flush->number, SYS_fdatasync);
    EXPECT_EQ(flush->arg0, 3u);
    const auto fault = parse_proc_syscall("-1 0x7ffcc77badc0 0x7fb9b324b503\n");
    ASSERT_TRUE(fault);
    EXPECT_EQ(fault->number, -1);
    EXPECT_FALSE(fault->arg0);
    EXPECT_FALSE(parse_proc_syscall("running\n"));
    EXPECT_FALSE(parse_proc_syscall(""));
    EXPECT_FALSE(parse_proc_syscall("x12 0x1"));
    EXPECT_FALSE(parse_proc_syscall("-7 0x1"));
}

TEST(BlockedCall, DescriptorsAreToldByTheirLinks) {
    const auto block = [](std::string_view p) { return p == "/dev/vda"; };
    EXPECT_EQ(kind_of_descriptor("socket:[123]", block), WaitKind::socket);
    EXPECT_EQ(kind_of_descriptor("pipe:[456]", block), WaitKind::pipe);
    EXPECT_EQ(kind_of_descriptor("anon_inode:[eventfd]", block), WaitKind::poll);
    EXPECT_EQ(kind_of_descriptor("/dev/pts/0", block), WaitKind::device);
    EXPECT_EQ(kind_of_descriptor("/dev/vda", block), WaitKind::storage);
    EXPECT_EQ(kind_of_descriptor("/data/log.bin", block), WaitKind::storage);
    EXPECT_EQ(kind_of_descriptor("/data/log.bin (deleted)", block), WaitKind::storage);
    EXPECT_EQ(kind_of_descriptor("net:[4026531840]", block), WaitKind::other);
}

TEST(BlockedCall, CallsAreClassifiedByNumberAndDescriptor) {
    const std::map<int, std::string> fds = {
        {0, "/dev/pts/1"}, {3, "/var/log/app.log"}, {4, "socket:[99]"}, {5, "pipe:[7]"}};
    const auto link = [&](int fd) -> std::optional<std::string> {
        const auto it = fds.find(fd);
        return it == fds.end() ? std::nullopt : std::optional(it->second);
    };
    const auto no_block = [](std::string_view) { return false; };
    struct Case {
        long number;
        std::optional<std::uint64_t> arg0;
        bool uninterruptible;
        WaitKind kind;
    };
    const std::optional<std::uint64_t> none;
    const Case cases[] = {
        {SYS_fdatasync, 3, false, WaitKind::storage_flush},
        {SYS_fsync, 3, false, WaitKind::storage_flush},
        {SYS_read, 3, false, WaitKind::storage},
        {SYS_read, 4, false, WaitKind::socket},
        {SYS_write, 5, false, WaitKind::pipe},
        {SYS_read, 0, false, WaitKind::device},
        {SYS_pread64, 3, false, WaitKind::storage},
        // A descriptor whose link cannot be read, or none, or a negative one: other.
        {SYS_read, 9, false, WaitKind::other},
        {SYS_read, none, false, WaitKind::other},
        {SYS_read, 0xffffffffu, false, WaitKind::other},
        {SYS_futex, 0x7f00, false, WaitKind::lock},
        {SYS_clock_nanosleep, 0, false, WaitKind::sleep},
        {SYS_wait4, 0, false, WaitKind::child},
        {SYS_ioctl, 7, false, WaitKind::device},
        {SYS_epoll_pwait, 7, false, WaitKind::poll},
        {SYS_recvfrom, 4, false, WaitKind::socket},
        {SYS_io_uring_enter, 8, false, WaitKind::async_io},
        {SYS_getpid, none, false, WaitKind::other},
        // Outside a system call: a fault in uninterruptible sleep waits on storage.
        {-1, none, true, WaitKind::storage},
        {-1, none, false, WaitKind::other},
    };
    for (const Case& c : cases)
        EXPECT_EQ(classify_wait(BlockedCall{c.number, c.arg0}, c.uninterruptible, link, no_block),
                  c.kind)
            << "call " << c.number << " arg0 " << c.arg0.value_or(0);
}

}  // namespace
}  // namespace ceiling::collectors
