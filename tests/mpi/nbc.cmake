# tests/mpi/nbc.cmake: included by tests/mpi/CMakeLists.txt
# Nonblocking collectives (src/api/mpi_nbc.c) against their blocking forms.
add_executable(mpi_nbc nbc.c)
target_include_directories(mpi_nbc PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
target_link_libraries(mpi_nbc PRIVATE courier)
foreach(np 1 2 3 4 7)
  mpi_test(mpi_nbc_${np} ${np} $<TARGET_FILE:mpi_nbc>)
endforeach()
# Progress only inside MPI calls (no progress thread): the same results.
mpi_test(mpi_nbc_nothread_3 3 $<TARGET_FILE:mpi_nbc>)
set_tests_properties(mpi_nbc_nothread_3 PROPERTIES ENVIRONMENT COURIER_NBC_THREAD=0)
# Small eager limit: every transfer of any size takes the rendezvous path.
mpi_test(mpi_nbc_small_eager_4 4 $<TARGET_FILE:mpi_nbc>)
set_tests_properties(mpi_nbc_small_eager_4 PROPERTIES ENVIRONMENT COURIER_EAGER_LIMIT=16)
# A deadlock in the wait of a nonblocking collective: the watchdog names the
# call (it said "exit (finishing its sends)" before).
courier_test(NAME mpi_nbc_deadlock COMMAND ${MPI_EXPECT} 99
         "rank 1 waits in MPI_Wait on MPI_I[a-z]+ \\(for requests: several, or a nonblocking collective's\\)"
         -- ${MPI_CMD} run -n 3 --timeout 60 --hang-timeout 1 $<TARGET_FILE:mpi_nbc> hang)
