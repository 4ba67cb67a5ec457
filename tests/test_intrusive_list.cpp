// tests/test_intrusive_list.cpp — core::IntrusiveList (the list the pool's filler and the
// malloc's huge-page and partial-span lists share) against a std::list model, under random
// pushes and removals; links walked both ways after every step.
#include <gtest/gtest.h>

#include <algorithm>
#include <list>
#include <random>
#include <vector>

#include "core/intrusive_list.hpp"

namespace {

struct Node {
    int id = 0;
    int on = -1;  // which list (-1: none), as the users keep it
    Node* prev = nullptr;
    Node* next = nullptr;
};

// A second pair of links, to check the member-pointer template arguments.
struct TwoLinks {
    TwoLinks* a_prev = nullptr;
    TwoLinks* a_next = nullptr;
};

using List = physmem::core::IntrusiveList<Node>;

// The list holds exactly `model`, in order, with consistent back links and size.
void expect_same(const List& l, const std::list<Node*>& model) {
    ASSERT_EQ(l.size(), model.size());
    ASSERT_EQ(l.empty(), model.empty());
    std::vector<Node*> forward, backward;
    for (Node* x = l.front(); x; x = List::next(x)) forward.push_back(x);
    for (Node* x = l.back(); x; x = List::prev(x)) backward.push_back(x);
    std::reverse(backward.begin(), backward.end());
    EXPECT_EQ(forward, std::vector<Node*>(model.begin(), model.end()));
    EXPECT_EQ(backward, forward);
}

TEST(IntrusiveList, EmptyAndSingle) {
    List l;
    EXPECT_TRUE(l.empty());
    EXPECT_EQ(l.front(), nullptr);
    EXPECT_EQ(l.back(), nullptr);
    EXPECT_EQ(l.pop_front(), nullptr);
    Node n;
    l.push_back(&n);
    EXPECT_EQ(l.front(), &n);
    EXPECT_EQ(l.back(), &n);
    EXPECT_EQ(l.size(), 1u);
    l.remove(&n);
    EXPECT_TRUE(l.empty());
    EXPECT_EQ(l.back(), nullptr);
    EXPECT_EQ(n.prev, nullptr);
    EXPECT_EQ(n.next, nullptr);
}

TEST(IntrusiveList, ConstantInitialised) {
    static constinit List global;  // the malloc's Heap is constinit: this must compile
    EXPECT_TRUE(global.empty());
}

TEST(IntrusiveList, OtherLinkMembers) {
    physmem::core::IntrusiveList<TwoLinks, &TwoLinks::a_prev, &TwoLinks::a_next> l;
    TwoLinks x, y;
    l.push_front(&y);
    l.push_front(&x);
    EXPECT_EQ(l.front(), &x);
    EXPECT_EQ(x.a_next, &y);
    EXPECT_EQ(y.a_prev, &x);
    l.remove(&x);
    EXPECT_EQ(l.front(), &y);
    EXPECT_EQ(y.a_prev, nullptr);
}

// Random operations on three lists sharing 64 nodes, against std::list models.
TEST(IntrusiveList, RandomAgainstModel) {
    constexpr int kLists = 3, kNodes = 64;
    std::vector<Node> nodes(kNodes);
    for (int i = 0; i < kNodes; ++i) nodes[i].id = i;
    List lists[kLists];
    std::list<Node*> model[kLists];
    std::mt19937 rng(12345);
    for (int step = 0; step < 20000; ++step) {
        Node& n = nodes[rng() % kNodes];
        int which = static_cast<int>(rng() % kLists);
        if (n.on >= 0) {  // remove, or pop the front of its list
            if (rng() % 4 == 0) {
                Node* got = lists[n.on].pop_front();
                ASSERT_EQ(got, model[n.on].front());
                model[n.on].pop_front();
                got->on = -1;
            } else {
                lists[n.on].remove(&n);
                model[n.on].remove(&n);
                n.on = -1;
            }
        } else if (rng() % 2) {
            lists[which].push_front(&n);
            model[which].push_front(&n);
            n.on = which;
        } else {
            lists[which].push_back(&n);
            model[which].push_back(&n);
            n.on = which;
        }
        for (int k = 0; k < kLists; ++k) expect_same(lists[k], model[k]);
        if (HasFatalFailure()) return;
    }
}

}  // namespace
