# lab/cmake/protect.cmake — the protect suite (issue 24): one source, two programs.
#   physmem_lab_protect        lab/protect/*.cpp at the lab's flags
#   physmem_lab_protect_asan   the same sources with -fsanitize=address (the compiler's
#                              memory-safety tool: the anchor the suite compares with)
# Both at the lab's flags (physmem_lab_common's PUBLIC -O3 -march=native); the ASan twin
# instruments its own code (main.cpp: the kernels, the trees' templates), not libphysmem.a
# nor the seeded bugs.
set(_protect_dir ${CMAKE_CURRENT_SOURCE_DIR}/protect)
# The seeded bugs run only from the plain program (children of its tree variant): one
# uninstrumented object serves both.
add_library(physmem_lab_protect_seeded OBJECT ${_protect_dir}/seeded.cpp)
target_include_directories(physmem_lab_protect_seeded PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(physmem_lab_protect_seeded PRIVATE physmem_lab_common)
target_compile_options(physmem_lab_protect_seeded PRIVATE -Wall -Wextra)
foreach(_twin plain asan)
  if(_twin STREQUAL "plain")
    set(_name physmem_lab_protect)
    set(_experiment protect)
  else()
    set(_name physmem_lab_protect_asan)
    set(_experiment protect_asan)
  endif()
  add_executable(${_name} ${_protect_dir}/main.cpp $<TARGET_OBJECTS:physmem_lab_protect_seeded>)
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
