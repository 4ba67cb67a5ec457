# lab/cmake/stack.cmake — the split-stack suite (seeds 000/001): lab/stack/.
#
# kernels.cpp is compiled twice, into lab::stack::normal with the lab's flags and into
# lab::stack::split with -fsplit-stack, and both go into one program, physmem_lab_stack,
# and one test program, physmem_lab_stack_tests (CTest). The link:
#   -fsplit-stack      libgcc's __morestack and its pthread_create wrapper
#   -fuse-ld=gold      gold fixes up split code that calls code built without it (the
#                      default ld.bfd cannot); ld.gold comes with Debian's binutils
#   --wrap=syscall,--wrap=getpagesize   lab/stack/segments.hpp: counting and steering
#                      libgcc's segment allocation (libgcc.a is linked statically)
# Skipped, with a message, under sanitizers (ASan and split stacks do not mix), with
# another compiler than GCC, or without ld.gold.
set(_stack_dir ${CMAKE_CURRENT_SOURCE_DIR}/stack)
if(PHYSMEM_SANITIZE)
  message(STATUS "physmem lab: split-stack suite skipped under PHYSMEM_SANITIZE=${PHYSMEM_SANITIZE}")
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  message(STATUS "physmem lab: split-stack suite needs GCC (-fsplit-stack); skipped")
  return()
endif()
find_program(PHYSMEM_LD_GOLD ld.gold)
if(NOT PHYSMEM_LD_GOLD)
  message(WARNING "physmem lab: ld.gold not found (Debian package binutils); split-stack suite skipped")
  return()
endif()

foreach(_build normal split)
  add_library(physmem_lab_stack_${_build} OBJECT ${_stack_dir}/kernels.cpp)
  target_compile_definitions(physmem_lab_stack_${_build} PRIVATE PHYSMEM_STACK_NS=${_build})
  target_compile_options(physmem_lab_stack_${_build} PRIVATE ${PHYSMEM_LAB_CXX_FLAGS} -Wall -Wextra)
  target_include_directories(physmem_lab_stack_${_build} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(physmem_lab_stack_${_build} PRIVATE physmem::physmem)
endforeach()
target_compile_options(physmem_lab_stack_split PRIVATE -fsplit-stack)

add_library(physmem_lab_stack_support STATIC ${_stack_dir}/segments.cpp ${_stack_dir}/thread.cpp)
target_include_directories(physmem_lab_stack_support PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_options(physmem_lab_stack_support PRIVATE ${PHYSMEM_LAB_CXX_FLAGS} -Wall -Wextra)
target_link_libraries(physmem_lab_stack_support PUBLIC Threads::Threads)
set(_stack_link -fsplit-stack -fuse-ld=gold LINKER:--wrap=syscall LINKER:--wrap=getpagesize)

add_executable(physmem_lab_stack ${_stack_dir}/main.cpp)
target_sources(physmem_lab_stack PRIVATE $<TARGET_OBJECTS:physmem_lab_stack_normal> $<TARGET_OBJECTS:physmem_lab_stack_split>)
target_link_libraries(physmem_lab_stack PRIVATE physmem_lab_stack_support physmem_lab_common)
target_compile_options(physmem_lab_stack PRIVATE -Wall -Wextra)
target_link_options(physmem_lab_stack PRIVATE ${_stack_link})

if(PHYSMEM_BUILD_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
  add_executable(physmem_lab_stack_tests ${_stack_dir}/stack_test.cpp)
  target_sources(physmem_lab_stack_tests PRIVATE $<TARGET_OBJECTS:physmem_lab_stack_normal> $<TARGET_OBJECTS:physmem_lab_stack_split>)
  target_link_libraries(physmem_lab_stack_tests PRIVATE physmem_lab_stack_support physmem_lab_common GTest::gtest GTest::gtest_main)
  target_link_options(physmem_lab_stack_tests PRIVATE ${_stack_link})
  gtest_discover_tests(physmem_lab_stack_tests DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)
  # The split object must call nothing but itself and __morestack: an inline function
  # left out of line would be COMDAT-merged with the normal build's copy (kernels.hpp).
  find_program(PHYSMEM_OBJDUMP objdump)
  if(PHYSMEM_OBJDUMP)
    add_test(NAME physmem_lab_stack_split_calls_only_split_code
             COMMAND sh -c "! ${PHYSMEM_OBJDUMP} -dr $<TARGET_OBJECTS:physmem_lab_stack_split> | grep -o 'R_X86_64_PLT32.*' | grep -v -e __morestack -e _ZN3lab5stack5split | grep .")
  endif()
endif()
