#!/bin/bash
# Rules every test of the suite follows, read from what CMake generated (the
# build tree's CTestTestfile.cmake files), so that a new test cannot break them
# unnoticed:
#  - no PASS_REGULAR_EXPRESSION: CTest ignores the exit status once it is set
#    (a job whose rank 0 printed the line passed with rank 1 failing); a test
#    that must print something uses pass_test (tests/CMakeLists.txt:
#    tests/expect.sh checks the status, the line and what is left behind);
#  - no WILL_FAIL: any failure would pass; expect_test names the status and the
#    message;
#  - no COURIER_COLL_ALG in a test's environment: a test that forces a
#    collective algorithm is declared with coll_forced_test (tests/coll/forced.sh
#    sets it and checks in the job's trace that the algorithm ran);
#  - no shell command line (sh -c) that pipes a job's output on
#    ("courier run ... | grep -q ..."): the pipeline's status is the last
#    command's, not the job's; use pass_test, or set -o pipefail (bash).
#   suite_rules.sh BUILD_DIR
set -u
files=$(find "$1" -name CTestTestfile.cmake)
[ -n "$files" ] || { echo "FAIL: no CTestTestfile.cmake under $1"; exit 1; }
# shellcheck disable=SC2086
props=$(grep -h '^set_tests_properties(' $files)
# shellcheck disable=SC2086
n=$(grep -hc '^add_test(' $files | awk '{s += $1} END {print s + 0}')
name() { sed -E 's/^set_tests_properties\((\[=*\[)?([^] ]+).*/\2/'; }
fail=0
bad=$(grep -E ' PASS_REGULAR_EXPRESSION ' <<<"$props" | name)
[ -z "$bad" ] || { echo "FAIL: PASS_REGULAR_EXPRESSION (the exit status is then ignored; use pass_test):" $bad; fail=1; }
bad=$(grep -E ' WILL_FAIL ' <<<"$props" | name)
[ -z "$bad" ] || { echo "FAIL: WILL_FAIL (any failure passes; use expect_test with the status and message):" $bad; fail=1; }
bad=$(grep -E ' ENVIRONMENT "[^"]*COURIER_COLL_ALG=' <<<"$props" | name)
[ -z "$bad" ] || { echo "FAIL: COURIER_COLL_ALG in the environment (use coll_forced_test, which checks that the algorithm ran):" $bad; fail=1; }
# shellcheck disable=SC2086
bad=$(grep -h '^add_test(' $files | grep -E '"-c" ' | grep -v pipefail |
    grep -E '[ /]run [^&;|"]*\|[^|]' | sed -E 's/^add_test\((\[=*\[)?([^] ]+).*/\2/')
[ -z "$bad" ] || { echo "FAIL: a job's output piped on in sh -c (its status is lost; use pass_test):" $bad; fail=1; }
[ "$n" -gt 100 ] || { echo "FAIL: only $n tests found under $1"; fail=1; }
[ $fail -eq 0 ] && echo "suite rules: $n tests, none with PASS_REGULAR_EXPRESSION, WILL_FAIL or COURIER_COLL_ALG set, none piping a job's output on"
exit $fail
