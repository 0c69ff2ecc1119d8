# tests/mpi/coll_more.cmake: included by tests/mpi/CMakeLists.txt
# MPI_Alltoallw, and the collectives on intercommunicators, blocking and not.
foreach(p coll_alltoallw coll_inter)
  add_executable(mpi_${p} ${p}.c)
  target_include_directories(mpi_${p} PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
  target_link_libraries(mpi_${p} PRIVATE courier)
endforeach()
foreach(np 1 2 3 5)
  mpi_test(mpi_coll_alltoallw_${np} ${np} $<TARGET_FILE:mpi_coll_alltoallw>)
endforeach()
mpi_test(mpi_coll_alltoallw_small_eager 3 $<TARGET_FILE:mpi_coll_alltoallw>)
set_tests_properties(mpi_coll_alltoallw_small_eager PROPERTIES ENVIRONMENT COURIER_EAGER_LIMIT=16)
foreach(np 4 5)
  mpi_test(mpi_coll_inter_${np} ${np} $<TARGET_FILE:mpi_coll_inter>)
endforeach()
mpi_test(mpi_coll_inter_small_eager 5 $<TARGET_FILE:mpi_coll_inter>)
set_tests_properties(mpi_coll_inter_small_eager PROPERTIES ENVIRONMENT COURIER_EAGER_LIMIT=16)
# The same checks through the nonblocking forms, and several outstanding at
# once with MPI_Comm_idup of the intercommunicator.
foreach(np 2 4 5 8)
  mpi_test(mpi_coll_inter_nb_${np} ${np} $<TARGET_FILE:mpi_coll_inter> nonblocking)
endforeach()
mpi_test(mpi_coll_inter_nb_small_eager 5 $<TARGET_FILE:mpi_coll_inter> nonblocking)
set_tests_properties(mpi_coll_inter_nb_small_eager PROPERTIES ENVIRONMENT COURIER_EAGER_LIMIT=16)
