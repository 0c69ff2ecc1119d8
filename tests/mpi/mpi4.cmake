# tests/mpi/mpi4.cmake: included by tests/mpi/CMakeLists.txt
# MPI-4.0/4.1 additions (src/api/mpi_isr.c, mpi_part.c).
foreach(p isendrecv part)
  add_executable(mpi_${p} ${p}.c)
  target_include_directories(mpi_${p} PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
  target_link_libraries(mpi_${p} PRIVATE courier)
endforeach()
foreach(np 2 4)
  pass_test(mpi_isendrecv_${np} "isendrecv ok"
            ${MPI_CMD} run -n ${np} --timeout 120 $<TARGET_FILE:mpi_isendrecv>)
  pass_test(mpi_part_${np} "partitioned ok"
            ${MPI_CMD} run -n ${np} --timeout 120 $<TARGET_FILE:mpi_part>)
endforeach()
# Every chunk a rendezvous message: partitions of 64 bytes and up.
pass_test(mpi_part_small_eager "partitioned ok"
          ${MPI_CMD} run -n 2 --timeout 120 $<TARGET_FILE:mpi_part>)
set_tests_properties(mpi_part_small_eager PROPERTIES ENVIRONMENT COURIER_EAGER_LIMIT=16)
