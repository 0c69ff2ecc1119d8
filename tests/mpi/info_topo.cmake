# tests/mpi/info_topo.cmake: included by tests/mpi/CMakeLists.txt.
# Info objects and communicator hints (info.c); process topologies and the
# neighbourhood collectives (topo.c).
foreach(p info topo)
  add_executable(mpi_${p} ${p}.c)
  target_include_directories(mpi_${p} PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
  target_link_libraries(mpi_${p} PRIVATE courier)
endforeach()
foreach(np 1 2)
  mpi_test(mpi_info_${np} ${np} $<TARGET_FILE:mpi_info>)
endforeach()
foreach(np 1 4 6 8)
  mpi_test(mpi_topo_${np} ${np} $<TARGET_FILE:mpi_topo>)
endforeach()
# the nonblocking forms, the same checks
foreach(np 1 4 6 8)
  mpi_test(mpi_topo_nb_${np} ${np} $<TARGET_FILE:mpi_topo> nonblocking)
endforeach()
# neighbours on other hosts too (shm within, tcp between)
mpi_test(mpi_topo_two_hosts 6 $<TARGET_FILE:mpi_topo>)
set_tests_properties(mpi_topo_two_hosts PROPERTIES ENVIRONMENT COURIER_TEST_HOSTS=2)
# blocking neighbourhood collectives while an MPI_Ineighbor_ and a started
# MPI_Neighbor_*_init run on the same communicator (one schedule, three ways
# to run it: their messages must never meet); every transfer by rendezvous too
foreach(np 1 4 6)
  mpi_test(mpi_topo_interleave_${np} ${np} $<TARGET_FILE:mpi_topo> interleave)
endforeach()
mpi_test(mpi_topo_interleave_small_eager_4 4 $<TARGET_FILE:mpi_topo> interleave)
set_tests_properties(mpi_topo_interleave_small_eager_4 PROPERTIES ENVIRONMENT COURIER_EAGER_LIMIT=16)
# a deadlock in a blocking neighbourhood collective: the watchdog names the
# call, the communicator and the neighbour its part comes from
courier_test(NAME mpi_topo_deadlock COMMAND ${MPI_EXPECT} 99
         "rank 1 waits for rank 0 in MPI_Neighbor_allgather on communicator #[0-9]+ \\(collective: its part from rank 0\\)"
         -- ${MPI_CMD} run -n 3 --timeout 60 --hang-timeout 1 $<TARGET_FILE:mpi_topo> hang)
