# tests/mpi/thread.cmake: included by tests/mpi/CMakeLists.txt
# MPI_THREAD_MULTIPLE: several threads of each rank call MPI at once
# (thread_multiple.c). A short hang timeout: a thread that waits for a message
# another thread of its rank sends later is no deadlock, however long that takes.
add_executable(mpi_thread_multiple thread_multiple.c)
target_include_directories(mpi_thread_multiple PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
target_link_libraries(mpi_thread_multiple PRIVATE courier)
foreach(np 2 3)
  mpi_test(mpi_thread_multiple_${np} ${np} --hang-timeout 1 $<TARGET_FILE:mpi_thread_multiple>)
  # (the families' tests get no automatic network variant: this one is named)
  mpi_test(mpi_thread_multiple_${np}_tcp ${np} --hang-timeout 1 $<TARGET_FILE:mpi_thread_multiple>)
  set_tests_properties(mpi_thread_multiple_${np}_tcp PROPERTIES ENVIRONMENT COURIER_TRANSPORTS=tcp
                       LABELS tcp)
endforeach()
# Every thread of every rank blocked for good is a deadlock all the same.
courier_test(NAME mpi_thread_deadlock COMMAND ${MPI_EXPECT} 99 "courier: deadlock: every rank"
         -- ${MPI_CMD} run -n 2 --timeout 60 --hang-timeout 1 $<TARGET_FILE:mpi_thread_multiple> deadlock)
# Two threads per rank making communicators at once over different parents,
# each after an MPI_Comm_dup of MPI_COMM_SELF under a mutex (MPICH's
# comm_dup_deadlock and comm_create_group_threads): hung on every run before.
add_executable(mpi_dup_threads dup_threads.c)
target_include_directories(mpi_dup_threads PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
target_link_libraries(mpi_dup_threads PRIVATE courier) # (courier brings the threads library)
foreach(np 2 4)
  pass_test(mpi_dup_threads_${np} "dup threads ok"
            ${MPI_CMD} run -n ${np} --timeout 120 $<TARGET_FILE:mpi_dup_threads> 30)
endforeach()
