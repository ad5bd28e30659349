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
#   truth KEY FILE               one value of a .truth file
#   dotnet_oracle                build the TraceEvent oracle of tests/dotnet/oracle; sets
#                                NT_ORACLE (the program; `$NT_ORACLE` with no argument says how)
#   dotnet_gaps                  "PROVIDER ID" of each kind in NT_TE_GAPS, for `nt-oracle diff`
#   dotnet_trace_tool            install dotnet-trace (NT_DOTNET_TRACE_VERSION) as a tool of
#                                the build tree, once; sets NT_DOTNET_TRACE, or returns 1
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
