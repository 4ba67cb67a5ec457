# lab/cmake/alias.cmake — seed 002's 4K-aliasing programs (suite `alias`), whose kernels are
# built with their own flags, not the lab's -O3 -march=native:
#   physmem_lab_alias_env   the microkernel (lab/alias/micro.cpp at -O2) over environment sizes
#   physmem_lab_alias_conv  the convolution, lab/alias/conv.cpp compiled four times:
#                           -O2, -O2 + restrict, -O3, -O3 + restrict
# The kernel objects are OBJECT libraries that link nothing, so no dependency's
# compile options (physmem_lab_common's PUBLIC -O3) are appended to theirs.
set(PHYSMEM_ALIAS_DIR ${CMAKE_CURRENT_LIST_DIR}/../alias)
set(PHYSMEM_ALIAS_FLAGS_O2 -O2)
set(PHYSMEM_ALIAS_FLAGS_O3 -O3)

add_library(physmem_alias_micro OBJECT ${PHYSMEM_ALIAS_DIR}/micro.cpp)
target_include_directories(physmem_alias_micro PRIVATE ${CMAKE_CURRENT_LIST_DIR}/..)
target_compile_options(physmem_alias_micro PRIVATE ${PHYSMEM_ALIAS_FLAGS_O2} -Wall -Wextra)

set(PHYSMEM_ALIAS_CONV_OBJECTS)
foreach(build o2 o2_restrict o3 o3_restrict)
  string(SUBSTRING ${build} 0 2 level)
  string(TOUPPER ${level} level_uc)
  if(build MATCHES "restrict")
    set(restrict 1)
  else()
    set(restrict 0)
  endif()
  add_library(physmem_alias_conv_${build} OBJECT ${PHYSMEM_ALIAS_DIR}/conv.cpp)
  target_include_directories(physmem_alias_conv_${build} PRIVATE ${CMAKE_CURRENT_LIST_DIR}/..)
  target_compile_options(physmem_alias_conv_${build} PRIVATE ${PHYSMEM_ALIAS_FLAGS_${level_uc}} -Wall -Wextra)
  target_compile_definitions(physmem_alias_conv_${build} PRIVATE ALIAS_CONV_FN=conv_${build}
                             ALIAS_CONV_RESTRICT=${restrict})
  list(APPEND PHYSMEM_ALIAS_CONV_OBJECTS $<TARGET_OBJECTS:physmem_alias_conv_${build}>)
endforeach()

# The kernels and the build table in one static library, linked by both programs and by
# the kernel tests (physmem_lab_tests is defined after this file is included: deferred).
string(JOIN " " PHYSMEM_ALIAS_O2_TEXT ${PHYSMEM_ALIAS_FLAGS_O2})
string(JOIN " " PHYSMEM_ALIAS_O3_TEXT ${PHYSMEM_ALIAS_FLAGS_O3})
add_library(physmem_alias_kernels STATIC ${PHYSMEM_ALIAS_DIR}/conv_builds.cpp
            $<TARGET_OBJECTS:physmem_alias_micro> ${PHYSMEM_ALIAS_CONV_OBJECTS})
target_include_directories(physmem_alias_kernels PUBLIC ${CMAKE_CURRENT_LIST_DIR}/..)
target_compile_options(physmem_alias_kernels PRIVATE -Wall -Wextra)
target_compile_definitions(physmem_alias_kernels PRIVATE ALIAS_FLAGS_O2="${PHYSMEM_ALIAS_O2_TEXT}"
                           ALIAS_FLAGS_O3="${PHYSMEM_ALIAS_O3_TEXT}")

add_executable(physmem_lab_alias_env ${PHYSMEM_ALIAS_DIR}/env_main.cpp)
target_link_libraries(physmem_lab_alias_env PRIVATE physmem_lab_common physmem_alias_kernels)
target_compile_options(physmem_lab_alias_env PRIVATE -Wall -Wextra)

add_executable(physmem_lab_alias_conv ${PHYSMEM_ALIAS_DIR}/conv_main.cpp)
target_link_libraries(physmem_lab_alias_conv PRIVATE physmem_lab_common physmem_alias_kernels)
target_compile_options(physmem_lab_alias_conv PRIVATE -Wall -Wextra)

function(physmem_alias_link_tests)
  if(TARGET physmem_lab_tests)
    target_link_libraries(physmem_lab_tests PRIVATE physmem_alias_kernels)
  endif()
endfunction()
cmake_language(DEFER CALL physmem_alias_link_tests)
