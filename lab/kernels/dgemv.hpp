// lab/kernels/dgemv.hpp — seed 002's BLAS case: y = A x with A = I (so y must equal x),
// M = N = n, column-major, through cblas_dgemv of a BLAS loaded at run time, with y
// placed `offset` bytes past a 4 KiB boundary while A and x start on one.
//
// Layout inside one caller-provided arena (page-aligned, >= arena_bytes(n)):
//   [A: n*n doubles][x: n doubles, page-rounded][y: n doubles + offset, page-rounded + 4 KiB]
// so at offset 0 x[i], y[i] and the rows of A share their low 12 bits (4K aliasing
// between the loads of x/A and the stores to y), and offsets 16..4080 move y off them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

namespace lab::dgemv {

inline constexpr std::size_t kPage = 4096;

// cblas_dgemv's C signature (CBLAS_ORDER / CBLAS_TRANSPOSE as ints: 102 col-major, 111 no-trans).
using DgemvFn = void (*)(int order, int trans, int m, int n, double alpha, const double* a, int lda,
                         const double* x, int incx, double beta, double* y, int incy);
inline constexpr int kColMajor = 102, kNoTrans = 111;

inline std::size_t round_page(std::size_t b) { return (b + kPage - 1) / kPage * kPage; }
inline std::size_t arena_bytes(std::size_t n) {
    return round_page(n * n * sizeof(double)) + round_page(n * sizeof(double)) + round_page(n * sizeof(double)) + kPage;
}

struct Operands {
    double* a;
    double* x;
    double* y;
};

// Places A, x and y in `arena` as above. pre: offset < 4096, offset % 8 == 0.
inline Operands place(std::byte* arena, std::size_t n, std::size_t offset) {
    std::byte* x = arena + round_page(n * n * sizeof(double));
    std::byte* y = x + round_page(n * sizeof(double)) + offset;
    return {reinterpret_cast<double*>(arena), reinterpret_cast<double*>(x), reinterpret_cast<double*>(y)};
}

// A = I (column-major), x[i] = i.
inline void init(const Operands& o, std::size_t n) {
    std::memset(o.a, 0, n * n * sizeof(double));
    for (std::size_t i = 0; i < n; ++i) o.a[i * n + i] = 1.0, o.x[i] = static_cast<double>(i);
}

// y = 1 * A x + 0 * y.
inline void run(DgemvFn f, const Operands& o, std::size_t n) {
    const int k = static_cast<int>(n);
    f(kColMajor, kNoTrans, k, k, 1.0, o.a, k, o.x, 1, 0.0, o.y, 1);
}

// Number of i with y[i] != x[i] (0 when the product is right; A = I makes it exact).
inline std::size_t mismatches(const Operands& o, std::size_t n) {
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) bad += o.y[i] != o.x[i];
    return bad;
}

// The BLAS libraries compared (Debian's packages): path and what they are.
struct Library {
    const char* name;
    const char* path;
};
inline constexpr Library kLibraries[] = {
    {"openblas", "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0"},   // libopenblas0-pthread
    {"reference", "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3"},                  // libblas3 (netlib)
};

}  // namespace lab::dgemv
