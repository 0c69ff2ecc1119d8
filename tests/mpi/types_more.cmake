# tests/mpi/types_more.cmake: included by tests/mpi/CMakeLists.txt
# Datatypes beyond the constructors: names, envelope/contents, subarray,
# darray, external32, the _x forms, status_set_elements, match_size and
# datatype attributes (tests/mpi/types_more.c).
add_executable(mpi_types_more types_more.c)
target_include_directories(mpi_types_more PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
target_link_libraries(mpi_types_more PRIVATE courier)
mpi_test(mpi_types_more_1 1 $<TARGET_FILE:mpi_types_more>)
mpi_test(mpi_types_more_2 2 $<TARGET_FILE:mpi_types_more>)
mpi_test(mpi_types_more_3 3 $<TARGET_FILE:mpi_types_more>)

# Datatypes with huge but regular type maps: a vector of INT_MAX/2 blocks
# queried, a 10-million-block vector sent, nested vectors against hand-packed
# references (tests/mpi/types_huge.c).
add_executable(mpi_types_huge types_huge.c)
target_include_directories(mpi_types_huge PRIVATE ${PROJECT_SOURCE_DIR}/include/courier)
target_link_libraries(mpi_types_huge PRIVATE courier)
mpi_test(mpi_types_huge_1 1 $<TARGET_FILE:mpi_types_huge>)
mpi_test(mpi_types_huge_2 2 $<TARGET_FILE:mpi_types_huge>)
