#!/bin/sh
# A rank's script: runs its arguments as a program, then goes on whatever that
# program's status (rel_foreign_mpi_script: the job must still end, named).
"$@"
echo "then_more: the script went on after '$1'"
