// lab/kernels/graph/kernels.hpp — the graph kernels in one include: generators, the CSR
// builder, the array views, BFS, PageRank, connected components, SSSP and their checks.
#pragma once

#include "kernels/graph/arrays.hpp"
#include "kernels/graph/bfs.hpp"
#include "kernels/graph/cc.hpp"
#include "kernels/graph/csr.hpp"
#include "kernels/graph/generate.hpp"
#include "kernels/graph/pagerank.hpp"
#include "kernels/graph/sssp.hpp"
#include "kernels/graph/validate.hpp"
#include "kernels/graph/view.hpp"
