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
# Partitions travel together, in fewer, larger messages (at most 2 for 64 KiB
# in 8 partitions; the chunks one MPI_Pready_range or MPI_Pready_list call
# completes side by side as one, found in the trace by part_wire.sh), and
# every partition's data still arrives, also where the two sides' partition
# counts differ.
add_executable(mpi_part_wire part_wire.c)
target_include_directories(mpi_part_wire PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
target_link_libraries(mpi_part_wire PRIVATE courier)
foreach(np 2 3)
  pass_test(mpi_part_wire_${np} "part wire runs ok"
            ${CMAKE_CURRENT_SOURCE_DIR}/part_wire.sh ${np} ${MPI_CMD} $<TARGET_FILE:mpi_part_wire>)
endforeach()
# MPI-4.1 error removal; the removed MPI-1 calls behind OMPI_ENABLE_MPI1_COMPAT.
add_executable(mpi_errors4 errors4.c)
add_executable(mpi_legacy legacy.c)
target_compile_definitions(mpi_legacy PRIVATE OMPI_ENABLE_MPI1_COMPAT=1)
foreach(p errors4 legacy)
  target_include_directories(mpi_${p} PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
  target_link_libraries(mpi_${p} PRIVATE courier)
  pass_test(mpi_${p} "${p} ok" ${MPI_CMD} run -n 2 --timeout 120 $<TARGET_FILE:mpi_${p}>)
endforeach()
# Without the switch the removed calls are not declared: legacy.c must not compile.
expect_test(mpi_legacy_hidden 1 "MPI_(Address|LB|Type_struct)"
            -- sh -c "${CMAKE_C_COMPILER} -fsyntax-only -Werror=implicit-function-declaration -I${PROJECT_SOURCE_DIR}/include/courier ${CMAKE_CURRENT_SOURCE_DIR}/legacy.c")
# Nor the removed combiners (MPI-4.1 §18.1).
expect_test(mpi_legacy_hidden_combiners 1 "MPI_COMBINER_(HVECTOR|HINDEXED|STRUCT)_INTEGER"
            -- sh -c "${CMAKE_C_COMPILER} -fsyntax-only -I${PROJECT_SOURCE_DIR}/include/courier ${CMAKE_CURRENT_SOURCE_DIR}/legacy_combiners.c")
# Buffered sends' buffers per communicator, flushes, MPI_BUFFER_AUTOMATIC.
add_executable(mpi_bufs bufs.c)
target_include_directories(mpi_bufs PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
target_link_libraries(mpi_bufs PRIVATE courier)
foreach(np 2 4)
  pass_test(mpi_bufs_${np} "bufs ok" ${MPI_CMD} run -n ${np} --timeout 120 $<TARGET_FILE:mpi_bufs>)
endforeach()
# Sessions without MPI_Init: process sets, groups, communicators from groups.
add_executable(mpi_sessions sessions.c)
target_include_directories(mpi_sessions PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
target_link_libraries(mpi_sessions PRIVATE courier)
foreach(np 2 4)
  pass_test(mpi_sessions_${np} "sessions ok"
            ${MPI_CMD} run -n ${np} --timeout 120 $<TARGET_FILE:mpi_sessions>)
endforeach()
# MPI-4.1 status accessors, value-index types (tests/mpi/mpi41.c).
add_executable(mpi_mpi41 mpi41.c)
target_include_directories(mpi_mpi41 PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
target_link_libraries(mpi_mpi41 PRIVATE courier)
foreach(np 1 3)
  pass_test(mpi_mpi41_${np} "mpi41 ok" ${MPI_CMD} run -n ${np} --timeout 120 $<TARGET_FILE:mpi_mpi41>)
endforeach()
# MPI_ERRORS_ABORT ends the job as MPI_Abort(comm, MPI_ERR_RANK) would: status 6, one line,
# which names where the program made the call (its debug info, through addr2line).
expect_test(mpi_mpi41_errors_abort 6
            "^courier: rank 1: MPI_Send: destination 6 is invalid.*\\(MPI_ERR_RANK\\) at [^ ]*mpi41.c:[0-9]+ \\(main\\): MPI_ERRORS_ABORT: ending every rank$"
            -- ${MPI_CMD} run -n 3 --timeout 120 $<TARGET_FILE:mpi_mpi41> abort)
# MPI_Comm_split_type by hardware level (tests/mpi/hwsplit.c), on pretend hosts too.
add_executable(mpi_hwsplit hwsplit.c)
target_include_directories(mpi_hwsplit PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
target_link_libraries(mpi_hwsplit PRIVATE courier)
pass_test(mpi_hwsplit_3 "hwsplit ok"
          ${MPI_CMD} run -n 3 --bind core --timeout 120 $<TARGET_FILE:mpi_hwsplit>)
pass_test(mpi_hwsplit_two_hosts "hwsplit ok"
          ${MPI_CMD} run -n 4 --bind core --timeout 120 $<TARGET_FILE:mpi_hwsplit>)
set_tests_properties(mpi_hwsplit_two_hosts PROPERTIES ENVIRONMENT COURIER_TEST_HOSTS=2)
# MPI-4.1 session buffers for buffered sends (tests/mpi/sessbuf.c).
add_executable(mpi_sessbuf sessbuf.c)
target_include_directories(mpi_sessbuf PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
target_link_libraries(mpi_sessbuf PRIVATE courier)
foreach(np 2 3)
  pass_test(mpi_sessbuf_${np} "sessbuf ok"
            ${MPI_CMD} run -n ${np} --timeout 120 $<TARGET_FILE:mpi_sessbuf>)
endforeach()
# MPI-4.0 MPI_Register_datarep_c (tests/mpi/datarep_c.c).
add_executable(mpi_datarep_c datarep_c.c)
target_include_directories(mpi_datarep_c PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
target_link_libraries(mpi_datarep_c PRIVATE courier)
pass_test(mpi_datarep_c_2 "datarep_c ok"
          ${MPI_CMD} run -n 2 --timeout 120 $<TARGET_FILE:mpi_datarep_c>)
# MPI 4.1 as the version; MPI_ERR_ERRHANDLER for an invalid error handler
# handle; MPI_UNDEFINED for sizes past an int (tests/mpi/errors41.c).
add_executable(mpi_errors41 errors41.c)
target_include_directories(mpi_errors41 PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
target_link_libraries(mpi_errors41 PRIVATE courier)
pass_test(mpi_errors41_2 "errors41 ok" ${MPI_CMD} run -n 2 --timeout 120 $<TARGET_FILE:mpi_errors41>)
# Partitions of nothing arrive only once marked ready (tests/mpi/part_empty.c).
add_executable(mpi_part_empty part_empty.c)
target_include_directories(mpi_part_empty PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
target_link_libraries(mpi_part_empty PRIVATE courier)
foreach(np 1 2)
  pass_test(mpi_part_empty_${np} "part empty ok"
            ${MPI_CMD} run -n ${np} --timeout 120 $<TARGET_FILE:mpi_part_empty>)
endforeach()
