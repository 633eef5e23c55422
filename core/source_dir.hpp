#pragma once
// The checkout cplab was built from: the sweep page runs git in it, `cplab bench run` records it,
// and the tree's own tests read the sources there. It is compiled into one generated file
// (core/source_dir.cpp.in) rather than defined on every command line, so that a build in another
// checkout differs in that one object and the compiler cache hits every other one.
namespace cplab {

const char* source_dir();

}  // namespace cplab
