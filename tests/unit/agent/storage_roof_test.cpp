// The storage roof of `ceiling machine`: measured where a disk is, refused with a reason
// where the "storage" is memory or absent, and never a file left behind.
#include "agent/machine/storage_roof.hpp"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <stdlib.h>

namespace ceiling::measure {
namespace {

namespace fs = std::filesystem;

class Dir {
  public:
    explicit Dir(const fs::path& under) {
        std::string t = (under / "ceiling-storage-test-XXXXXX").string();
        path_ = mkdtemp(t.data());
    }
    ~Dir() { fs::remove_all(path_); }
    const fs::path& path() const { return path_; }

  private:
    fs::path path_;
};

// Under the build tree (a disk in every setup this runs in, unlike a tmpfs /tmp).
TEST(StorageRoof, MeasuresReadAndWriteAndLeavesNothing) {
    const Dir dir(fs::current_path());
    StorageOptions o;
    o.directory = dir.path();
    o.file_bytes = 3u << 20 | 5;  // rounded up to whole 1 MiB requests
    o.passes = 2;
    std::string why;
    const auto roof = measure_storage(o, why);
    if (!roof &&
        (why.find("O_DIRECT") != std::string::npos || why.find("tmpfs") != std::string::npos))
        GTEST_SKIP() << "the build tree is not on a disk that takes direct I/O: " << why;
    ASSERT_TRUE(roof) << why;
    EXPECT_EQ(roof->file_bytes, 4u << 20);
    EXPECT_EQ(roof->read_bytes_per_s.count, 2u);
    EXPECT_EQ(roof->write_bytes_per_s.count, 2u);
    EXPECT_GT(roof->read_bytes_per_s.min, 0);
    EXPECT_GT(roof->write_bytes_per_s.min, 0);
    EXPECT_EQ(fs::path(roof->directory), fs::canonical(dir.path()));
    EXPECT_TRUE(fs::is_empty(dir.path())) << "the test file has no name, or lost it at once";
}

TEST(StorageRoof, MemoryAndMissingDirectoriesAreRefusedWithAReason) {
    std::string why;
    StorageOptions o;
    o.directory = "/no/such/directory";
    EXPECT_FALSE(measure_storage(o, why));
    EXPECT_NE(why.find("not a directory"), std::string::npos) << why;
    if (!fs::is_directory("/dev/shm")) GTEST_SKIP() << "no /dev/shm here";
    o.directory = "/dev/shm";
    why.clear();
    EXPECT_FALSE(measure_storage(o, why));
    EXPECT_NE(why.find("tmpfs"), std::string::npos) << why;
}

}  // namespace
}  // namespace ceiling::measure
