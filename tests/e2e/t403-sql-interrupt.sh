#!/bin/sh
# SPDX-License-Identifier: MIT
# t403-sql-interrupt.sh - an interrupted or failed import never leaves a half-written
# database: nettrace-sql is stopped by SIGTERM and SIGINT in the middle of reading a trace
# from a pipe that stays open (nothing is left: no database, no temporary file), killed
# with SIGKILL (no database: only the temporary file stays), and fed a trace that turns
# out to be corrupt in its middle (exit 2, no database; an existing database unchanged).
. "$top_srcdir/tests/e2e/lib.sh"
SQL=$top_builddir/tools/nettrace-sql
need_tool "$SQL"
OBJ=$TRACES/perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace
PYRO=$TRACES/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace
D=$T/d
mkdir "$D" || { echo "Bail out! mkdir"; exit 1; }
if ! command -v mkfifo >/dev/null 2>&1; then
	echo "1..0 # SKIP mkfifo not found"
	exit 0
fi

# interrupt SIGNAL WANT_RC: imports from a FIFO that delivers the first 2 MB of a trace and
# then stays open, waits until the import is under way, sends SIGNAL, checks the exit
# status and what is left in $D.
interrupt() {
	sig=$1 want=$2
	rm -f "$T/fifo"
	mkfifo "$T/fifo"
	# the writer holds the pipe open after the data, so the import blocks mid-trace
	(head -c 2000000 "$OBJ"; exec sleep 60) >"$T/fifo" 2>/dev/null </dev/null &
	wpid=$!
	"$SQL" "$T/fifo" -o "$D/out.db" >/dev/null 2>"$T/err" </dev/null &
	spid=$!
	# under way: the temporary file exists and the writer is past its data (it has become
	# "sleep": the 2 MB went through the pipe, so the import has read them)
	i=0
	while [ "$i" -lt 300 ]; do
		if ls -A "$D" | grep -q '\.tmp$' && [ "$(cat "/proc/$wpid/comm" 2>/dev/null)" = sleep ]; then
			break
		fi
		sleep 0.1
		i=$((i + 1))
	done
	sleep 1 # let it read and insert what the pipe holds
	if kill -0 "$spid" 2>/dev/null; then
		pass "SIG$sig: the import is still running, blocked on the pipe"
	else
		fail "SIG$sig: the import is still running, blocked on the pipe"
	fi
	is "$(ls -A "$D" | grep -c '\.tmp$')" 1 "SIG$sig: a temporary file while importing"
	kill -"$sig" "$spid"
	wait "$spid"
	rc=$?
	kill "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
	is "$rc" "$want" "SIG$sig: the process ends by the signal (status $want)"
}

interrupt TERM 143
is "$(ls -A "$D")" "" "SIGTERM: no database and no temporary file"
interrupt INT 130
is "$(ls -A "$D")" "" "SIGINT: no database and no temporary file"
interrupt KILL 137
if [ -e "$D/out.db" ]; then fail "SIGKILL: no database"; else pass "SIGKILL: no database"; fi
is "$(ls -A "$D" | grep -c '^\.out\.db\.[0-9]*\.[0-9]*\.tmp$')" 1 "SIGKILL: only the temporary .out.db.PID.N.tmp is left"
rm -f "$D"/.out.db.*.tmp

# a trace that is corrupt in its middle: the import fails after half of its samples
cp "$OBJ" "$T/corrupt.nettrace"
chmod u+w "$T/corrupt.nettrace"
head -c 4096 /dev/zero | tr '\0' '\377' | dd of="$T/corrupt.nettrace" bs=1 seek=2500000 conv=notrunc 2>/dev/null
run "$SQL" "$PYRO" "$T/corrupt.nettrace" -o "$D/out.db"
is_rc 2 "a trace corrupt in its middle: exit 2"
case $(cat "$T/err") in *"corrupt.nettrace: at byte 25"*) pass "... the reader's error with its offset" ;; *) fail "... the reader's error with its offset"; diag "$(cat "$T/err")" ;; esac
is "$(ls -A "$D")" "" "... no database and no temporary file"

run "$SQL" "$PYRO" -o "$D/out.db"
is_rc 0 "a good import"
cp "$D/out.db" "$T/good.db"
run "$SQL" "$T/corrupt.nettrace" -o "$D/out.db"
is_rc 2 "appending a corrupt trace: exit 2"
if cmp -s "$D/out.db" "$T/good.db"; then pass "... the database is unchanged"; else fail "... the database is unchanged"; fi
is "$(ls -A "$D")" "out.db" "... and no temporary file"
run "$SQL" "$D/out.db" --csv -q "SELECT COUNT(*) FROM sessions"
is "$(tail -n 1 "$T/out")" 1 "... still one session"
done_testing
