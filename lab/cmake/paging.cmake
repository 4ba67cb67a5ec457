# The paging suite's STXXL peer (Debian libstxxl-dev, OpenMP): linked into
# physmem_lab_paging when found; without it the stxxl variant reports itself unavailable.
find_path(PHYSMEM_STXXL_INCLUDE stxxl/vector)
find_library(PHYSMEM_STXXL_LIBRARY stxxl)
find_package(OpenMP COMPONENTS CXX)
if(PHYSMEM_STXXL_INCLUDE AND PHYSMEM_STXXL_LIBRARY AND OpenMP_CXX_FOUND)
  target_compile_definitions(physmem_lab_paging PRIVATE PHYSMEM_LAB_HAVE_STXXL=1)
  target_include_directories(physmem_lab_paging SYSTEM PRIVATE ${PHYSMEM_STXXL_INCLUDE})
  target_link_libraries(physmem_lab_paging PRIVATE ${PHYSMEM_STXXL_LIBRARY} OpenMP::OpenMP_CXX)
  # -fopenmp defines _OPENMP, which the common library's precompiled header was made without.
  set_target_properties(physmem_lab_paging PROPERTIES DISABLE_PRECOMPILE_HEADERS ON)
else()
  message(STATUS "physmem lab: STXXL not found; physmem_lab_paging's stxxl variant is unavailable")
endif()
