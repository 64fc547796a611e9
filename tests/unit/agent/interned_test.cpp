#include "agent/run/interned.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace ceiling::measure {
namespace {

TEST(Interned, EqualTextsShareOneStringAndOthersDoNot) {
    const std::string built = std::string("gemm") + "/" + "tile";
    const Interned a = built, b = "gemm/tile", c = "gemm/tiles";
    EXPECT_EQ(&a.str(), &b.str());
    EXPECT_NE(&a.str(), &c.str());
    EXPECT_TRUE(a == b);
    EXPECT_FALSE(a == c);
    EXPECT_EQ(a.hash(), b.hash());
    EXPECT_EQ(a.str(), "gemm/tile");
    EXPECT_EQ(a.size(), 9u);
}

TEST(Interned, DefaultIsTheEmptyStringAndComparesWithPlainStrings) {
    const Interned empty;
    EXPECT_TRUE(empty.empty());
    EXPECT_TRUE(empty == Interned(""));
    const Interned x = "forward";
    EXPECT_TRUE(x == std::string("forward"));
    EXPECT_TRUE(x == std::string_view("forward"));
    EXPECT_TRUE(x == "forward");
    EXPECT_FALSE(x != "forward");
    EXPECT_TRUE(x != std::string("backward"));
    std::ostringstream os;
    os << x;
    EXPECT_EQ(os.str(), "forward");
}

TEST(Interned, OrdersByTextNotByAddress) {
    // Interned in the reverse of text order, so address order (if used) would disagree.
    const Interned z = "zz-order-test", m = "mm-order-test", a = "aa-order-test";
    std::set<Interned> sorted = {z, m, a};
    std::vector<std::string> texts;
    for (const auto& s : sorted) texts.push_back(s.str());
    EXPECT_EQ(texts, (std::vector<std::string>{"aa-order-test", "mm-order-test", "zz-order-test"}));
    // And as a key of maps keyed by std::string, it reads as its text.
    std::map<std::string, int> by_text{{"mm-order-test", 1}};
    EXPECT_EQ(by_text.at(m), 1);
}

TEST(Interned, ThreadsInterningTheSameTextsGetTheSameStrings) {
    constexpr int texts = 500;
    std::vector<std::vector<const std::string*>> seen(4);
    std::vector<std::thread> threads;
    for (auto& out : seen)
        threads.emplace_back([&out] {
            for (int i = 0; i < texts; ++i)
                out.push_back(&Interned("thread-test-" + std::to_string(i)).str());
        });
    for (auto& t : threads) t.join();
    for (std::size_t k = 1; k < seen.size(); ++k) EXPECT_EQ(seen[k], seen[0]);
    EXPECT_EQ(std::set<const std::string*>(seen[0].begin(), seen[0].end()).size(), std::size_t{texts});
}

}  // namespace
}  // namespace ceiling::measure
