// Files ceiling writes (store/atomic_file.hpp): a file it replaces keeps its mode (a private
// 0600 record stays private), never wider than the umask; a new one is 0666 less the umask.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "agent/store/atomic_file.hpp"

namespace ceiling::store {
namespace {

mode_t mode_of(const std::filesystem::path& p) {
    struct stat st {};
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return st.st_mode & 0777;
}

TEST(AtomicFile, AReplacedFileKeepsItsModeAndANewOneFollowsTheUmask) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("ceiling-atomic-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const mode_t old_mask = ::umask(022);
    const auto secret = dir / "secret.json";
    { std::ofstream(secret) << "old"; }
    ::chmod(secret.c_str(), 0600);
    write_file_atomically(secret, "new");
    EXPECT_EQ(mode_of(secret), 0600u) << "a private file became wider";
    std::ifstream in(secret);
    std::string text;
    in >> text;
    EXPECT_EQ(text, "new");
    // Never wider than the umask: a 0666 file under umask 022 becomes 0644.
    const auto open = dir / "open.json";
    { std::ofstream(open) << "old"; }
    ::chmod(open.c_str(), 0666);
    write_file_atomically(open, "new");
    EXPECT_EQ(mode_of(open), 0644u);
    const auto fresh = dir / "fresh.json";
    write_file_atomically(fresh, "x");
    EXPECT_EQ(mode_of(fresh), 0644u);
    ::umask(old_mask);
    std::filesystem::remove_all(dir);
}

// A link planted where an output goes (another user's, in /tmp) is replaced, never followed:
// the file it points to keeps its content; the same for a name ceiling makes up itself.
TEST(AtomicFile, AFinalSymbolicLinkIsReplacedNeverFollowed) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("ceiling-atomic-link-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto victim = dir / "victim";
    { std::ofstream(victim) << "precious"; }
    ::chmod(victim.c_str(), 0600);
    std::filesystem::create_symlink(victim, dir / "out.json");
    check_writable(dir / "out.json");
    write_file_atomically(dir / "out.json", "record");
    EXPECT_FALSE(std::filesystem::is_symlink(dir / "out.json"));
    std::string text;
    std::ifstream(dir / "out.json") >> text;
    EXPECT_EQ(text, "record");
    std::ifstream(victim) >> text;
    EXPECT_EQ(text, "precious");
    EXPECT_EQ(mode_of(victim), 0600u);
    // A dangling link is an existing name: write_new never writes through it.
    std::filesystem::create_symlink(dir / "nowhere", dir / "new.json");
    EXPECT_FALSE(write_new_file_atomically(dir / "new.json", "x"));
    EXPECT_FALSE(std::filesystem::exists(dir / "nowhere"));
    // No temporary file is left beside them.
    int entries = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++entries;
    EXPECT_EQ(entries, 3);
    std::filesystem::remove_all(dir);
}

TEST(AtomicFile, ADirectoryOrAFifoIsRefusedAsNotARegularFile) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("ceiling-atomic-kinds-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir / "sub");
    ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
    EXPECT_THROW(write_file_atomically(dir / "sub", "x"), NotARegularFile);
    EXPECT_THROW(write_file_atomically(dir / "fifo", "x"), NotARegularFile);
    EXPECT_THROW(check_writable(dir / "sub/"), NotARegularFile);
    EXPECT_EQ(std::filesystem::status(dir / "fifo").type(), std::filesystem::file_type::fifo);
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ceiling::store
