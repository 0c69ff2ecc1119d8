# tests/mpi/inter.cmake: included by tests/mpi/CMakeLists.txt.
# Intercommunicators (inter.c) and communicator creation beyond
# dup/split/create plus the MPI-1 attribute calls (comm_more.c).
foreach(p inter comm_more)
  add_executable(mpi_${p} ${p}.c)
  target_include_directories(mpi_${p} PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
  target_link_libraries(mpi_${p} PRIVATE courier)
endforeach()
foreach(np 2 3 4 5)
  mpi_test(mpi_inter_${np} ${np} $<TARGET_FILE:mpi_inter>)
endforeach()
mpi_test(mpi_comm_more_1 1 $<TARGET_FILE:mpi_comm_more>)
mpi_test(mpi_comm_more_4 4 $<TARGET_FILE:mpi_comm_more>)
mpi_test(mpi_comm_more_5 5 $<TARGET_FILE:mpi_comm_more>)
# two pretend hosts (ranks 0-1 and 2-4): MPI_COMM_TYPE_SHARED splits by host;
# and the intercommunicator test across them (shm within, tcp between)
mpi_test(mpi_comm_more_two_hosts 5 $<TARGET_FILE:mpi_comm_more>)
mpi_test(mpi_inter_two_hosts 5 $<TARGET_FILE:mpi_inter>)
set_tests_properties(mpi_comm_more_two_hosts mpi_inter_two_hosts PROPERTIES ENVIRONMENT
                     COURIER_TEST_HOSTS=2)
