#!/bin/sh
# SPDX-License-Identifier: MIT
# t790-flame-pprof-servers.sh - nettrace-flame --format pprof for continuous-profiling
# servers (doc/pprof-labels.md), read by `go tool pprof`: the sample labels Pyroscope and
# Parca read (category, thread_name, session as strings; thread as a number; --label
# service_name=... on every sample) with label names those servers accept; time_nanos and
# duration_nanos of many files: the earliest start and the time the files cover, equal to
# what pprof's own merge of the per-file profiles says, not the span across the gap; the
# same file twice covers its time once; one comment per file with its start and its exact
# duration (the SQLite store's sessions.duration_ns); bad --label is a usage error.
# Skipped without go (Debian: golang-go).
. "$top_srcdir/tests/e2e/lib.sh"
FLAME=$top_builddir/tools/nettrace-flame
SQL=$top_builddir/tools/nettrace-sql
need_tool "$FLAME"
need_tool "$SQL"
A=$TRACES/perfview/only_managed_samples.nettrace      # 2020-11-25, 10.4 s
B=$TRACES/sentry-dotnet/sample.nettrace               # 2023-03-16, 0.12 s

# usage errors first: they need no go
run "$FLAME" --format pprof --label bad-key=x -o "$T/x.pb.gz" "$A"
is_rc 1 "--label with a '-' in its key: usage error"
grep -q "bad --label 'bad-key=x'" "$T/err" && pass "the message names the label" ||
	{ fail "the message names the label"; diag "$(cat "$T/err")"; }
run "$FLAME" --format pprof --label service_name -o "$T/x.pb.gz" "$A"
is_rc 1 "--label without '=': usage error"
run "$FLAME" --format pprof --label 9lives=x -o "$T/x.pb.gz" "$A"
is_rc 1 "--label whose key starts with a digit: usage error"
run "$FLAME" --label service_name=api -o "$T/x.svg" "$A"
is_rc 1 "--label without --format pprof: usage error"

if ! command -v go >/dev/null 2>&1; then
	skip "go tool pprof reads the profiles" "go not found (Debian: golang-go)"
	done_testing
fi
HOME=$T GOCACHE=$T/gocache PPROF_TMPDIR=$T GOFLAGS= GOTOOLCHAIN=local
export HOME GOCACHE PPROF_TMPDIR GOFLAGS GOTOOLCHAIN
pp() { go tool pprof "$@" 2>"$T/pp.err"; }
header() { pp -raw "$1" | sed -n '/^Samples:/q; /^\(Time\|Duration\):/p'; }

run "$FLAME" --format pprof --label service_name=checkout --label deploy=v42 -o "$T/ab.pb.gz" "$A" "$B"
is_rc 0 "two files, two labels: exit 0"
"$FLAME" --format pprof -o "$T/a.pb.gz" "$A"
"$FLAME" --format pprof -o "$T/b.pb.gz" "$B"
"$FLAME" --format pprof -o "$T/aa.pb.gz" "$A" "$A"

# ------------------------------------------------------------------ time and duration
pp -proto "$T/a.pb.gz" "$T/b.pb.gz" >"$T/merged.pb.gz" ||
	{ fail "go tool pprof merges the per-file profiles"; diag "$(cat "$T/pp.err")"; }
want=$(header "$T/merged.pb.gz")
got=$(header "$T/ab.pb.gz")
if [ -n "$want" ] && [ "$got" = "$want" ]; then
	pass "time and duration of two files = pprof's merge of the two profiles ($(echo "$got" | tr '\n' ' '))"
else
	fail "time and duration of two files = pprof's merge of the two profiles"
	diag "want: $want"
	diag "got:  $got"
fi
is "$(header "$T/ab.pb.gz" | sed -n 's/^Time: //p')" "$(header "$T/a.pb.gz" | sed -n 's/^Time: //p')" \
	"the time is the earliest file's start"
# the span from the first start to the last end is 2.3 years: its duration would print
# in the tens of millions of seconds
d=$(header "$T/ab.pb.gz" | sed -n 's/^Duration: //p')
awk -v d="$d" 'BEGIN { exit !(d + 0 > 10 && d + 0 < 11) }' &&
	pass "the duration is the files' time (${d} s), not the span across the gap" ||
	fail "the duration is the files' time, not the span across the gap (got $d)"
is "$(header "$T/aa.pb.gz")" "$(header "$T/a.pb.gz")" "the same file twice covers its time once"

# one comment per file: its name, start and exact duration (the SQLite store's)
pp -comments "$T/ab.pb.gz" >"$T/comments"
is "$(wc -l <"$T/comments" | tr -d ' ')" 2 "one comment per file"
for f in "$A" "$B"; do
	want=$("$SQL" "$f" --csv -q "SELECT start_utc || ' + ' || printf('%.9f', duration_ns / 1e9) FROM sessions" | sed 1d | tr -d '"')
	grep -qxF "$f: $want s" "$T/comments" &&
		pass "$(basename "$f"): its comment is '$want s' (SQLite: start_utc, duration_ns)" ||
		{ fail "$(basename "$f"): its comment has its start and duration"; diag "want: $f: $want s"; diag "$(cat "$T/comments")"; }
done
is "$(pp -comments "$T/a.pb.gz" | wc -l | tr -d ' ')" 0 "one file: no comment (the header says it all)"

# ------------------------------------------------------------------ labels
pp -tags "$T/ab.pb.gz" >"$T/tags"
# (thread_name, where a trace names its threads: t643, on a recording of the sampler)
for k in category thread session service_name deploy; do
	grep -q "^ $k: Total" "$T/tags" && pass "label '$k' on the samples" ||
		{ fail "label '$k' on the samples"; diag "$(cat "$T/tags")"; }
done
grep -A1 "^ service_name: Total" "$T/tags" | grep -q "(  100%): checkout" &&
	pass "service_name=checkout on every sample" || fail "service_name=checkout on every sample"
grep -A1 "^ deploy: Total" "$T/tags" | grep -q "(  100%): v42" &&
	pass "deploy=v42 on every sample" || fail "deploy=v42 on every sample"
# the session label splits the time by file, as the per-file profiles have it
acc() { sed -n 's/^Showing nodes accounting for \([0-9]*\)ns, .*/\1/p'; }
ta=$(pp -top -unit=ns "$T/a.pb.gz" | acc)
sa=$(pp -top -unit=ns -tagfocus="session=$A" "$T/ab.pb.gz" | acc)
[ -n "$ta" ] && [ "$ta" = "$sa" ] && pass "-tagfocus session=FILE gives that file's profile ($ta ns)" ||
	fail "-tagfocus session=FILE gives that file's profile (alone $ta, focused $sa)"
# thread numbers are numeric labels (Parca: pprof_num_labels; Pyroscope keeps strings only)
pp -raw "$T/ab.pb.gz" >"$T/raw"
grep -q '^ *thread:\[[0-9][0-9]*\]' "$T/raw" && pass "thread is a numeric label" ||
	fail "thread is a numeric label"

# what the servers check: label names [A-Za-z_][A-Za-z0-9_]* (series labels), sample
# types without '-' (Pyroscope), a start time
sed -n '/^Samples:/,/^Locations/p' "$T/raw" | grep -o '[^ ]*:\[' | sed 's/:\[$//' | sort -u >"$T/keys"
bad=$(grep -cv '^[A-Za-z_][A-Za-z0-9_]*$' "$T/keys")
[ -s "$T/keys" ] && [ "$bad" -eq 0 ] && pass "every label name is one Pyroscope and Parca accept ($(tr '\n' ' ' <"$T/keys"))" ||
	{ fail "every label name is one Pyroscope and Parca accept"; diag "$(cat "$T/keys")"; }
types=$(sed -n '/^Samples:/{n;p;q}' "$T/raw")
case $types in
*-*) fail "sample types without '-' ($types)" ;;
*) pass "sample types without '-' ($types)" ;;
esac
is "$(pp -raw "$T/b.pb.gz" | sed -n 's/^Time: \(....\).*/\1/p')" 2023 "time_nanos is the recording's start (2023)"
done_testing
