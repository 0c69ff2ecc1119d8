# tests/mpi/p2p_more.cmake: included by tests/mpi/CMakeLists.txt
# Persistent requests, matched probe, generalized requests, error classes.
add_executable(mpi_p2p_more p2p_more.c)
target_include_directories(mpi_p2p_more PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
target_link_libraries(mpi_p2p_more PRIVATE courier)
mpi_test(mpi_p2p_more_2 2 $<TARGET_FILE:mpi_p2p_more>)
mpi_test(mpi_p2p_more_3 3 $<TARGET_FILE:mpi_p2p_more>)
# Small eager limit: the matched probes take rendezvous messages of every size.
mpi_test(mpi_p2p_more_small_eager 3 $<TARGET_FILE:mpi_p2p_more>)
set_tests_properties(mpi_p2p_more_small_eager PROPERTIES ENVIRONMENT COURIER_EAGER_LIMIT=16)
mpi_test(mpi_p2p_more_no_cma 2 $<TARGET_FILE:mpi_p2p_more>)
set_tests_properties(mpi_p2p_more_no_cma PROPERTIES ENVIRONMENT COURIER_NO_CMA=1)
