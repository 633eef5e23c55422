# A position-independent copy of a cplab library: the same sources, compiled again, for a shared
# object (the Python module, the torch plugin). cplab's static libraries are compiled as PIE (their
# thread_local state uses the local-exec TLS model) and cannot be linked into one. Symbols are
# hidden: each shared object keeps its copy to itself.
function(cplab_pic_twin target)
  if(TARGET ${target}_pic)
    return()  # made already (io/ makes the reference's for the torch plugin)
  endif()
  cmake_parse_arguments(PARSE_ARGV 1 twin "" "" "SOURCES;LINKS")
  set(sources ${twin_SOURCES})
  if(NOT sources)
    get_target_property(dir ${target} SOURCE_DIR)
    get_target_property(listed ${target} SOURCES)
    foreach(source IN LISTS listed)
      if(IS_ABSOLUTE "${source}")
        list(APPEND sources "${source}")
      else()
        list(APPEND sources "${dir}/${source}")
      endif()
    endforeach()
  endif()
  add_library(${target}_pic STATIC ${sources})
  set_target_properties(${target}_pic PROPERTIES POSITION_INDEPENDENT_CODE ON
                                                 CXX_VISIBILITY_PRESET hidden
                                                 VISIBILITY_INLINES_HIDDEN ON)
  target_include_directories(${target}_pic PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${target}_pic PUBLIC ${twin_LINKS} PRIVATE cplab_warnings)
endfunction()
