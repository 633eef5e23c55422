#pragma once
// CPLAB_HD marks a function that host code and CUDA kernels both call (index maps, the mask
// predicate): one definition, so the CPU tests run the very code the kernels run.
#if defined(__CUDACC__)
#define CPLAB_HD __host__ __device__
#else
#define CPLAB_HD
#endif
