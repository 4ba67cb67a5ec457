// lab/kernels/graph/validate.hpp — checks of the kernels' results against the Csr, in
// the manner of Graph500's validation: each returns "" when the result is valid, else a
// message naming the first violation found.
//
// They take the results as plain arrays (copy them out of a TreeArray or PagedArray with
// to_vector, arrays.hpp) and read the graph from the Csr, so they share no code with the
// kernels but the reference components (union-find, cc.hpp) and PageRank (pagerank.hpp).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kernels/graph/bfs.hpp"
#include "kernels/graph/cc.hpp"
#include "kernels/graph/csr.hpp"
#include "kernels/graph/pagerank.hpp"
#include "kernels/graph/sssp.hpp"

namespace lab::graph {

namespace detail {
inline std::string str(std::uint64_t x) { return std::to_string(x); }
inline std::string num(double x) {  // shortest round-trip form: 1% of a 1e-5 score shows
    char text[32];
    return std::string(text, std::to_chars(text, text + sizeof text, x).ptr);
}

// Whether each vertex is in root's component (by the union-find reference).
inline std::vector<bool> component_of(const Csr& g, std::uint32_t root) {
    const std::vector<std::uint32_t> roots = reference_components(g);
    std::vector<bool> in(g.n);
    for (std::uint32_t v = 0; v < g.n; ++v) in[v] = roots[v] == roots[root];
    return in;
}

// "" when `reached` (a predicate on vertices) holds exactly on root's component.
template <class Reached>
std::string covers_component(const Csr& g, std::uint32_t root, Reached&& reached, const char* what) {
    const std::vector<bool> in = component_of(g, root);
    for (std::uint32_t v = 0; v < g.n; ++v)
        if (in[v] != reached(v))
            return std::string(what) + ": vertex " + str(v) + (in[v] ? " is in the root's component but not reached"
                                                                       : " is reached but not in the root's component");
    return "";
}

// Levels of the parent tree (level[root] = 0, level[v] = level[parent[v]] + 1), or a
// message when following parents from some vertex loops or leaves the reached set.
// pre: parent[root] == root, every parent kUnreached or < n.
inline std::string tree_levels(std::uint32_t root, std::span<const std::uint32_t> parent,
                               std::vector<std::uint32_t>& level) {
    constexpr std::uint32_t kUnknown = kUnreached, kOnPath = kUnreached - 1;
    level.assign(parent.size(), kUnknown);
    level[root] = 0;
    std::vector<std::uint32_t> path;
    for (std::uint32_t v = 0; v < parent.size(); ++v) {
        if (parent[v] == kUnreached) continue;
        for (std::uint32_t x = v; level[x] == kUnknown; x = parent[x]) {
            if (parent[x] == kUnreached) return "bfs: vertex " + str(path.front()) + "'s parents lead to unreached " + str(x);
            level[x] = kOnPath;
            path.push_back(x);
            if (level[parent[x]] == kOnPath) return "bfs: vertex " + str(v) + "'s parents form a cycle";
        }
        for (; !path.empty(); path.pop_back()) level[path.back()] = level[parent[path.back()]] + 1;
    }
    return "";
}

// Every parent in range and, but the root's, a neighbour.
inline std::string parents_are_neighbours(const Csr& g, std::uint32_t root, std::span<const std::uint32_t> parent) {
    for (std::uint32_t v = 0; v < g.n; ++v) {
        const std::uint32_t p = parent[v];
        if (p == kUnreached || v == root) continue;
        if (p >= g.n) return "bfs: vertex " + str(v) + ": parent " + str(p) + " out of range";
        if (!has_edge(g, v, p)) return "bfs: vertex " + str(v) + ": parent " + str(p) + " is not a neighbour";
    }
    return "";
}

// Graph500's edge rules: both ends reached or neither; levels differ by at most 1.
inline std::string edges_span_levels(const Csr& g, std::span<const std::uint32_t> parent,
                                     const std::vector<std::uint32_t>& level) {
    for (std::uint32_t u = 0; u < g.n; ++u)
        for (std::uint32_t v : neighbours_of(g, u)) {
            if ((parent[u] == kUnreached) != (parent[v] == kUnreached))
                return "bfs: edge " + str(u) + "-" + str(v) + " has one end reached";
            if (parent[u] != kUnreached && level[u] > level[v] + 1)
                return "bfs: edge " + str(u) + "-" + str(v) + " spans levels " + str(level[u]) + " and " + str(level[v]);
        }
    return "";
}

// dist[v] <= dist[u] + w on every edge (u reached), and every reached v but the root
// has a neighbour u with dist[v] == dist[u] + w (v's distance is a path's length).
inline std::string distances_are_tight(const Csr& g, std::uint32_t root, std::span<const std::uint64_t> dist) {
    for (std::uint32_t v = 0; v < g.n; ++v) {
        if (dist[v] == kInfinity) continue;
        bool witness = v == root;
        for (std::uint64_t j = g.offsets[v]; j < g.offsets[v + 1]; ++j) {
            const std::uint32_t u = g.neighbours[j], w = g.weights[j];
            const std::uint64_t via = dist[u] >= kInfinity - w ? kInfinity : dist[u] + w;  // saturating
            if (dist[v] > via) return "sssp: vertex " + str(v) + ": distance " + str(dist[v]) + " > " + str(via) + " via " + str(u);
            witness |= dist[v] == via;
        }
        if (!witness) return "sssp: vertex " + str(v) + ": distance " + str(dist[v]) + " is no neighbour's plus its edge";
    }
    return "";
}
}  // namespace detail

// Graph500's BFS rules: parent[root] == root; every reached v != root has parent[v] as a
// neighbour; the parents form a tree (no cycles, every chain ends at the root) whose
// levels differ by at most 1 across every edge; an edge has both ends reached or neither;
// exactly the root's component is reached. pre: root < g.n.
inline std::string validate_bfs(const Csr& g, std::uint32_t root, std::span<const std::uint32_t> parent) {
    if (parent.size() != g.n) return "bfs: " + detail::str(parent.size()) + " parents for " + detail::str(g.n) + " vertices";
    if (parent[root] != root) return "bfs: parent of the root " + detail::str(root) + " is " + detail::str(parent[root]);
    std::string e = detail::parents_are_neighbours(g, root, parent);
    std::vector<std::uint32_t> level;
    if (e.empty()) e = detail::tree_levels(root, parent, level);
    if (e.empty()) e = detail::edges_span_levels(g, parent, level);
    if (e.empty())
        e = detail::covers_component(g, root, [&](std::uint32_t v) { return parent[v] != kUnreached; }, "bfs");
    return e;
}

// Shortest distances: dist[root] == 0; dist[v] <= dist[u] + w on every edge; every
// reached v != root is some neighbour's distance plus its edge; reached (not kInfinity)
// exactly on the root's component. With positive weights these make dist exact.
// pre: root < g.n.
inline std::string validate_sssp(const Csr& g, std::uint32_t root, std::span<const std::uint64_t> dist) {
    if (dist.size() != g.n) return "sssp: " + detail::str(dist.size()) + " distances for " + detail::str(g.n) + " vertices";
    if (dist[root] != 0) return "sssp: distance of the root " + detail::str(root) + " is " + detail::str(dist[root]);
    std::string e = detail::covers_component(g, root, [&](std::uint32_t v) { return dist[v] != kInfinity; }, "sssp");
    return e.empty() ? detail::distances_are_tight(g, root, dist) : e;
}

// The labels partition the vertices as the components do: two vertices share a label
// iff they are connected (by union-find over the Csr). Any label values will do.
inline std::string validate_cc(const Csr& g, std::span<const std::uint32_t> labels) {
    if (labels.size() != g.n) return "cc: " + detail::str(labels.size()) + " labels for " + detail::str(g.n) + " vertices";
    const std::vector<std::uint32_t> roots = reference_components(g);
    std::vector<std::uint32_t> label_of_root(g.n, kUnreached);
    std::unordered_map<std::uint32_t, std::uint32_t> root_of_label;
    for (std::uint32_t v = 0; v < g.n; ++v) {  // roots[v] <= v: the root is seen first
        const std::uint32_t r = roots[v], l = labels[v];
        if (label_of_root[r] == kUnreached) label_of_root[r] = l;
        if (label_of_root[r] != l)
            return "cc: vertices " + detail::str(r) + " and " + detail::str(v) + " are connected but labelled " +
                   detail::str(label_of_root[r]) + " and " + detail::str(l);
        const auto [it, fresh] = root_of_label.try_emplace(l, r);
        if (it->second != r)
            return "cc: vertices " + detail::str(it->second) + " and " + detail::str(v) + " are not connected but share label " +
                   detail::str(l);
    }
    return "";
}

// Distinct labels (the component count, when validate_cc accepts them).
inline std::uint64_t label_count(std::span<const std::uint32_t> labels) {
    return std::unordered_set<std::uint32_t>(labels.begin(), labels.end()).size();
}

// PageRank after `iterations` (pagerank.hpp): every score finite and at least
// (1 - d)/n; for n <= reference_max_n, each score within a relative 1e-9 of
// pagerank_reference's (which sums in the same order: only rounding differs, ~1e-15);
// always, their sum (in long double) within a relative 1e-9 of
// expected_pagerank_sum (1 less the share the dangling vertices let go). The sum alone
// misses errors that cancel or are below 1e-9 of the total: it is the check for graphs
// too large to recompute.
inline std::string validate_pagerank(const Csr& g, std::span<const double> scores, unsigned iterations,
                                     double damping = kDamping, std::uint32_t reference_max_n = 1u << 16) {
    if (scores.size() != g.n) return "pagerank: " + detail::str(scores.size()) + " scores for " + detail::str(g.n) + " vertices";
    const double base = (1.0 - damping) / g.n;
    long double sum = 0;
    for (std::uint32_t v = 0; v < g.n; ++v) {
        if (!std::isfinite(scores[v]) || scores[v] < base * (1 - 1e-12))
            return "pagerank: vertex " + detail::str(v) + ": score " + detail::num(scores[v]) + " below (1-d)/n";
        sum += scores[v];
    }
    if (g.n <= reference_max_n) {
        const std::vector<double> ref = pagerank_reference(g, iterations, damping);
        for (std::uint32_t v = 0; v < g.n; ++v)
            if (std::fabs(scores[v] - ref[v]) > 1e-9 * ref[v])
                return "pagerank: vertex " + detail::str(v) + ": score " + detail::num(scores[v]) + ", reference " +
                       detail::num(ref[v]);
    }
    const long double expected = expected_pagerank_sum(g, iterations, damping);
    if (std::fabs(sum - expected) > 1e-9L * expected)
        return "pagerank: scores sum to " + detail::num(static_cast<double>(sum)) + ", expected " +
               detail::num(static_cast<double>(expected));
    return "";
}

}  // namespace lab::graph
