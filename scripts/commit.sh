#!/usr/bin/env bash
# Commit only the given paths, retrying while another worker holds the index
# lock.  Usage: scripts/commit.sh "message" path...
set -u
msg=$1; shift
cd "$(git rev-parse --show-toplevel)"
for i in $(seq 1 30); do
	if git add -A -- "$@" 2>/dev/null && git commit -q -m "$msg" -- "$@" 2>/tmp/commit.err.$$; then
		git log --oneline -1; rm -f /tmp/commit.err.$$; exit 0
	fi
	if grep -q 'nothing to commit\|no changes added' /tmp/commit.err.$$ 2>/dev/null; then
		echo "commit.sh: nothing to commit in $*"; rm -f /tmp/commit.err.$$; exit 0
	fi
	sleep 1
done
cat /tmp/commit.err.$$ >&2; rm -f /tmp/commit.err.$$; exit 1
