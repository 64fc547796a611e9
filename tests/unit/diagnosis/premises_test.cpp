// Advice only where its premise was measured (diagnosis/premises.hpp): each premise gates the
// move or cause that assumes it, on the evidence a region carries.
#include <gtest/gtest.h>

#include "diagnosis/premises.hpp"

namespace ceiling {
namespace {

TEST(Premises, EachIsDecidedOnItsEvidence) {
    const Evidence own{false, 1.0, 1e6}, library{true, 1.0, 1e6};
    EXPECT_TRUE(licensed(Premise::own_code, own));
    EXPECT_FALSE(licensed(Premise::own_code, library));
    EXPECT_TRUE(licensed(Premise::loads_may_depend, own));
    EXPECT_FALSE(licensed(Premise::loads_may_depend, library));
    // Two cores storing: two busy and some bytes written (or writes unknown).
    EXPECT_FALSE(licensed(Premise::stores_from_two_threads, own));
    EXPECT_TRUE(licensed(Premise::stores_from_two_threads, Evidence{false, 2.0, 1e6}));
    EXPECT_TRUE(licensed(Premise::stores_from_two_threads, Evidence{false, 2.0, std::nullopt}));
    EXPECT_FALSE(licensed(Premise::stores_from_two_threads, Evidence{false, 2.0, 0.0}));
    EXPECT_FALSE(licensed(Premise::stores_from_two_threads, Evidence{}));  // busy cores unknown
    EXPECT_EQ(premise_name(Premise::stores_from_two_threads), "stores_from_two_threads");
}

}  // namespace
}  // namespace ceiling
