// tests/test_bucketed_lists.cpp — core::BucketedLists (the filler core the pool and the
// malloc share) against a model: random pushes and removals into buckets, and after each
// step first_at_or_above(k) for random k (also past the last bucket) compared with a scan
// of the model. Bucket counts around the 64-bit word boundaries and both fillers' sizes.
#include <gtest/gtest.h>

#include <list>
#include <random>
#include <vector>

#include "core/bucketed_lists.hpp"

namespace {

struct Node {
    int bucket = -1;  // -1: on none
    Node* prev = nullptr;
    Node* next = nullptr;
};

// The model's answer: the lowest non-empty bucket >= k, or -1.
int model_first(const std::vector<std::list<Node*>>& model, unsigned k) {
    for (unsigned b = k; b < model.size(); ++b)
        if (!model[b].empty()) return static_cast<int>(b);
    return -1;
}

template <unsigned N>
void random_against_model(unsigned seed) {
    physmem::core::BucketedLists<Node, N> lists;
    std::vector<std::list<Node*>> model(N);
    std::vector<Node> nodes(3 * N);
    std::mt19937 rng(seed);
    for (int step = 0; step < 20000; ++step) {
        Node& n = nodes[rng() % nodes.size()];
        if (n.bucket >= 0) {
            auto b = static_cast<unsigned>(n.bucket);
            lists.remove(b, &n);
            model[b].remove(&n);
            n.bucket = -1;
        } else {
            // Mostly a few buckets, so buckets also fill and empty again.
            unsigned b = rng() % 4 ? rng() % 8 * (N / 8) : rng() % N;
            n.bucket = static_cast<int>(b);
            if (rng() % 2) lists.push_front(b, &n), model[b].push_front(&n);
            else lists.push_back(b, &n), model[b].push_back(&n);
        }
        unsigned k = rng() % (N + 70);
        int want = model_first(model, k);
        ASSERT_EQ(lists.first_at_or_above(k), want) << "N " << N << " k " << k << " step " << step;
        ASSERT_EQ(lists.first_front_at_or_above(k), want < 0 ? nullptr : model[want].front());
        unsigned b = rng() % N;
        ASSERT_EQ(lists.front(b), model[b].empty() ? nullptr : model[b].front());
        ASSERT_EQ(lists.back(b), model[b].empty() ? nullptr : model[b].back());
        ASSERT_EQ(lists.bucket(b).size(), model[b].size());
    }
}

TEST(BucketedLists, EmptyHasNoBucket) {
    physmem::core::BucketedLists<Node, 130> lists;
    for (unsigned k : {0u, 1u, 63u, 64u, 129u, 130u, 1000u}) EXPECT_EQ(lists.first_at_or_above(k), -1) << k;
    Node n;
    lists.push_back(64, &n);
    EXPECT_EQ(lists.first_at_or_above(0), 64);
    EXPECT_EQ(lists.first_at_or_above(64), 64);
    EXPECT_EQ(lists.first_at_or_above(65), -1);
    lists.remove(64, &n);
    EXPECT_EQ(lists.first_at_or_above(0), -1);
}

TEST(BucketedLists, ConstantInitialised) {
    static constinit physmem::core::BucketedLists<Node, 513> global;  // as the malloc's Heap
    EXPECT_EQ(global.first_at_or_above(0), -1);
}

TEST(BucketedLists, RandomAgainstModelOneWord) { random_against_model<36>(1); }   // the pool's
TEST(BucketedLists, RandomAgainstModelWordEdge) { random_against_model<64>(2); }
TEST(BucketedLists, RandomAgainstModelPastEdge) { random_against_model<65>(3); }
TEST(BucketedLists, RandomAgainstModelMalloc) { random_against_model<513>(4); }  // the malloc's

}  // namespace
