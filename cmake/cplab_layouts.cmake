# The one list of layouts (core/layouts.def) as CMake sees it: CPLAB_LAYOUTS holds every
# layout's identifier, the stem of its own files, and cplab_layout_sources(<var> <pattern>)
# appends one source per layout, the pattern's @ replaced by the identifier
# (cplab_layout_sources(srcs layouts/@.cpp) → layouts/contiguous.cpp, ...). A new layout is one
# line of layouts.def and its own files; no CMakeLists names it.
file(STRINGS ${PROJECT_SOURCE_DIR}/core/layouts.def cplab_layout_lines REGEX "^CPLAB_LAYOUT\\(")
set(CPLAB_LAYOUTS)
foreach(line IN LISTS cplab_layout_lines)
  string(REGEX REPLACE "^CPLAB_LAYOUT\\(([a-z0-9_]+)\\).*$" "\\1" id "${line}")
  list(APPEND CPLAB_LAYOUTS ${id})
endforeach()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/core/layouts.def)

function(cplab_layout_sources out pattern)
  set(sources ${${out}})
  foreach(id IN LISTS CPLAB_LAYOUTS)
    string(REPLACE "@" "${id}" source "${pattern}")
    list(APPEND sources ${source})
  endforeach()
  set(${out} ${sources} PARENT_SCOPE)
endfunction()

# Each layout's file matching `pattern` (its @ replaced by the identifier) where the layout has one:
# optional parts (its own mutants, its own tests) join their target without a CMakeLists line.
function(cplab_layout_files out pattern)
  set(sources ${${out}})
  foreach(id IN LISTS CPLAB_LAYOUTS)
    string(REPLACE "@" "${id}" source "${pattern}")
    if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${source})
      list(APPEND sources ${source})
    endif()
  endforeach()
  set(${out} ${sources} PARENT_SCOPE)
endfunction()

# A layout's own test file in `folder` (folder/ID_test.cpp), for every layout that has one.
function(cplab_layout_tests out folder)
  cplab_layout_files(${out} ${folder}/@_test.cpp)
  set(${out} ${${out}} PARENT_SCOPE)
endfunction()
