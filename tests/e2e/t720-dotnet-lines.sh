#!/bin/sh
# SPDX-License-Identifier: MIT
# t720-dotnet-lines.sh - managed source lines on a real .NET 10 runtime: the split workload,
# built with a portable PDB beside the assembly, recorded with the IL-map keyword (0x20000,
# part of NT_DOTNET_CONFIG). The truth is the workload's own source: the lines of
# Spin.Until's loop, found by grep in tests/dotnet/workloads/Program.cs. Checked: nearly
# every sample in the workload's code gets a file:line, the hot loop's samples land on the
# loop's lines, and the lines reach the tree, pprof, speedscope, callgrind and SQL.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need
need_tool "$INFO"
SQL=$top_builddir/tools/nettrace-sql
TREE=$top_builddir/tools/nettrace-tree
FLAME=$top_builddir/tools/nettrace-flame
need_tool "$SQL"
need_tool "$TREE"
need_tool "$FLAME"
dotnet_workloads

src=$top_srcdir/tests/dotnet/workloads/Program.cs
# The loop of Spin.Until: from its "while" to the body of the inner "for".
lo=$(grep -n 'while (sw.ElapsedTicks < until)' "$src" | head -n 1 | cut -d: -f1)
hi=$(grep -n 'x += i ^ (x >> 3);' "$src" | head -n 1 | cut -d: -f1)
if [ -n "$lo" ] && [ -n "$hi" ] && [ "$hi" -gt "$lo" ]; then
	pass "Spin.Until's loop is lines $lo..$hi of Program.cs"
else
	fail "Spin.Until's loop found in Program.cs (got '$lo'..'$hi')"
	done_testing
fi

tr=$T/split.nettrace
if dotnet_record split "$tr" 3; then
	pass "nt-workloads split ran under a file session"
else
	fail "nt-workloads split ran under a file session"; diag "$(cat "$tr.err")"
fi

# Coverage, as nettrace-info --lines counts it: the innermost frame of each sample that is
# in code whose PDB was read (the workload's own code) has a line.
run "$INFO" --lines --json "$tr"
is_rc 0 "nettrace-info --lines --json exits 0"
cov=$(tr -d ' \n' <"$T/out" | sed -n 's/.*"samples_with_pdb":{"total":\([0-9]*\),"line":\([0-9]*\).*/\1 \2/p')
maps=$(tr -d ' \n' <"$T/out" | sed -n 's/.*"managed_lines":{"il_maps":\([0-9]*\).*/\1/p')
read -r tot withline <<EOF
$cov
EOF
if [ "${maps:-0}" -gt 0 ]; then
	pass "the trace has IL maps ($maps MethodILToNativeMap events)"
else
	fail "the trace has IL maps (got '$maps')"
fi
if [ "${tot:-0}" -gt 100 ] && [ $((withline * 100)) -ge $((tot * 95)) ]; then
	pass "samples in the workload's code with a file:line: $withline of $tot (>= 95 %)"
else
	fail "samples in the workload's code with a file:line: '$withline' of '$tot' (>= 95 %)"
	diag "$(cat "$T/out" | tail -n 20)"
fi
if grep -q '"path": "[^"]*nt-workloads.dll", "status": "ok"' "$T/out"; then
	pass "the workload's module reads its PDB (status ok)"
else
	fail "the workload's module reads its PDB (status ok)"
fi
run "$INFO" --lines "$tr"
if [ "$rc" -eq 0 ] && grep -q '^Managed lines: ' "$T/out" && grep -q 'module nt-workloads: ok' "$T/out"; then
	pass "nettrace-info --lines reports the coverage and the module's PDB"
else
	fail "nettrace-info --lines reports the coverage and the module's PDB"; diag "$(tail -n 8 "$T/out")"
fi

# The hot loop: every sample with Spin.Until on its stack, at the line of that frame (the
# sampled line for a leaf, the line of the call for a caller), from the SQL store.
db=$T/split.db
run "$SQL" -o "$db" "$tr"
is_rc 0 "nettrace-sql imports the trace"
run "$SQL" "$db" --csv -q "
WITH RECURSIVE up(cs, samples) AS (
  SELECT callsite_id, samples FROM sample_groups WHERE callsite_id IS NOT NULL
  UNION ALL
  SELECT c.parent_id, up.samples FROM up JOIN callsites c ON c.id = up.cs
  WHERE c.parent_id IS NOT NULL)
SELECT COALESCE(f.line, 0), f.file, SUM(up.samples) FROM up
  JOIN callsites c ON c.id = up.cs JOIN frame_names f ON f.frame_id = c.frame_id
  WHERE f.function LIKE 'NtWorkloads.Spin.Until(%' GROUP BY 1, 2"
cp "$T/out" "$T/hot"
awk -F, -v lo="$lo" -v hi="$hi" 'NR > 1 { n += $3; if ($1 >= lo - 1 && $1 <= hi + 1) ok += $3;
	if ($2 ~ /Program\.cs$/) f += $3 }
	END { printf "%d %d %d\n", n, ok, f }' "$T/hot" >"$T/hotn"
read -r n ok f <"$T/hotn"
if [ "$n" -gt 100 ] && [ $((ok * 100)) -ge $((n * 90)) ]; then
	pass "Spin.Until's samples on its loop (lines $lo..$hi +-1): $ok of $n (>= 90 %)"
else
	fail "Spin.Until's samples on its loop (lines $lo..$hi +-1): $ok of $n (>= 90 %)"; diag "$(cat "$T/hot")"
fi
if [ "$f" -eq "$n" ]; then
	pass "Spin.Until's frames name Program.cs ($f of $n samples)"
else
	fail "Spin.Until's frames name Program.cs ($f of $n samples)"
fi
# Samples with Spin.Until itself as the leaf (not in a callee) are at the sampled line:
# inside the loop, with no tolerance.
run "$SQL" "$db" --csv -q "
SELECT COALESCE(f.line, 0), SUM(g.samples) FROM sample_groups g
  JOIN callsites c ON c.id = g.callsite_id JOIN frame_names f ON f.frame_id = c.frame_id
  WHERE f.function LIKE 'NtWorkloads.Spin.Until(%' GROUP BY 1"
cp "$T/out" "$T/leaf"
awk -F, -v lo="$lo" -v hi="$hi" 'NR > 1 { n += $2; if ($1 >= lo && $1 <= hi) ok += $2 }
	END { printf "%d %d\n", n, ok }' "$T/leaf" >"$T/leafn"
read -r n ok <"$T/leafn"
if [ "$n" -lt 50 ]; then
	# tiered JIT code of the loop may poll for GC at each pass: the time is then in
	# PollGCWorker (Spin.Until a caller at the poll's line), too few samples to judge
	skip "samples in Spin.Until's own code on lines $lo..$hi" "only $n samples in its own code (the JIT's GC poll took the rest)"
elif [ $((ok * 100)) -ge $((n * 90)) ]; then
	pass "samples in Spin.Until's own code on lines $lo..$hi: $ok of $n (>= 90 %)"
else
	fail "samples in Spin.Until's own code on lines $lo..$hi: $ok of $n (>= 90 %)"; diag "$(cat "$T/leaf")"
fi
diag "Spin.Until by line (line,file,samples): $(tr '\n' ' ' <"$T/hot")"

# Its callers sit at their call's line: SplitA.Spin70 is a one-line method.
a70=$(grep -n 'public static long Spin70' "$src" | head -n 1 | cut -d: -f1)
run "$SQL" "$db" --csv -q "SELECT DISTINCT line FROM frame_names WHERE function LIKE 'NtWorkloads.SplitA.Spin70(%'"
if [ "$(sed -n 2p "$T/out")" = "$a70" ] && [ "$(wc -l <"$T/out")" -eq 2 ]; then
	pass "the caller SplitA.Spin70 is at its call's line $a70"
else
	fail "the caller SplitA.Spin70 is at its call's line $a70"; diag "$(cat "$T/out")"
fi

# The exporters carry the lines.
run "$TREE" --lines --unit samples "$tr"
if [ "$rc" -eq 0 ] && grep -q "NtWorkloads.Spin.Until(.*Program.cs:\($lo\|$((lo + 1))\|$hi\|$((hi + 1))\)" "$T/out"; then
	pass "nettrace-tree --lines shows Spin.Until's lines"
else
	fail "nettrace-tree --lines shows Spin.Until's lines"; diag "$(grep Spin.Until "$T/out" | head -n 5)"
fi
run "$FLAME" --format speedscope -o "$T/s.json" "$tr"
if [ "$rc" -eq 0 ] && tr -d '\n' <"$T/s.json" | grep -q '"name":"nt-workloads!NtWorkloads.Spin.Until([^"]*)","file":"[^"]*Program.cs","line":[0-9]'; then
	pass "speedscope frames carry file and line"
else
	fail "speedscope frames carry file and line"; diag "$(grep -o '"name":"nt-workloads!NtWorkloads.Spin.Until[^}]*}' "$T/s.json" | head -n 2)"
fi
run "$FLAME" --format callgrind -o "$T/cg.out" "$tr"
if [ "$rc" -eq 0 ] && grep -q "^fl=.*Program.cs" "$T/cg.out"; then
	pass "callgrind names Program.cs"
else
	fail "callgrind names Program.cs"
fi
run "$FLAME" -o "$T/f.svg" "$tr"
if [ "$rc" -eq 0 ] && grep -q "<title>nt-workloads!NtWorkloads.Spin.Until([^<]*Program.cs:[0-9]" "$T/f.svg"; then
	pass "the SVG tooltip of Spin.Until names its source line"
else
	fail "the SVG tooltip of Spin.Until names its source line"; diag "$(grep -o '<title>nt-workloads!NtWorkloads.Spin.Until[^<]*' "$T/f.svg" | head -n 2)"
fi
if command -v go >/dev/null 2>&1; then
	# go wants a home and a cache; pprof a directory for its state
	HOME=$T GOCACHE=$T/gocache PPROF_TMPDIR=$T GOFLAGS= GOTOOLCHAIN=local
	export HOME GOCACHE PPROF_TMPDIR GOFLAGS GOTOOLCHAIN
	run "$FLAME" --format pprof -o "$T/p.pb.gz" "$tr"
	go tool pprof -lines -top -nodecount=1000 "$T/p.pb.gz" >"$T/ptop" 2>"$T/ptop.err"
	if grep -q "NtWorkloads.Spin.Until.*Program.cs:\($lo\|$((lo + 1))\|$hi\)" "$T/ptop"; then
		pass "go tool pprof shows Spin.Until at its loop's lines"
	else
		fail "go tool pprof shows Spin.Until at its loop's lines"; diag "$(grep Spin "$T/ptop" | head -n 5)"
	fi
else
	skip "go tool pprof shows Spin.Until's lines" "go is not installed"
fi
done_testing
