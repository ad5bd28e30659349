# SPDX-License-Identifier: MIT
# lib-tree.sh - helpers of the nettrace-tree end-to-end tests (t2xx-tree-*.sh), sourced
# after lib.sh: the tool's path, short names for the traces, a golden-output case, and
# tree_paths, which turns printed rows back into "root;...;node<TAB>value" lines so that
# tests can compare a tree with independent expectations (folded files, EXPECTED.md).

TREE=$top_builddir/tools/nettrace-tree

# Traces, relative to $TRACES (tests run there, so headers show these names).
PYRO=pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace
PYRO_FOLDED=pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.txt
PYRO_FOLDED_MANAGED=pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread-managed-only.txt
MIXED=perfview/mixed_managed_external_samples.nettrace
ONLY_MANAGED=perfview/only_managed_samples.nettrace
SENTRY=sentry-dotnet/sample.nettrace

# tree_case DIR NAME ARGS...: runs "nettrace-tree ARGS"; expects exit 0, nothing on stderr
# and stdout equal to expected/DIR/NAME.out.
tree_case() {
	_dir=$1
	_name=$2
	shift 2
	run "$TREE" "$@"
	is_rc 0 "$_name: exits 0"
	is_empty "$T/err" "$_name: nothing on stderr"
	golden_if_ok 0 "$T/out" "$EXPECTED/$_dir/$_name.out" "$_name: output of nettrace-tree $*"
}

# golden_if_ok RC GOT WANT DESC: golden(), but only when the last run exited with RC: a
# crashed run fails here instead of being compared, or, under NT_UPDATE_GOLDEN=1
# (make update-golden), written over the expected output.
golden_if_ok() {
	if [ "$rc" = "$1" ]; then
		golden "$2" "$3" "$4"
	else
		fail "$4"
		diag "not compared: exit code $rc, want $1"
	fi
}

# tree_paths FILE [COLUMN]: the rows of a printed tree as "path<TAB>value", path = the
# frames from the top level to the node joined by ';', value = the time column (run with
# --unit ns, COLUMN=time, the default) or the samples column (--unit samples,
# COLUMN=samples). Indentation (two spaces per level) gives the nesting.
tree_paths() {
	awk -v col="${2:-time}" '
		titles && match($0, /^ *-?[0-9.]+% +-?[0-9.]+% +([0-9.]+ +)?[0-9]+  /) {
			nf = split(substr($0, 1, RLENGTH), f, " ")
			v = col == "samples" ? f[nf] : f[3]
			rest = substr($0, RLENGTH + 1)
			match(rest, /^ */)
			d = RLENGTH / 2
			name[d] = substr(rest, RLENGTH + 1)
			p = name[0]
			for (i = 1; i <= d; i++)
				p = p ";" name[i]
			print p "\t" v
			next
		}
		/  frame$/ { titles = 1 }
	' "$1"
}

# folded_paths FILE: every prefix of the stacks of a folded file, with the summed weight
# of the lines under it, as "path<TAB>weight" (what a top-down tree holds).
folded_paths() {
	awk '{
		w = $NF
		s = $0
		sub(/ [^ ]*$/, "", s)
		n = split(s, f, ";")
		p = ""
		for (i = 1; i <= n; i++) {
			p = i == 1 ? f[1] : p ";" f[i]
			sum[p] += w
		}
	}
	END { for (p in sum) printf "%s\t%.0f\n", p, sum[p] }' "$1"
}
