# One place for compiler flags every cplab target gets.
add_library(cplab_warnings INTERFACE)
target_compile_options(cplab_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${CPLAB_WERROR}>>:-Werror>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>
  $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${CPLAB_WERROR}>>:-Werror=all-warnings>)
if(CPLAB_SANITIZE)
  target_compile_options(cplab_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer>)
  target_link_options(cplab_warnings INTERFACE -fsanitize=address,undefined
    # Executables linked as position-dependent: a PIE of this size spends about half of a start-up
    # of 0.6 s applying its relocations, and the tests start the CLI and the test executables
    # thousands of times. The objects stay as compiled (the compiler cache still hits).
    $<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:-no-pie>)
endif()
if(CPLAB_FUZZ)
  # Everything instrumented for libFuzzer's coverage; the fuzz targets add -fsanitize=fuzzer.
  target_compile_options(cplab_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer>)
  target_link_options(cplab_warnings INTERFACE -fsanitize=address,undefined)
endif()
if(CPLAB_TSAN)
  target_compile_options(cplab_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=thread -fno-omit-frame-pointer>)
  target_link_options(cplab_warnings INTERFACE -fsanitize=thread)
endif()
