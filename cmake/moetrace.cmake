# One library per folder. Sources are found by globbing so that adding a
# file needs no CMake edit: foo.cc goes into the library, foo_test.cc into
# the folder's test binary, foo_fuzzer.cc into a libFuzzer target.
set(MOETRACE_TRACES_DIR "${CMAKE_SOURCE_DIR}/../shared/traces")

function(moetrace_sources dir out_lib out_test out_fuzz)
  file(GLOB_RECURSE all CONFIGURE_DEPENDS "${dir}/*.cc")
  set(lib "")
  set(test "")
  set(fuzz "")
  foreach(f ${all})
    if(f MATCHES "_test\\.cc$")
      list(APPEND test ${f})
    elseif(f MATCHES "_fuzzer\\.cc$")
      list(APPEND fuzz ${f})
    elseif(f MATCHES "_bench\\.cc$")
    else()
      list(APPEND lib ${f})
    endif()
  endforeach()
  set(${out_lib} ${lib} PARENT_SCOPE)
  set(${out_test} ${test} PARENT_SCOPE)
  set(${out_fuzz} ${fuzz} PARENT_SCOPE)
endfunction()

# moetrace_library(NAME DEPS...): library NAME from this folder, plus
# NAME_tests (GoogleTest, run by ctest) and one fuzzer per *_fuzzer.cc.
function(moetrace_library name)
  moetrace_sources(${CMAKE_CURRENT_SOURCE_DIR} lib test fuzz)
  if(lib)
    add_library(${name} STATIC ${lib})
    target_include_directories(${name} PUBLIC ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
    target_link_libraries(${name} PUBLIC ${ARGN})
    if(MOETRACE_FUZZ)
      # Coverage feedback from the libraries, not only the harness files:
      # without it libFuzzer mutates nearly blind (native_reader_fuzzer reached
      # 376 edges instead of ~4,300). Only the libraries: the tests and the CLI
      # are no fuzz target, and the instrumentation cost 15% of their compile.
      target_compile_options(${name} PRIVATE -fsanitize=fuzzer-no-link)
    endif()
  else()
    add_library(${name} INTERFACE)
    target_link_libraries(${name} INTERFACE ${ARGN})
  endif()
  if(test)
    moetrace_test(${name}_tests ${test})
    target_link_libraries(${name}_tests PRIVATE ${name})
  endif()
  if(MOETRACE_FUZZ)
    foreach(f ${fuzz})
      get_filename_component(fname ${f} NAME_WE)
      add_executable(${fname} ${f})
      target_compile_options(${fname} PRIVATE -fsanitize=fuzzer)
      target_link_options(${fname} PRIVATE -fsanitize=fuzzer)
      target_link_libraries(${fname} PRIVATE ${name})
      # A bounded smoke run: no crash in 20 s of mutations.
      add_test(NAME ${fname}_smoke
               COMMAND ${fname} -max_total_time=20 -rss_limit_mb=2048 -timeout=10
                       -max_len=65536)
      set_tests_properties(${fname}_smoke PROPERTIES LABELS fuzz TIMEOUT 120)
    endforeach()
  endif()
endfunction()

function(moetrace_test name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE GTest::gtest GTest::gtest_main Threads::Threads)
  target_compile_definitions(${name} PRIVATE
    MOETRACE_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
    MOETRACE_TRACES_DIR="${MOETRACE_TRACES_DIR}")
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60)
endfunction()

# Generated protobuf sources each define the same file-local tables
# (`schemas`, `file_default_instances`): they cannot share a unity file.
function(moetrace_no_unity)
  set_source_files_properties(${ARGN} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()
