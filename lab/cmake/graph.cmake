# lab/cmake/graph.cmake — the graph suite (issue 27): compile flags of its own.
# physmem_lab_graph (experiments/graph.cpp) keeps the one flag set, with floating-point
# contraction off: PageRank's scores must be bit-identical on every variant (its record's
# checksum compares them), and g++ fused `base + d * sum` into an FMA in the contiguous
# arrays' instantiation but not the TreeArrays' (scores differing in the last bits).
target_compile_options(physmem_lab_graph PRIVATE -ffp-contract=off)
