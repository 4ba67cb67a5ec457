// lab/algorithms/kernels.cpp — make() and build_flags() of kernels.hpp: the workload of
// each container comes from its own source file (kernels_impl.hpp says why).
#include "algorithms/kernels.hpp"

namespace lab::algorithms {

std::unique_ptr<Workload> make_vector(const Setup& s);
std::unique_ptr<Workload> make_tree(const Setup& s);
std::unique_ptr<Workload> make_paged(const Setup& s);

std::unique_ptr<Workload> make(const Setup& s) {
    switch (s.container) {
        case Container::tree: return make_tree(s);
        case Container::paged: return make_paged(s);
        default: return make_vector(s);
    }
}

const char* build_flags() noexcept { return PHYSMEM_ALGO_FLAGS; }

}  // namespace lab::algorithms
