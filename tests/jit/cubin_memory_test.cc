// The kernel cache's bounded in-memory cubins: least recently used evicted
// past the budget, lookups refresh, the newest entry always stays.
#include "jit/cubin_memory.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace tessel::jit {
namespace {

std::shared_ptr<const Cubin> CubinOf(int bytes) {
  auto c = std::make_shared<Cubin>();
  c->image.assign(bytes, 'x');
  return c;
}

// Budget for n entries of `image` bytes under keys of one character.
int64_t BudgetFor(int n, int image) {
  return n * CubinMemory::EntryBytes("a", *CubinOf(image));
}

TEST(CubinMemoryTest, EvictsTheLeastRecentlyUsedPastTheBudget) {
  CubinMemory memory(BudgetFor(2, 100));
  memory.Insert("a", CubinOf(100));
  memory.Insert("b", CubinOf(100));
  ASSERT_NE(memory.Find("a"), nullptr);  // a is now the most recent
  memory.Insert("c", CubinOf(100));      // evicts b
  EXPECT_NE(memory.Find("a"), nullptr);
  EXPECT_EQ(memory.Find("b"), nullptr);
  EXPECT_NE(memory.Find("c"), nullptr);
  EXPECT_EQ(memory.size(), 2u);
  EXPECT_EQ(memory.bytes(), BudgetFor(2, 100));
}

TEST(CubinMemoryTest, AnEvictedCubinStaysAliveForItsHolder) {
  CubinMemory memory(BudgetFor(1, 10));
  memory.Insert("a", CubinOf(10));
  std::shared_ptr<const Cubin> held = memory.Find("a");
  memory.Insert("b", CubinOf(10));
  EXPECT_EQ(memory.Find("a"), nullptr);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->image.size(), 10u);
}

TEST(CubinMemoryTest, TheNewestStaysEvenOverTheBudgetAlone) {
  CubinMemory memory(BudgetFor(1, 10));
  memory.Insert("a", CubinOf(10));
  memory.Insert("big", CubinOf(1000));
  EXPECT_EQ(memory.Find("a"), nullptr);
  EXPECT_NE(memory.Find("big"), nullptr);
  EXPECT_EQ(memory.size(), 1u);
}

TEST(CubinMemoryTest, ReplacingAKeyCountsItOnce) {
  CubinMemory memory(0);  // no bound
  memory.Insert("a", CubinOf(10));
  memory.Insert("a", CubinOf(30));
  EXPECT_EQ(memory.size(), 1u);
  EXPECT_EQ(memory.bytes(), CubinMemory::EntryBytes("a", *CubinOf(30)));
  EXPECT_EQ(memory.Find("a")->image.size(), 30u);
  for (int i = 0; i < 100; ++i) memory.Insert(std::to_string(i), CubinOf(1000));
  EXPECT_EQ(memory.size(), 101u);  // unbounded
  memory.Clear();
  EXPECT_EQ(memory.size(), 0u);
  EXPECT_EQ(memory.bytes(), 0);
  EXPECT_EQ(memory.Find("a"), nullptr);
}

}  // namespace
}  // namespace tessel::jit
