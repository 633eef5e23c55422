# MPI (Open MPI from Debian: openmpi-bin, libopenmpi-dev): ranks as processes (mpi/, the sim-mpi
# implementation, the distributed sweep) and the NCCL bootstrap over MPI. AUTO builds them where
# MPI is found; builds without it keep everything else.
set(CPLAB_MPI AUTO CACHE STRING "Ranks as MPI processes: AUTO (when MPI is found), ON or OFF")
set_property(CACHE CPLAB_MPI PROPERTY STRINGS AUTO ON OFF)
set(CPLAB_HAVE_MPI OFF)
if(NOT CPLAB_MPI STREQUAL "OFF")
  # FindMPI's C component (the C API only) needs the C language.
  enable_language(C)
  if(CPLAB_MPI STREQUAL "ON")
    find_package(MPI REQUIRED COMPONENTS C)
  else()
    find_package(MPI QUIET COMPONENTS C)
  endif()
  if(MPI_C_FOUND)
    set(CPLAB_HAVE_MPI ON)
    find_program(CPLAB_MPIEXEC NAMES mpirun mpiexec HINTS ${MPIEXEC_EXECUTABLE})
  endif()
endif()
message(STATUS "cplab: MPI ${CPLAB_HAVE_MPI}")
