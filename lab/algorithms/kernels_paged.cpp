// lab/algorithms/kernels_paged.cpp — the kernels on physmem::PagedArray (kernels_impl.hpp).
#include "algorithms/kernels_impl.hpp"

namespace lab::algorithms {

std::unique_ptr<Workload> make_paged(const Setup& s) { return std::make_unique<Impl<Paged>>(s); }

}  // namespace lab::algorithms
