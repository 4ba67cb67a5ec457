// lab/algorithms/kernels_tree.cpp — the kernels on physmem::TreeArray (kernels_impl.hpp).
#include "algorithms/kernels_impl.hpp"

namespace lab::algorithms {

std::unique_ptr<Workload> make_tree(const Setup& s) { return std::make_unique<Impl<Tree>>(s); }

}  // namespace lab::algorithms
