// lab/kernels/graph/cc.hpp — connected components by Shiloach-Vishkin hooking and
// pointer jumping (GAP's cc_sv.cc, single-threaded), and a union-find reference.
//
// labels[v] starts at v. A round hooks, for every edge {u, v} whose labels differ, the
// higher label onto the lower when the higher is a root (labels[high] == high), then
// jumps every vertex's label to its root. Rounds repeat until a hooking sweep changes
// nothing. Labels only decrease and a root's label is its own id, so at the end every
// vertex is labelled with the smallest vertex id of its component.
//
// Arrays (arrays.hpp: span, TreeArray, PagedArray): labels of n uint32.
#pragma once

#include <cstdint>
#include <numeric>
#include <vector>

#include "kernels/graph/csr.hpp"
#include "kernels/graph/view.hpp"

namespace lab::graph {

namespace detail {
// One hooking sweep over every directed entry; returns whether a root was hooked.
template <class G, class Labels>
bool hook(const G& g, Labels& labels) {
    bool changed = false;
    RangeReader lists(g.neighbours);
    for_each_vertex(g, [&](std::uint32_t u, std::uint64_t first, std::uint64_t last) {
        for_each_in(lists, first, last, [&](std::uint32_t v) {
            const std::uint32_t lu = load(labels, u), lv = load(labels, v);
            if (lu == lv) return;
            const std::uint32_t high = lu > lv ? lu : lv, low = lu > lv ? lv : lu;
            if (load(labels, high) != high) return;
            store(labels, high, low);
            changed = true;
        });
    });
    return changed;
}
// labels[v] = the root above v, for every v.
template <class G, class Labels>
void jump(const G& g, Labels& labels) {
    for (std::uint32_t v = 0; v < g.n; ++v) {
        std::uint32_t l = load(labels, v), up = load(labels, l);
        while (l != up) l = up, up = load(labels, l);
        store(labels, v, l);
    }
}
}  // namespace detail

// labels[v] = the smallest vertex of v's component. Returns the rounds (hooking sweeps,
// the last of which changes nothing). pre: labels.size() >= g.n.
template <class G, class Labels>
unsigned connected_components(const G& g, Labels& labels) {
    return with_walk(labels, [&](auto&& l) {
        for (std::uint32_t v = 0; v < g.n; ++v) store(l, v, v);
        unsigned rounds = 1;
        while (detail::hook(g, l)) {
            detail::jump(g, l);
            ++rounds;
        }
        return rounds;
    });
}

// The reference: union-find (by index, path halving) over the Csr's entries; returns
// each vertex's root. Two vertices share a component iff their roots are equal.
inline std::vector<std::uint32_t> reference_components(const Csr& g) {
    std::vector<std::uint32_t> up(g.n);
    std::iota(up.begin(), up.end(), 0u);
    auto find = [&up](std::uint32_t x) {
        while (up[x] != x) x = up[x] = up[up[x]];
        return x;
    };
    for (std::uint32_t u = 0; u < g.n; ++u)
        for (std::uint32_t v : neighbours_of(g, u)) {
            const std::uint32_t a = find(u), b = find(v);
            if (a != b) up[a > b ? a : b] = a > b ? b : a;
        }
    for (std::uint32_t v = 0; v < g.n; ++v) up[v] = find(v);
    return up;
}

// Components of the reference partition (vertices that are their own root).
inline std::uint32_t component_count(const std::vector<std::uint32_t>& roots) {
    std::uint32_t count = 0;
    for (std::uint32_t v = 0; v < roots.size(); ++v) count += roots[v] == v;
    return count;
}

}  // namespace lab::graph
