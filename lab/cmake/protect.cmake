# lab/cmake/protect.cmake — the protect suite (issue 24): one source, two programs.
#   physmem_lab_protect        lab/protect/*.cpp at the lab's flags
#   physmem_lab_protect_asan   the same sources with -fsanitize=address (the compiler's
#                              memory-safety tool: the anchor the suite compares with)
# Both at the lab's flags (physmem_lab_common's PUBLIC -O3 -march=native); the ASan twin
# instruments its own code (the kernels, the trees' templates), not libphysmem.a.
set(_protect_dir ${CMAKE_CURRENT_SOURCE_DIR}/protect)
set(_protect_sources ${_protect_dir}/main.cpp ${_protect_dir}/seeded.cpp)
foreach(_twin plain asan)
  if(_twin STREQUAL "plain")
    set(_name physmem_lab_protect)
    set(_experiment protect)
  else()
    set(_name physmem_lab_protect_asan)
    set(_experiment protect_asan)
  endif()
  add_executable(${_name} ${_protect_sources})
  target_include_directories(${_name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${_name} PRIVATE physmem_lab_common)
  target_compile_options(${_name} PRIVATE -Wall -Wextra)
  target_compile_definitions(${_name} PRIVATE PHYSMEM_PROTECT_PROGRAM="${_name}"
                             PHYSMEM_PROTECT_EXPERIMENT="${_experiment}")
  if(_twin STREQUAL "asan")
    target_compile_options(${_name} PRIVATE -fsanitize=address -fno-omit-frame-pointer)
    target_link_options(${_name} PRIVATE -fsanitize=address)
    target_compile_definitions(${_name} PRIVATE PHYSMEM_PROTECT_ASAN)
  endif()
endforeach()
