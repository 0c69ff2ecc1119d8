#!/bin/sh
# An rsh for tests: starts the command (courier's agent) as ssh would on another
# host, on this one but with an empty environment (PATH only), so that only
# what courier sends with the job reaches the ranks.
#   rsh-clean.sh HOST command...
shift
exec env -i PATH="$PATH" "$@"
