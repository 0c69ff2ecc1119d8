# GMD communication modes (src/api/modes.c, courier/modes.h): each mode's
# promise checked by the order of events, data byte by byte, order across
# modes; bad input ends the job with one line naming call, rank and reason.
foreach(p basic bad)
  add_executable(native_modes_${p} ${CMAKE_CURRENT_SOURCE_DIR}/modes_${p}.c)
  target_link_libraries(native_modes_${p} PRIVATE courier)
endforeach()
courier_test(NAME native_modes_basic_2
             COMMAND ${COURIER_CMD} run -n 2 --timeout 120 $<TARGET_FILE:native_modes_basic>)
courier_test(NAME native_modes_basic_3
             COMMAND ${COURIER_CMD} run -n 3 --timeout 120 $<TARGET_FILE:native_modes_basic>)
courier_test(NAME native_modes_basic_no_cma
             COMMAND ${COURIER_CMD} run -n 2 --timeout 120 $<TARGET_FILE:native_modes_basic>)
set_tests_properties(native_modes_basic_no_cma PROPERTIES ENVIRONMENT COURIER_NO_CMA=1)

set(modes_bad_rank "rank 0: cr_send_sync: rank 7 is out of range: ranks are 0..1")
set(modes_bad_negrank "rank 0: cr_send_nowait: rank -2 is out of range: ranks are 0..1")
set(modes_bad_type "rank 0: cr_send_single: type -4 is invalid")
set(modes_bad_neglen "rank 0: cr_send_nowait: length -5 is negative")
set(modes_bad_huge "rank 0: cr_send_sync: length 1125899906842624 is too large")
set(modes_bad_null "rank 0: cr_send_single: buffer is NULL but length is 10")
set(modes_bad_recv_src "rank 0: cr_recv_mode: rank 5 is out of range")
set(modes_bad_recv_type "rank 0: cr_recv_mode: type -7 is invalid")
set(modes_bad_recv_null "rank 0: cr_recv_mode: buffer is NULL but length is 8")
set(modes_bad_probe_src "rank 0: cr_probe_mode: rank 2 is out of range")
set(modes_bad_truncate "rank 0: cr_recv_mode: message of 64 bytes .* is longer than the 8-byte receive buffer")
foreach(c rank negrank type neglen huge null recv_src recv_type recv_null probe_src truncate)
  expect_test(native_modes_bad_${c} 1 "${modes_bad_${c}}"
              -- ${COURIER_CMD} run -n 2 --timeout 60 $<TARGET_FILE:native_modes_bad> ${c})
endforeach()
