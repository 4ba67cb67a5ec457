# lab/cmake/algorithms.cmake — the algorithms suite (issue 22): one source, two programs.
#   physmem_lab_algorithms_o2   lab/algorithms/main.cpp + kernels*.cpp compiled at -O2
#   physmem_lab_algorithms_o3   the same with kernels*.cpp at -O3 (one file per container:
#                               kernels_impl.hpp says why)
# The kernels are OBJECT libraries that link only physmem (so physmem_lab_common's PUBLIC
# -O3 -march=native is not appended to their flags): plain -O2 / -O3, as a program built
# against the installed headers gets. Each program holds one build's kernels only, so
# every template they instantiate (iterators, std::sort's internals) is that build's:
# two builds in one program would share those (COMDAT) copies.
# -falign-loops=64 -falign-jumps=64: every loop starts a 64-byte window, so where the
# linker puts the kernels (which moves with unrelated code in the program) cannot decide a
# ratio: the same -O3 TreeArray a[i] loop ran 0.30 and 0.51 ns/element in two links on the
# development VM (it crossed a 64-byte boundary in the second). -falign-loops aligns a
# loop's header; where GCC lays the body out before the header and enters it by a jump
# (the PagedArray iterator loop, a checked a[i] with its out-of-line check), the body's
# top is a jump target, which -falign-jumps aligns (padding never executed: such a label
# has no fall-through): the PagedArray iterator loop 1.50x -> 1.11x the tree's.
# --param=align-loop-iterations=1 (lab/CMakeLists.txt says why) aligns the loop headers
# GCC guessed too short to pad for (the TreeArray range-for loop among them).
# --param=inline-unit-growth=400: each kernels file instantiates ~40 kernels for one
# container, and at GCC's default (40%) the file runs out of its inlining budget, so what
# gets inlined depends on what else the file holds, as it would not in a program with a
# few algorithms a file: std::sort through PagedIterator went from 1.58x to 1.72x the
# vector's when the segmented algorithms' paged path grew (g++ 12 then kept its final
# insertion step and more of its partition out of line, -fopt-info-inline-missed: "--param
# inline-unit-growth limit reached"), with std::sort's own code unchanged. The vector's
# kernels get the same budget.
set(_algo_dir ${CMAKE_CURRENT_SOURCE_DIR}/algorithms)
foreach(_level 2 3)
  set(_flags -O${_level} ${PHYSMEM_LAB_ALIGN_FLAGS} --param=inline-unit-growth=400)
  string(JOIN " " _flags_text ${_flags})
  add_library(physmem_lab_algorithms_kernels_o${_level} OBJECT ${_algo_dir}/kernels.cpp
              ${_algo_dir}/kernels_vector.cpp ${_algo_dir}/kernels_tree.cpp ${_algo_dir}/kernels_paged.cpp)
  target_include_directories(physmem_lab_algorithms_kernels_o${_level} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(physmem_lab_algorithms_kernels_o${_level} PRIVATE physmem::physmem)
  target_compile_options(physmem_lab_algorithms_kernels_o${_level} PRIVATE ${_flags} -Wall -Wextra)
  target_compile_definitions(physmem_lab_algorithms_kernels_o${_level} PRIVATE PHYSMEM_ALGO_FLAGS="${_flags_text}")

  add_executable(physmem_lab_algorithms_o${_level} ${_algo_dir}/main.cpp
                 $<TARGET_OBJECTS:physmem_lab_algorithms_kernels_o${_level}>)
  target_link_libraries(physmem_lab_algorithms_o${_level} PRIVATE physmem_lab_common)
  target_compile_options(physmem_lab_algorithms_o${_level} PRIVATE -Wall -Wextra)
  target_compile_definitions(physmem_lab_algorithms_o${_level} PRIVATE
                             PHYSMEM_ALGO_PROGRAM="physmem_lab_algorithms_o${_level}"
                             PHYSMEM_ALGO_EXPERIMENT="algorithms_o${_level}" PHYSMEM_ALGO_BUILD="O${_level}")
endforeach()
