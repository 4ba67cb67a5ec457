// lab/kernels/graph/bfs.hpp — direction-optimising breadth-first search (Beamer, Asanović
// and Patterson, SC 2012), single-threaded, with GAP's switching rule.
//
// Top-down steps expand a queue: every neighbour of every frontier vertex is examined
// and the unreached ones get their parent and join the next frontier. Bottom-up steps
// go over every unreached vertex instead and look for a neighbour in the frontier (a
// bitmap), stopping at the first: cheaper once the frontier holds most edges. Switch
// to bottom-up when the edges out of the last added vertices (scout) exceed the edges
// not yet explored / alpha; back to top-down when the frontier stops growing and has
// fewer than n / beta vertices. alpha = 15, beta = 18 (GAP's defaults).
//
// Deterministic: the queue is FIFO, lists are read in order and a bottom-up step takes
// the first frontier neighbour in list order, so the parents are the same on every
// array type (and for any leaf size).
//
// Arrays (arrays.hpp: span, TreeArray, PagedArray): parent and queue of n uint32, front
// and next bitmaps of bitmap_words(n) uint64 (contents on entry do not matter).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "kernels/graph/view.hpp"

namespace lab::graph {

inline constexpr std::uint32_t kUnreached = 0xffffffffu;  // parent of a vertex not reached

struct BfsOptions {
    unsigned alpha = 15;  // to bottom-up when scout > unexplored / alpha
    unsigned beta = 18;   // to top-down when the frontier shrinks below n / beta
};

// What a search did. edges_examined counts directed entries read: all of a frontier
// vertex's list top-down, up to the parent found bottom-up — the work, not TEPS's edge
// count (traversed_edges below).
struct BfsStats {
    std::uint64_t edges_examined = 0;
    unsigned top_down_steps = 0, bottom_up_steps = 0;
};

constexpr std::size_t bitmap_words(std::size_t n) noexcept { return (n + 63) / 64; }

namespace detail {
template <class B>
bool test_bit(const B& bits, std::uint32_t v) {
    return (load(bits, v / 64) >> (v % 64)) & 1;
}
template <class B>
void set_bit(B& bits, std::uint32_t v) {
    const std::uint64_t w = load(bits, v / 64);
    store(bits, v / 64, w | std::uint64_t{1} << (v % 64));
}

// The frontier as a window [head, tail) of a queue array; a step appends the next
// frontier after tail (GAP's SlidingQueue). A vertex is queued once per search, but the
// queue restarts at 0 after a bottom-up phase, so n entries suffice.
struct Window {
    std::size_t head = 0, tail = 0, in = 0;  // in: where the next push goes
    void slide() noexcept { head = tail, tail = in; }
    bool empty() const noexcept { return head == tail; }
};

// The per-edge loops below count nothing: edges examined are added a vertex at a time
// (the degree for_each_neighbour returns, or where find_at stopped). A count the edge
// callback increments lives in memory wherever the loop holds a call the compiler cannot
// see through (a PagedArray's leaf change, out of line), and an increment through memory
// at every edge chains the edges one after another: a PagedArray's BFS at 1x took 1.39x
// the TreeArray's time with ++st.edges_examined per edge, whose TreeArray loop kept the
// count in a register. (Reading the degree again instead, two more walks of the offsets a
// vertex, made the TreeArray's SSSP 1.14x slower.)

// One top-down step: claims the unreached neighbours of the window's vertices. Returns
// scout, the summed degrees of the vertices claimed.
template <class G, class Parent, class Queue>
std::uint64_t top_down_step(const G& g, Parent& parent, Queue& queue, Window& q, BfsStats& st) {
    std::uint64_t scout = 0;
    ListHints hints(g, false);
    for (std::size_t i = q.head; i < q.tail; ++i) {
        hints.at(i - q.head, q.tail - q.head, [&](std::size_t j) { return load(queue, q.head + j); });
        const std::uint32_t u = load(queue, i);
        st.edges_examined += for_each_neighbour(g, u, [&](std::uint32_t v) {
            if (load(parent, v) != kUnreached) return;
            store(parent, v, u);
            store(queue, q.in++, v);
            scout += degree(g, v);
        });
    }
    return scout;
}

// One bottom-up step: every unreached vertex with a neighbour in `front` takes the first
// such as its parent and joins `next`. Returns how many joined.
template <class G, class Parent, class Bits>
std::uint64_t bottom_up_step(const G& g, Parent& parent, const Bits& front, Bits& next, BfsStats& st) {
    fill(next, 0);
    std::uint64_t awake = 0;
    RangeReader lists(g.neighbours);
    with_walk(front, [&](auto&& in) {  // the frontier's bits at random: arrays.hpp
        for_each_vertex(g, [&](std::uint32_t u, std::uint64_t first, std::uint64_t last) {
            if (load(parent, u) != kUnreached) return;
            const std::uint64_t at = find_at(lists, first, last, [&](std::uint32_t v) {
                if (!test_bit(in, v)) return false;
                store(parent, u, v);
                set_bit(next, u);
                ++awake;
                return true;
            });
            st.edges_examined += (at < last ? at + 1 : last) - first;
        });
    });
    return awake;
}

template <class Queue, class Bits>
void queue_to_bitmap(const Queue& queue, const Window& q, Bits& bits) {
    fill(bits, 0);
    for (std::size_t i = q.head; i < q.tail; ++i) set_bit(bits, load(queue, i));
}

// The bitmap's vertices, ascending, as the whole new window.
template <class Queue, class Bits>
void bitmap_to_queue(const Bits& bits, Queue& queue, Window& q) {
    q = {};
    for (std::size_t k = 0; k < bits.size(); ++k)
        for (std::uint64_t w = load(bits, k); w; w &= w - 1)
            store(queue, q.in++, static_cast<std::uint32_t>(k * 64 + static_cast<unsigned>(__builtin_ctzll(w))));
    q.slide();
}

// Bottom-up steps from the window's frontier until the frontier stops growing and is
// below n / beta; leaves that frontier as the window.
template <class G, class Parent, class Queue, class Bits>
void bottom_up_phase(const G& g, Parent& parent, Queue& queue, Window& q, Bits* front, Bits* next,
                     const BfsOptions& o, BfsStats& st) {
    queue_to_bitmap(queue, q, *front);
    std::uint64_t awake = q.tail - q.head, old;
    do {
        old = awake;
        awake = bottom_up_step(g, parent, *front, *next, st);
        ++st.bottom_up_steps;
        std::swap(front, next);
    } while (awake >= old || awake > g.n / o.beta);
    bitmap_to_queue(*front, queue, q);
}
}  // namespace detail

// Breadth-first search from root: parent[v] = v's parent in a BFS tree, parent[root] =
// root, kUnreached for vertices outside root's component. pre: root < g.n;
// parent.size() and queue.size() >= g.n; front.size() and next.size() >= bitmap_words(g.n).
template <class G, class Parent, class Queue, class Bits>
BfsStats bfs(const G& g, std::uint32_t root, Parent& parent, Queue& queue, Bits& front, Bits& next,
             const BfsOptions& o = {}) {
    fill(parent, kUnreached);
    return with_walk(parent, [&](auto&& par) {  // parent[v] at random, every step: arrays.hpp
        BfsStats st;
        store(par, root, root);
        store(queue, 0, root);
        detail::Window q{0, 1, 1};
        std::uint64_t unexplored = load(g.offsets, g.n), scout = degree(g, root);
        while (!q.empty()) {
            if (scout > unexplored / o.alpha) {
                detail::bottom_up_phase(g, par, queue, q, &front, &next, o, st);
                scout = 1;
            } else {
                unexplored -= std::min(scout, unexplored);  // GAP subtracts plainly; the 1 after a
                                                            // bottom-up phase could wrap it
                scout = detail::top_down_step(g, par, queue, q, st);
                ++st.top_down_steps;
                q.slide();
            }
        }
        return st;
    });
}

// Undirected edges of the CSR inside the searched component: the summed degrees of the
// reached vertices, halved. Graph500's TEPS numerator counts the input edges instead
// (duplicates and self loops included): traversed_input_edges.
template <class G, class Parent>
std::uint64_t traversed_edges(const G& g, const Parent& parent) {
    std::uint64_t sum = 0;
    for (std::uint32_t v = 0; v < g.n; ++v)
        if (load(parent, v) != kUnreached) sum += degree(g, v);
    return sum / 2;
}
// Input edges (an edge list, as generated) with their endpoints reached. pre: every
// endpoint < parent.size().
template <class Parent, class Edges>
std::uint64_t traversed_input_edges(const Edges& edges, const Parent& parent) {
    std::uint64_t count = 0;
    for (const auto& e : edges) count += load(parent, e.u) != kUnreached;
    return count;
}

}  // namespace lab::graph
