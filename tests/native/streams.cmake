# iWarp-style streams (src/api/stream.c, courier/streams.h): words checked one
# by one, flow control by what the try form allows, channels independent,
# pathways forwarded by the intermediates' progress threads, redirection into
# memory, a reserved pathway beside a full one, GetRow and PutRow by splicing
# (stream_row), a reserved pathway's words overtaking refused ordinary traffic
# in the lane (stream_lane: shm's second channel, tcp's held queue, ucx's second
# sequence); bad input ends the job with one line naming call, rank and reason.
foreach(p basic pathway row lane bad)
  add_executable(native_stream_${p} ${CMAKE_CURRENT_SOURCE_DIR}/stream_${p}.c)
  target_link_libraries(native_stream_${p} PRIVATE courier)
endforeach()
courier_test(NAME native_stream_basic_2
             COMMAND ${COURIER_CMD} run -n 2 --timeout 120 $<TARGET_FILE:native_stream_basic>)
courier_test(NAME native_stream_basic_3
             COMMAND ${COURIER_CMD} run -n 3 --timeout 120 $<TARGET_FILE:native_stream_basic>)
courier_test(NAME native_stream_basic_small_eager
             COMMAND ${COURIER_CMD} run -n 2 --timeout 120 $<TARGET_FILE:native_stream_basic>)
set_tests_properties(native_stream_basic_small_eager PROPERTIES ENVIRONMENT COURIER_EAGER_LIMIT=100)
courier_test(NAME native_stream_pathway
             COMMAND ${COURIER_CMD} run -n 4 --timeout 120 $<TARGET_FILE:native_stream_pathway>)
courier_test(NAME native_stream_row_3
             COMMAND ${COURIER_CMD} run -n 3 --timeout 120 $<TARGET_FILE:native_stream_row>)
courier_test(NAME native_stream_row_5
             COMMAND ${COURIER_CMD} run -n 5 --timeout 120 $<TARGET_FILE:native_stream_row>)
# Messages of 12 words: a spliced message goes on in several.
courier_test(NAME native_stream_row_small_eager
             COMMAND ${COURIER_CMD} run -n 4 --timeout 120 $<TARGET_FILE:native_stream_row>)
set_tests_properties(native_stream_row_small_eager PROPERTIES ENVIRONMENT COURIER_EAGER_LIMIT=100)

# With a limit of one byte rank 2 keeps one unexpected message from rank 1 and
# refuses the next: only the lane lets the reserved words past. Its _tcp and
# _ucx variants run it over those transports' lanes (without them it ends in
# the watchdog's deadlock report).
courier_test(NAME native_stream_lane
             COMMAND ${COURIER_CMD} run -n 3 --timeout 60 $<TARGET_FILE:native_stream_lane>)
set_tests_properties(native_stream_lane PROPERTIES ENVIRONMENT COURIER_UNEXPECTED_LIMIT=1)

set(stream_bad_unknown "rank 0: cr_stream_send: stream 42 is unknown")
set(stream_bad_negative "rank 0: cr_stream_send: stream -1 is unknown")
set(stream_bad_closed "rank 0: cr_stream_send: stream 0 is closed")
set(stream_bad_twice "rank 0: cr_stream_close: stream 0 is closed already")
set(stream_bad_wrong_end "rank 0: cr_stream_recv: stream 0 is the sending end: it cannot receive")
set(stream_bad_rank "rank 0: cr_stream_open: destination rank 5 is out of range: ranks are 0..1")
set(stream_bad_via_rank "rank 0: cr_stream_open: intermediate rank 9 is out of range")
set(stream_bad_via_self "rank 0: cr_stream_open: the pathway passes through rank 0 itself")
set(stream_bad_via_dst "rank 0: cr_stream_open: the pathway passes through its destination 1")
set(stream_bad_nvia "rank 0: cr_stream_open: -1 intermediate ranks: a pathway has 0..64")
set(stream_bad_via_null "rank 0: cr_stream_open: via is NULL but nvia is 2")
set(stream_bad_channel "rank 0: cr_stream_open: channel 70000 is out of range 0..65535")
set(stream_bad_again "rank 0: cr_stream_open: channel 1 to rank 1 is already open")
set(stream_bad_flags "rank 0: cr_stream_open: flags 0x10 are unknown")
set(stream_bad_depth "rank 0: cr_stream_accept: depth -3 is out of range")
set(stream_bad_accept_rank "rank 0: cr_stream_accept: source rank 2 is out of range")
set(stream_bad_negcount "rank 0: cr_stream_write: count -3 is negative")
set(stream_bad_hugecount "rank 0: cr_stream_write: count 1152921504606846976 is too large")
set(stream_bad_nullbuf "rank 0: cr_stream_write: buffer is NULL but count is 3")
set(stream_bad_redirect_null "rank 0: cr_stream_redirect: stream 0 is the sending end")
set(stream_bad_splice_end "rank 0: cr_stream_splice: stream 0 is the sending end: it cannot receive")
set(stream_bad_spliced "rank 0: cr_stream_send: stream 0 is spliced \\(cr_stream_splice\\): the service owns it")
set(stream_bad_splice_close "rank 0: cr_stream_close: stream 1 is spliced \\(cr_stream_splice\\): the service closes it")
set(stream_bad_splice_redirect "rank 0: cr_stream_splice: stream 1 has a redirection pending")
foreach(c unknown negative closed twice wrong_end rank via_rank via_self via_dst nvia via_null
        channel again flags depth accept_rank negcount hugecount nullbuf redirect_null
        splice_end spliced splice_close splice_redirect)
  expect_test(native_stream_bad_${c} 1 "${stream_bad_${c}}"
              -- ${COURIER_CMD} run -n 2 --timeout 60 $<TARGET_FILE:native_stream_bad> ${c})
endforeach()
