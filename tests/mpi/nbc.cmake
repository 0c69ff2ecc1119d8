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
# The progress thread asked for where the ranks may outnumber the CPUs (by
# default there is none then): the same results, and the thread is there.
mpi_test(mpi_nbc_thread_3 3 $<TARGET_FILE:mpi_nbc>)
set_tests_properties(mpi_nbc_thread_3 PROPERTIES ENVIRONMENT COURIER_NBC_THREAD=1)
# Small eager limit: every transfer of any size takes the rendezvous path.
mpi_test(mpi_nbc_small_eager_4 4 $<TARGET_FILE:mpi_nbc>)
set_tests_properties(mpi_nbc_small_eager_4 PROPERTIES ENVIRONMENT COURIER_EAGER_LIMIT=16)
# A deadlock in the wait of a nonblocking collective: the watchdog names the
# call (it said "exit (finishing its sends)" before).
courier_test(NAME mpi_nbc_deadlock COMMAND ${MPI_EXPECT} 99
         "rank 1 waits in MPI_Wait on MPI_I[a-z]+ \\(for requests: several, or a nonblocking collective's\\)"
         -- ${MPI_CMD} run -n 3 --timeout 60 --hang-timeout 1 $<TARGET_FILE:mpi_nbc> hang)
# Persistent collectives (src/api/mpi_pcoll.c): every MPI_*_init against its
# blocking form over restarts, intercommunicator, neighbourhood, several at once.
add_executable(mpi_pcoll pcoll.c)
target_include_directories(mpi_pcoll PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
target_link_libraries(mpi_pcoll PRIVATE courier)
foreach(np 1 2 3 4)
  pass_test(mpi_pcoll_${np} "pcoll: all passed" ${MPI_CMD} run -n ${np} --timeout 120 $<TARGET_FILE:mpi_pcoll>)
endforeach()
# Every transfer through the rendezvous path.
pass_test(mpi_pcoll_small_eager_3 "pcoll: all passed" ${MPI_CMD} run -n 3 --timeout 120 $<TARGET_FILE:mpi_pcoll>)
set_tests_properties(mpi_pcoll_small_eager_3 PROPERTIES ENVIRONMENT COURIER_EAGER_LIMIT=16)
# The large-count _c forms (src/api/mpi_large*.c): small counts against the int
# forms, and 2^31 + 8 bytes sent, received and broadcast for real (1 MiB of
# memory a buffer: tests/mpi/large.c says how). On 1 rank (the local parts) and
# 2 (the transfers: a third rank would move another 2 GiB through the same code).
add_executable(mpi_large large.c)
target_include_directories(mpi_large PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
target_link_libraries(mpi_large PRIVATE courier)
foreach(np 1 2)
  pass_test(mpi_large_${np} "large: all passed" ${MPI_CMD} run -n ${np} --timeout 300 $<TARGET_FILE:mpi_large>)
endforeach()
