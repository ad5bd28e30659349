# SPDX-License-Identifier: MIT
# lib-dotnet.sh - the .NET side of the end-to-end tests, sourced after lib.sh: skips a test
# with a visible reason where no `dotnet` is installed, builds the workloads of
# tests/dotnet/workloads once per build tree (whichever test gets there first, under a lock)
# and records them with the runtime's own EventPipe file session.
#
#   dotnet_need                  skip the whole test ("1..0 # SKIP ...") without dotnet
#   dotnet_workloads             build the workloads; sets NT_WORKLOADS (the program)
#   dotnet_record MODE OUT [ARG] run one workload mode with a file session writing OUT;
#                                its own measurements ("key=value") go to OUT.truth
#   dotnet_trace_record MODE OUT [ARG]  the same through `dotnet-trace collect -- CMD`
#   dotnet_run HOW MODE OUT [ARG]  HOW = file (dotnet_record) or dotnet-trace; one TAP result
#   truth KEY FILE               one value of a .truth file
#   dotnet_oracle                build the TraceEvent oracle of tests/dotnet/oracle; sets
#                                NT_ORACLE (the program; `$NT_ORACLE` with no argument says how)
#   dotnet_gaps                  "PROVIDER ID" of each kind in NT_TE_GAPS, for `nt-oracle diff`
#   dotnet_trace_tool            install dotnet-trace (NT_DOTNET_TRACE_VERSION) as a tool of
#                                the build tree, once; sets NT_DOTNET_TRACE, or returns 1
#   dotnet_trace_need            dotnet_trace_tool, or bail out of the test with its log
#   dotnet_check_trace TRACE WHAT  TAP results: the trace reads whole, and >= 99% of the
#                                frames of its Managed samples have method names
#   dotnet_events TRACE          its events (nettrace-info --events) into TRACE.events
#   dotnet_count TRACE NAME      how many events named NAME TRACE.events holds
#   dotnet_contention TRACE      from TRACE.events: "PAIRS SECONDS DURATION": the Contention
#                                Start->Stop pairs per thread, their time, and the sum of
#                                the Stops' DurationNs (.NET 8+), in seconds
#   dotnet_within GOT WANT DESC  TAP result: GOT within 10% of WANT
#   te_totals FOLDED             "TID PSEUDO MS" per thread and leaf pseudo-frame of a
#                                folded file in ms weights (TraceEvent's thread time)
#   te_same_totals OURS TE DESC  TAP result: te_totals files with the same keys, each
#                                value within 0.01 ms of TE's
#   dotnet_split FOLDED SHARE    TAP result: the samples of SplitA.Spin70 vs SplitB.Spin30
#                                in a folded file match SHARE within 2% + 4 sigma
#   dotnet_v6_symbolized EVENTS TID RE  of the `cpu` samples of thread TID in a V6 trace's
#                                `nettrace-info --events --stacks` output, how many have a
#                                frame whose ProcessSymbol name matches RE: prints "HITS N"
#
# The build is a copy of the sources under $top_builddir/tests/dotnet/build (so that an
# out-of-tree, read-only source tree works) and is redone only when a source changed.

DOTNET_NOLOGO=1
DOTNET_CLI_TELEMETRY_OPTOUT=1
DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
DOTNET_GENERATE_ASPNET_CERTIFICATE=false
export DOTNET_NOLOGO DOTNET_CLI_TELEMETRY_OPTOUT DOTNET_SKIP_FIRST_TIME_EXPERIENCE \
	DOTNET_GENERATE_ASPNET_CERTIFICATE

DOTNET_SRC=$top_srcdir/tests/dotnet
DOTNET_BUILD=$top_builddir/tests/dotnet/build

# The providers of a CPU-sampling file session: the sample profiler, the runtime's events
# (GC, loader, JIT, NGen, exceptions, contention, threading... at verbose level) and, at the
# end of the session, the rundown that the runtime adds to every file session.
NT_DOTNET_CONFIG='Microsoft-DotNETCore-SampleProfiler:0:5,Microsoft-Windows-DotNETRuntime:0x4c14fccbd:5'

dotnet_need() {
	if ! command -v dotnet >/dev/null 2>&1; then
		echo "1..0 # SKIP dotnet is not installed (the .NET 10 SDK runs these tests)"
		exit 0
	fi
	# The workloads target net10.0: an older SDK alone cannot build them.
	if ! dotnet --list-sdks 2>/dev/null | grep -q '^[1-9][0-9]\.'; then
		echo "1..0 # SKIP no .NET 10 SDK (dotnet --list-sdks: $(dotnet --list-sdks 2>/dev/null | cut -d' ' -f1 | tr '\n' ' '))"
		exit 0
	fi
}

# dotnet_build_project NAME: builds tests/dotnet/NAME into $DOTNET_BUILD/NAME/out, once.
dotnet_build_project() {
	src=$DOTNET_SRC/$1
	dst=$DOTNET_BUILD/$1
	mkdir -p "$DOTNET_BUILD" || return 1
	(
		flock 9 || exit 1
		stamp=$dst/.built
		if [ -f "$stamp" ] && [ -z "$(find "$src" -newer "$stamp" -type f 2>/dev/null)" ]; then
			exit 0
		fi
		rm -rf "$dst" && mkdir -p "$dst/src" || exit 1
		cp -R "$src"/. "$dst/src/" && chmod -R u+w "$dst/src" || exit 1
		if ! dotnet build -nologo -v q -c Release -o "$dst/out" "$dst/src" >"$dst/build.log" 2>&1; then
			cat "$dst/build.log" >&2
			exit 1
		fi
		touch "$stamp"
	) 9>"$DOTNET_BUILD/.lock"
}

dotnet_workloads() {
	if ! dotnet_build_project workloads; then
		echo "Bail out! dotnet build of tests/dotnet/workloads failed"
		exit 1
	fi
	NT_WORKLOADS=$DOTNET_BUILD/workloads/out/nt-workloads
}

dotnet_trace_need() {
	if ! dotnet_trace_tool; then
		echo "Bail out! dotnet tool install dotnet-trace $NT_DOTNET_TRACE_VERSION failed"
		sed 's/^/# /' "$DOTNET_BUILD/dotnet-trace-install.log" 2>/dev/null | tail -n 5
		exit 1
	fi
}

# dotnet_trace_record MODE OUT [ARG]: dotnet-trace starts the workload suspended, opens
# an EventPipe session over the diagnostic port with the providers of the file session,
# resumes it and writes OUT when it exits (rundown included).
dotnet_trace_record() {
	mode=$1 out=$2
	shift 2
	"$NT_DOTNET_TRACE" collect --providers "$NT_DOTNET_CONFIG" -o "$out" --show-child-io \
		-- "$NT_WORKLOADS" "$mode" "$@" >"$out.truth" 2>"$out.err" && [ -s "$out" ]
}

dotnet_run() {
	how=$1
	shift
	case $how in
	file) dotnet_record "$@" ;;
	dotnet-trace) dotnet_trace_record "$@" ;;
	*) false ;;
	esac
	rc=$?
	if [ "$rc" -eq 0 ]; then
		pass "nt-workloads $1 ran under $how"
	else
		fail "nt-workloads $1 ran under $how (exit $rc)"
		diag "$(tail -n 20 "$2.err")"
	fi
	return "$rc"
}

# dotnet_need_both: what a test recording through both the runtime's file session and
# dotnet-trace needs (skips the test without it): dotnet, nettrace-info, the workloads
# and dotnet-trace.
dotnet_need_both() {
	dotnet_need
	need_tool "$INFO"
	dotnet_workloads
	dotnet_trace_need
}

# dotnet_take HOW MODE TRACE ARG: records MODE with ARG into TRACE through HOW (file or
# dotnet-trace) and checks it (dotnet_check_trace, named "MODE (HOW)"); false only when
# the recording failed (its failure is reported), whatever the check found.
dotnet_take() {
	_take_how=$1 _take_mode=$2 _take_tr=$3
	dotnet_run "$_take_how" "$_take_mode" "$_take_tr" "$4" || return 1
	dotnet_check_trace "$_take_tr" "$_take_mode ($_take_how)"
	return 0
}

dotnet_record() {
	mode=$1 out=$2
	shift 2
	DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath=$out \
		DOTNET_EventPipeConfig=$NT_DOTNET_CONFIG \
		"$NT_WORKLOADS" "$mode" "$@" >"$out.truth" 2>"$out.err"
}

truth() {
	sed -n "s/^$1=//p" "$2" | head -n 1
}

dotnet_oracle() {
	if ! dotnet_build_project oracle; then
		echo "Bail out! dotnet build of tests/dotnet/oracle (TraceEvent from NuGet) failed"
		exit 1
	fi
	NT_ORACLE=$DOTNET_BUILD/oracle/out/nt-oracle
}

# The dotnet-trace that users install today; it carries its own TraceEvent (3.1.23).
NT_DOTNET_TRACE_VERSION=10.0.750501

dotnet_trace_tool() {
	dir=$DOTNET_BUILD/dotnet-trace-$NT_DOTNET_TRACE_VERSION
	mkdir -p "$DOTNET_BUILD" || return 1
	(
		flock 9 || exit 1
		[ -x "$dir/dotnet-trace" ] && exit 0
		dotnet tool install dotnet-trace --version "$NT_DOTNET_TRACE_VERSION" \
			--tool-path "$dir" >"$DOTNET_BUILD/dotnet-trace-install.log" 2>&1
	) 9>"$DOTNET_BUILD/.lock" || return 1
	NT_DOTNET_TRACE=$dir/dotnet-trace
}

# dotnet_check_trace TRACE WHAT: nettrace-info reads TRACE to its end with no error, and of
# the frames of its Managed samples (nettrace-fold --managed-only, each frame weighted by
# its samples) at most 1% (or 2) stay unnamed ("?!?" or a bare address). External samples are
# left out: a thread parked in native code (the socket engine's thread in epoll_wait) ends
# in precompiled (ReadyToRun) code that no method event of the trace covers, not even with
# every runtime keyword on.
dotnet_check_trace() {
	tr=$1 what=$2
	"$INFO" "$tr" >"$tr.info" 2>"$tr.info-err"
	rc=$?
	if [ "$rc" -eq 0 ] && grep -q '^Truncated: *no' "$tr.info" &&
		grep -q '^Lost events: *0$' "$tr.info"; then
		pass "$what: nettrace-info reads it whole, no event lost"
	else
		fail "$what: nettrace-info reads it whole, no event lost (exit $rc)"
		diag "$(cat "$tr.info-err")" "$(grep -E '^(Truncated|Lost)' "$tr.info")"
	fi
	"$top_builddir/tools/nettrace-fold" --unit samples --managed-only "$tr" >"$tr.folded" 2>&1
	awk '{ w = $NF; $NF = ""; n = split($0, f, ";")
		for (i = 1; i <= n; i++) { tot += w; if (f[i] ~ /^\?|0x[0-9a-f]+ *$/) bad += w } }
		END { printf "%d %d\n", tot, bad }' "$tr.folded" >"$tr.cov"
	read -r tot bad <"$tr.cov"
	# at most 1%, and never fewer than 2: a Managed sample can end in a runtime stub no
	# method event covers (seen: under ModuleHandle.ResolveTypeHandle while EventSource
	# starts, about one sample in a few recordings), which alone is over 1% of the ~150
	# frames a blocked workload gives on a loaded machine.
	if [ "$tot" -gt 0 ] && { [ $((bad * 100)) -le "$tot" ] || [ "$bad" -le 2 ]; }; then
		pass "$what: managed frames resolve ($bad of $tot sample frames unnamed)"
	else
		fail "$what: managed frames resolve ($bad of $tot sample frames unnamed)"
	fi
}

dotnet_events() {
	"$INFO" --events "$1" >"$1.events" 2>"$1.events-err"
}

dotnet_count() {
	grep -c "^\[[^]]*\] ts=[0-9]* [^ ]*/$2(" "$1.events"
}

# dotnet_ticks TRACE: the trace's timestamp ticks per second (from its summary).
dotnet_ticks() {
	sed -n 's/^Sync time:.*, \([0-9]*\) ticks\/s)$/\1/p' "$1.info"
}

dotnet_split() {
	awk -v want="$2" '
		/SplitA\.Spin70/ { a += $NF } /SplitB\.Spin30/ { b += $NF }
		END {
			n = a + b; if (n == 0) { print "bad 0 " want " 0 0"; exit }
			p = a / n; sd = sqrt(want * (1 - want) / n)
			tol = 0.02 + 4 * sd; d = p - want; if (d < 0) d = -d
			printf "%s %.4f %.4f %.4f %d\n", (d <= tol ? "ok" : "bad"), p, want, tol, n }' \
		"$1" >"$1.split"
	read -r verdict got want tol n <"$1.split"
	if [ "$verdict" = ok ]; then
		pass "70/30 split: $got of $n samples in Spin70, program measured $want (tolerance $tol)"
	else
		fail "70/30 split: $got of $n samples in Spin70, program measured $want (tolerance $tol)"
	fi
}

dotnet_v6_symbolized() {
	awk -v want="$2" -v re="$3" '
		function hex(s,   i, v) { v = 0; s = tolower(substr(s, 3))
			for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v }
		function num(k,   r) { if (!match($0, "\"" k "\":[0-9]+")) return -1
			r = substr($0, RSTART, RLENGTH); sub(/.*:/, "", r); return r + 0 }
		/\/ProcessSymbol\(/ && match($0, /"Name":"[^"]*"/) {
			ns++; nm[ns] = substr($0, RSTART + 8, RLENGTH - 9)
			lo[ns] = num("StartAddress"); hi[ns] = num("EndAddress"); next }
		/^\[/ { if (insample) { n++; if (hit) h++ }
			insample = $0 ~ /\/cpu\(/ && $0 ~ (" tid=" want " "); hit = 0; next }
		insample && $1 ~ /^#/ { ip = hex($2)
			for (i = 1; i <= ns; i++) if (ip >= lo[i] && ip <= hi[i] && nm[i] ~ re) hit = 1 }
		END { if (insample) { n++; if (hit) h++ }; printf "%d %d\n", h, n }' "$1"
}

dotnet_contention() {
	awk -v hz="$(dotnet_ticks "$1")" '
		/\/ContentionStart\(/ || /\/ContentionStop\(/ {
			match($0, / ts=[0-9]+/); ts = substr($0, RSTART + 4, RLENGTH - 4)
			match($0, / tid=[0-9]+/); tid = substr($0, RSTART + 5, RLENGTH - 5)
			if ($0 ~ /ContentionStart\(/) { start[tid] = ts; next }
			if (match($0, /"DurationNs":[0-9.eE+]+/)) dur += substr($0, RSTART + 13, RLENGTH - 13)
			if (tid in start) { sum += ts - start[tid]; n++; delete start[tid] }
		}
		END { printf "%d %.6f %.6f\n", n, (hz > 0 ? sum / hz : 0), dur / 1e9 }' "$1.events"
}

dotnet_within() {
	if awk -v g="$1" -v w="$2" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(w > 0 && d <= 0.10 * w) }'; then
		pass "$3"
	else
		fail "$3"
	fi
}

# dotnet_build_variant NAME VARIANT PROPERTY...: tests/dotnet/NAME built with extra MSBuild
# properties (-p:Name=Value) into $DOTNET_BUILD/NAME-VARIANT/out, once (as
# dotnet_build_project: a copy of the sources, redone when a source changed).
dotnet_build_variant() {
	src=$DOTNET_SRC/$1
	dst=$DOTNET_BUILD/$1-$2
	shift 2
	mkdir -p "$DOTNET_BUILD" || return 1
	(
		flock 9 || exit 1
		stamp=$dst/.built
		if [ -f "$stamp" ] && [ -z "$(find "$src" -newer "$stamp" -type f 2>/dev/null)" ]; then
			exit 0
		fi
		rm -rf "$dst" && mkdir -p "$dst/src" || exit 1
		cp -R "$src"/. "$dst/src/" && chmod -R u+w "$dst/src" || exit 1
		if ! dotnet build -nologo -v q -c Release "$@" -o "$dst/out" "$dst/src" \
			>"$dst/build.log" 2>&1; then
			cat "$dst/build.log" >&2
			exit 1
		fi
		touch "$stamp"
	) 9>"$DOTNET_BUILD/.lock"
}

# dotnet_workloads_embedded: the workloads with their portable PDB embedded in the
# assembly (DebugType=embedded: no .pdb file); sets NT_WORKLOADS_EMBEDDED_DIR (its out dir).
dotnet_workloads_embedded() {
	if ! dotnet_build_variant workloads embedded -p:DebugType=embedded; then
		echo "Bail out! dotnet build of tests/dotnet/workloads (embedded PDB) failed"
		exit 1
	fi
	NT_WORKLOADS_EMBEDDED_DIR=$DOTNET_BUILD/workloads-embedded/out
}

# Event kinds TraceEvent decodes and we do not yet, each with its reason; their fields
# are left out of the payload comparisons of t620 and t630 (nothing else is).
NT_TE_GAPS='
Microsoft-Windows-DotNETRuntime 15 /BulkType: an array of structs with a 32-bit count
Microsoft-Windows-DotNETRuntime 39 /GCDynamicEvent: TraceEvent unpacks the named inner event
Microsoft-Windows-DotNETRuntime 190 /MethodILToNativeMap: two arrays share one count
Microsoft-Windows-DotNETRuntimeRundown 149 /MethodILToNativeMapDCStart: the same
Microsoft-Windows-DotNETRuntimeRundown 150 /MethodILToNativeMapDCEnd: the same
Microsoft-Windows-DotNETRuntime 204 /GCPerHeapHistory: per-version layouts with arrays
Microsoft-Windows-DotNETRuntime 209 /GCFitBucketInfo: an array of structs
'
dotnet_gaps() {
	printf '%s\n' "$NT_TE_GAPS" | sed -n 's|^\([^ ]* [0-9]*\) /.*|\1|p'
}

# The leaf is the pseudo-frame (CPU_TIME, UNMANAGED_CODE_TIME...): OnlyManagedCodeStacks
# drops the native frames of TraceEvent's stacks. Printed to the ns.
te_totals() {
	awk '{ w = $NF; n = split($0, f, ";"); leaf = f[n]; sub(/ [0-9.]+$/, "", leaf);
	       t = f[1]; gsub(/[^0-9]/, "", t); s[t " " leaf] += w }
	     END { for (k in s) printf "%s %.6f\n", k, s[k] }' "$1" | sort
}

# Not the texts rounded to 0.01 ms: our sums differ from TraceEvent's by a few ns, so a
# total next to a rounding edge printed differently in about one run in 300.
te_same_totals() {
	if awk 'NR == FNR { te[$1 " " $2] = $3; next }
		{ k = $1 " " $2; if (!(k in te)) exit 1; d = $3 - te[k]; if (d < 0) d = -d
		  if (d > 0.01) exit 1; delete te[k] }
		END { for (k in te) exit 1 }' "$2" "$1"; then
		pass "$3"
	else
		fail "$3"
		diag "$(diff -u "$2" "$1" | head -n 60)"
	fi
}
