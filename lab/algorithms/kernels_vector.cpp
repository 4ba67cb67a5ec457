// lab/algorithms/kernels_vector.cpp — the kernels on std::vector (kernels_impl.hpp).
#include "algorithms/kernels_impl.hpp"

namespace lab::algorithms {

std::unique_ptr<Workload> make_vector(const Setup& s) { return std::make_unique<Impl<Vec>>(s); }

}  // namespace lab::algorithms
