// SPDX-License-Identifier: MIT
// Program.cs - the TraceEvent oracle of the end-to-end tests (t620-t639): prints what
// Microsoft.Diagnostics.Tracing.TraceEvent reads in a nettrace file as deterministic text
// that the tests compare with the output of our tools. Never our code's opinion: every
// value below comes from TraceEvent's own parsers.
//
//   nt-oracle version             TraceEvent's assembly version
//   nt-oracle header FILE         header facts, "key value" lines
//   nt-oracle counts FILE         "provider id version count" per event kind
//   nt-oracle names FILE          "provider id version name" (TraceEvent's event names)
//   nt-oracle events FILE         one canonical line per event (see Canon below)
//   nt-oracle full FILE           the same with every header fact TraceEvent gives an event:
//                                 "QPC TID PROVIDER ID VERSION {...} name=N opcode=O
//                                 level=L keywords=K proc=P act=GUID rel=GUID", then
//                                 the header facts as "#header KEY VALUE" lines
//   nt-oracle ours                the same canonical lines from `nettrace-info --events`
//                                 output on stdin (the test's normaliser)
//   nt-oracle stacks FILE         "qpc tid ip,ip,..." (leaf first) per event with a stack,
//                                 as TraceLog resolves them
//   nt-oracle ourstacks           the same from `nettrace-info --events --stacks` on stdin
//   nt-oracle threadtime FILE     folded stacks of SampleProfilerThreadTimeComputer as
//                                 `dotnet-trace convert` runs it; weights in ms
//   nt-oracle speedscope FILE     folded stacks of a speedscope file (as dotnet-trace writes
//                                 it: one profile per thread, "Thread (TID)" roots added)
//   nt-oracle parse FILE          EventPipeEventSource.Process() only; prints the count
//                                 and the seconds it took ("parse_s S")
//   nt-oracle layouts FILE        per event kind TraceEvent decodes: its name, payload size
//                                 and each field with the .NET type TraceEvent gives it
//   nt-oracle infer FILE...       the byte layout of each event kind as TraceEvent decodes it,
//                                 found by matching its values against the payload bytes of
//                                 every event of the kind (a developer's aid: its output is
//                                 what libtrace/metadata.c's built-in layouts were checked with)
//   nt-oracle batch               runs "COMMAND FILE OUT [IN]" lines of stdin in this one
//                                 process (no start-up per file): COMMAND FILE's output goes
//                                 to OUT, IN is its stdin; a failure writes OUT.err instead
//   nt-oracle diff FILE           compares TraceEvent's events of FILE with those of
//                                 `nettrace-info --events FILE` on stdin: prints one line per
//                                 difference kind (see Diff below), nothing when they agree
//
// Canonical event line: "QPC TID PROVIDER ID VERSION {name=value;...}" where integers and
// enums are decimal, hexadecimal pointer strings are decimal, strings are JSON strings,
// GUIDs lower case, floating-point values round-trip ("R") and byte arrays lower-case hex.
// Exit codes: 0 ok, 1 usage, 2 TraceEvent failed on the file.
using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Text;
using System.Text.Json;
using Microsoft.Diagnostics.Symbols;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Etlx;
using Microsoft.Diagnostics.Tracing.EventPipe;
using Microsoft.Diagnostics.Tracing.Parsers;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;
using Microsoft.Diagnostics.Tracing.Stacks;

namespace NtOracle
{
    static class Program
    {
        static readonly CultureInfo Inv = CultureInfo.InvariantCulture;

        static int Main(string[] args)
        {
            Console.OutputEncoding = new UTF8Encoding(false);
            var stdout = new StreamWriter(Console.OpenStandardOutput(), new UTF8Encoding(false), 1 << 16);
            stdout.NewLine = "\n";
            Console.SetOut(stdout);
            try {
                int rc = Run(args);
                Console.Out.Flush();
                return rc;
            } catch (Exception e) {
                Console.Out.Flush();
                Console.Error.WriteLine("nt-oracle: " + e.GetType().Name + ": " + e.Message);
                return 2;
            }
        }

        static int Usage()
        {
            Console.Error.WriteLine("usage: nt-oracle version|header|counts|names|events|stacks|threadtime|speedscope|parse FILE, or ours|ourstacks < nettrace-info output");
            return 1;
        }

        static int Run(string[] a)
        {
            if (a.Length == 1 && a[0] == "version") {
                Console.WriteLine(typeof(TraceEvent).Assembly.GetName().Version);
                return 0;
            }
            if (a.Length == 1 && a[0] == "batch") return Batch();
            // (batch lines give them a "-" for FILE)
            if (a.Length >= 1 && a.Length <= 2 && a[0] == "ours") { Ours(false); return 0; }
            if (a.Length >= 1 && a.Length <= 2 && a[0] == "ourstacks") { Ours(true); return 0; }
            if (a.Length < 2 || (a.Length > 2 && a[0] != "infer"))
                return Usage();
            switch (a[0]) {
            case "header": Header(a[1]); return 0;
            case "counts": Counts(a[1], false); return 0;
            case "names": Counts(a[1], true); return 0;
            case "events": Events(a[1]); return 0;
            case "full": Events(a[1], true); return 0;
            case "stacks": Stacks(a[1]); return 0;
            case "threadtime": ThreadTime(a[1]); return 0;
            case "speedscope": Speedscope(a[1]); return 0;
            case "parse": Parse(a[1]); return 0;
            case "diff": return Diff(a[1]);
            case "layouts": Layouts(a[1]); return 0;
            case "infer": Infer(a.Skip(1).ToArray()); return 0;
            }
            return Usage();
        }

        static int Batch()
        {
            var stdout = Console.Out;
            var stdin = Console.In;
            var jobs = new List<string[]>();
            string line;
            while ((line = stdin.ReadLine()) != null)
                if (line.Trim().Length > 0)
                    jobs.Add(line.Split(' ', StringSplitOptions.RemoveEmptyEntries));
            int bad = 0;
            foreach (var j in jobs) {
                if (j.Length < 3 || j.Length > 4 || j[0] == "batch") {
                    Console.Error.WriteLine("nt-oracle batch: bad line '" + string.Join(" ", j) + "'");
                    return 1;
                }
                try {
                    using (var w = new StreamWriter(j[2], false, new UTF8Encoding(false), 1 << 16))
                    using (var r = j.Length == 4 ? new StreamReader(j[3], new UTF8Encoding(false)) : null) {
                        w.NewLine = "\n";
                        Console.SetOut(w);
                        if (r != null)
                            Console.SetIn(r);
                        Run(new[] { j[0], j[1] });
                    }
                } catch (Exception e) {
                    File.WriteAllText(j[2] + ".err", "nt-oracle: " + e.GetType().Name + ": " + e.Message + "\n");
                    bad++;
                } finally {
                    Console.SetOut(stdout);
                    Console.SetIn(stdin);
                }
            }
            return bad > 0 ? 2 : 0;
        }

        // ------------------------------------------------------------ reading
        // Every parser TraceEvent has for what a runtime session writes, so that each
        // event gets TraceEvent's own template (names, fields) where it has one.
        static EventPipeEventSource Open(string file)
        {
            var src = new EventPipeEventSource(file);
            src.Clr.All += delegate { };
            new ClrRundownTraceEventParser(src).All += delegate { };
            new ClrPrivateTraceEventParser(src).All += delegate { };
            new SampleProfilerTraceEventParser(src).All += delegate { };
            // V6 traces (dotnet-trace collect-linux): TraceEvent's own templates for the
            // Universal.* events, whose strings are declared as type 23 but written as
            // uint16-length UTF-8, which only these templates read (the metadata-driven
            // path reads one byte). Only there: their templates (ids 0-5, no task) would
            // take over other providers' events in V4/V5 files and in V6 files of other
            // providers (our V6 rewrites), so only where the file names those providers.
            if (IsV6(file) && HasUniversal(file)) {
                new UniversalSystemTraceEventParser(src).All += delegate { };
                new UniversalEventsTraceEventParser(src).All += delegate { };
            }
            src.Dynamic.All += delegate { };
            return src;
        }

        // Whether the file names a Universal.* provider (UTF-16 or UTF-8 bytes).
        static bool HasUniversal(string file)
        {
            byte[] all = System.IO.File.ReadAllBytes(file);
            byte[] u8 = System.Text.Encoding.UTF8.GetBytes("Universal.");
            byte[] u16 = System.Text.Encoding.Unicode.GetBytes("Universal.");
            return IndexOf(all, u8) >= 0 || IndexOf(all, u16) >= 0;
        }

        static int IndexOf(byte[] hay, byte[] needle)
        {
            for (int i = 0; i + needle.Length <= hay.Length; i++) {
                int k = 0;
                while (k < needle.Length && hay[i + k] == needle[k])
                    k++;
                if (k == needle.Length)
                    return i;
            }
            return -1;
        }

        // The V6 stream header: "Nettrace", uint32 0, uint32 major version 6.
        static bool IsV6(string file)
        {
            var b = new byte[16];
            using (var f = File.OpenRead(file)) {
                int n = 0, k;
                while (n < 16 && (k = f.Read(b, n, 16 - n)) > 0)
                    n += k;
                if (n < 16)
                    return false;
            }
            return System.Text.Encoding.ASCII.GetString(b, 0, 8) == "Nettrace" &&
                BitConverter.ToUInt32(b, 8) == 0 && BitConverter.ToUInt32(b, 12) == 6;
        }

        static object Field(object o, string name)
        {
            for (var t = o.GetType(); t != null; t = t.BaseType) {
                var f = t.GetField(name, BindingFlags.NonPublic | BindingFlags.Public | BindingFlags.Instance);
                if (f != null)
                    return f.GetValue(o);
                var p = t.GetProperty(name, BindingFlags.NonPublic | BindingFlags.Public | BindingFlags.Instance);
                if (p != null)
                    return p.GetValue(o);
            }
            return null;
        }

        static void Header(string file)
        {
            using var src = Open(file);
            long n = 0;
            src.AllEvents += delegate { n++; };
            src.Process();
            PrintHeader(src, n, "");
        }

        static void PrintHeader(EventPipeEventSource src, long n, string prefix)
        {
            var sync = (DateTime)Field(src, "_syncTimeUTC");
            Console.WriteLine(prefix + "pointer_size " + src.PointerSize);
            Console.WriteLine(prefix + "pid " + Field(src, "_processId"));
            Console.WriteLine(prefix + "processors " + src.NumberOfProcessors);
            Console.WriteLine(prefix + "sync_time " + sync.ToUniversalTime().ToString("yyyy-MM-ddTHH:mm:ss.fffZ", Inv));
            Console.WriteLine(prefix + "sync_qpc " + Field(src, "_syncTimeQPC"));
            Console.WriteLine(prefix + "qpc_frequency " + Field(src, "_QPCFreq"));
            // TraceEvent keeps the header's sampling interval in ns (its name says rate)
            Console.WriteLine(prefix + "sampling_ns " + Field(src, "_expectedCPUSamplingRate"));
            Console.WriteLine(prefix + "events " + n);
            Console.WriteLine(prefix + "lost " + src.EventsLost);
        }

        static void Counts(string file, bool names)
        {
            using var src = Open(file);
            var counts = new SortedDictionary<string, long>(StringComparer.Ordinal);
            var nm = new SortedDictionary<string, string>(StringComparer.Ordinal);
            src.AllEvents += e => {
                string k = e.ProviderName + " " + EventId(e) + " " + e.Version;
                counts.TryGetValue(k, out long c);
                counts[k] = c + 1;
                if (!nm.ContainsKey(k))
                    nm[k] = e.EventName;
            };
            src.Process();
            foreach (var kv in counts)
                Console.WriteLine(kv.Key + " " + (names ? nm[kv.Key] : kv.Value.ToString(Inv)));
        }

        static void Parse(string file)
        {
            var sw = System.Diagnostics.Stopwatch.StartNew();
            long n = 0;
            using (var src = new EventPipeEventSource(file)) {
                src.AllEvents += delegate { n++; };
                src.Process();
            }
            sw.Stop();
            Console.WriteLine("events " + n);
            // the reading alone, without the process's start-up (bench/run.sh)
            Console.WriteLine("parse_s " + sw.Elapsed.TotalSeconds.ToString("F6", Inv));
        }

        static void Layouts(string file)
        {
            using var src = Open(file);
            var seen = new SortedDictionary<string, string>(StringComparer.Ordinal);
            src.AllEvents += e => {
                string k = e.ProviderName + " " + (int)e.ID + " " + e.Version;
                if (seen.ContainsKey(k))
                    return;
                var sb = new StringBuilder();
                sb.Append(e.EventName).Append(" len=").Append(e.EventDataLength);
                var names = e.PayloadNames ?? Array.Empty<string>();
                for (int i = 0; i < names.Length; i++) {
                    object v;
                    try { v = e.PayloadValue(i); } catch (Exception) { v = null; }
                    sb.Append(' ').Append(names[i]).Append(':').Append(v == null ? "null" :
                        v is Enum en ? Enum.GetUnderlyingType(en.GetType()).Name : v.GetType().Name);
                }
                seen[k] = sb.ToString();
            };
            src.Process();
            foreach (var kv in seen)
                Console.WriteLine(kv.Key + " " + kv.Value);
        }

        // Fields that no payload holds: TraceEvent computes them from others.
        static readonly HashSet<string> NotInPayload = new HashSet<string>(StringComparer.Ordinal) {
            "OptimizationTier", "ModuleILFileName", "ModuleNativeFileName",
        };

        sealed class Kind
        {
            public string Name;
            public string[] Fields;
            public Type[] Types;
            public List<byte[]> Data = new List<byte[]>();
            public List<object[]> Values = new List<object[]>();
        }

        static void Infer(string[] files)
        {
            var kinds = new SortedDictionary<string, Kind>(StringComparer.Ordinal);
            foreach (var file in files) {
                using var src = Open(file);
                src.AllEvents += e => {
                    if (e.PayloadNames == null || e.PayloadNames.Length == 0)
                        return;
                    string k = e.ProviderName + " " + (int)e.ID + " " + e.Version;
                    if (!kinds.TryGetValue(k, out var kd)) {
                        kd = kinds[k] = new Kind { Name = e.EventName, Fields = e.PayloadNames };
                        kd.Types = new Type[kd.Fields.Length];
                    }
                    if (kd.Data.Count >= 200)
                        return;
                    var vals = new object[kd.Fields.Length];
                    for (int i = 0; i < vals.Length; i++) {
                        try { vals[i] = e.PayloadValue(i); } catch (Exception) { vals[i] = null; }
                        if (vals[i] is Enum en)
                            vals[i] = Convert.ChangeType(en, Enum.GetUnderlyingType(en.GetType()), Inv);
                        if (kd.Types[i] == null && vals[i] != null)
                            kd.Types[i] = vals[i].GetType();
                    }
                    kd.Data.Add(e.EventData());
                    kd.Values.Add(vals);
                };
                src.Process();
            }
            foreach (var kv in kinds) {
                var kd = kv.Value;
                var sizes = new int[kd.Fields.Length];
                bool exact = Solve(kd, 0, new int[kd.Data.Count], sizes, true);
                bool ok = exact || Solve(kd, 0, new int[kd.Data.Count], sizes, false);
                var sb = new StringBuilder(kv.Key + " " + kd.Name + (ok ? exact ? " exact" : " prefix" : " none") + ":");
                if (ok)
                    for (int i = 0; i < sizes.Length; i++) {
                        if (sizes[i] == 0)
                            continue;
                        sb.Append(' ').Append(kd.Fields[i]).Append('=').Append(TypeName(kd.Types[i], sizes[i]));
                    }
                Console.WriteLine(sb.ToString());
            }
        }

        static string TypeName(Type t, int size)
        {
            if (t == typeof(string)) return "STR";
            if (t == typeof(Guid)) return "GUID";
            if (t == typeof(double)) return "F64";
            if (t == typeof(float)) return "F32";
            if (t == typeof(bool)) return size == 4 ? "BOOL32" : "BOOL8";
            if (t == typeof(ulong) && size == 8) return "U64|PTR";
            return size switch { 1 => "U8", 2 => "U16", 4 => "U32", _ => "U64" };
        }

        static int[] Candidates(Type t)
        {
            if (t == null) return Array.Empty<int>();
            if (t == typeof(string)) return new[] { -1 };
            if (t == typeof(Guid)) return new[] { 16 };
            if (t == typeof(double) || t == typeof(long) || t == typeof(ulong)) return new[] { 8 };
            if (t == typeof(float)) return new[] { 4 };
            if (t == typeof(bool)) return new[] { 4, 1 };
            return new[] { 4, 2, 1, 8 };
        }

        static bool Matches(byte[] d, ref int off, int size, Type t, object v)
        {
            if (size == -1) {
                int end = off;
                while (end + 1 < d.Length && (d[end] != 0 || d[end + 1] != 0))
                    end += 2;
                if (end + 1 >= d.Length)
                    return false;
                string s = Encoding.Unicode.GetString(d, off, end - off);
                if (!(v is string sv) || sv != s)
                    return false;
                off = end + 2;
                return true;
            }
            if (off + size > d.Length)
                return false;
            if (t == typeof(Guid)) {
                bool g = v is Guid gv && gv == new Guid(new ReadOnlySpan<byte>(d, off, 16));
                off += 16;
                return g;
            }
            if (t == typeof(double)) {
                bool m = v is double dv && BitConverter.ToDouble(d, off).Equals(dv);
                off += 8;
                return m;
            }
            if (t == typeof(float)) {
                bool m = v is float fv && BitConverter.ToSingle(d, off).Equals(fv);
                off += 4;
                return m;
            }
            ulong raw = 0;
            for (int i = size - 1; i >= 0; i--)
                raw = raw << 8 | d[off + i];
            off += size;
            ulong want;
            if (v is bool b) want = b ? 1UL : 0UL;
            else if (v is IConvertible c) {
                try { want = unchecked((ulong)c.ToInt64(Inv)); } catch (Exception) { want = c.ToUInt64(Inv); }
            } else return false;
            ulong mask = size == 8 ? ulong.MaxValue : (1UL << (size * 8)) - 1;
            if (v is bool)
                return (raw != 0) == (want != 0);
            // the value TraceEvent shows must be these bytes, zero- or sign-extended
            return (want & mask) == raw && (want == raw || want >> (size * 8 - 1) == (ulong.MaxValue >> (size * 8 - 1)));
        }

        static bool Solve(Kind kd, int f, int[] offs, int[] sizes, bool exact)
        {
            if (f == kd.Fields.Length) {
                if (!exact)
                    return true;
                for (int e = 0; e < offs.Length; e++)
                    if (offs[e] != kd.Data[e].Length)
                        return false;
                return true;
            }
            string name = kd.Fields[f];
            if (NotInPayload.Contains(name) || kd.Types[f] == null) {
                sizes[f] = 0;
                return Solve(kd, f + 1, offs, sizes, exact);
            }
            foreach (int size in Candidates(kd.Types[f])) {
                var next = (int[])offs.Clone();
                bool all = true;
                for (int e = 0; e < offs.Length && all; e++) {
                    int off = next[e];
                    // TraceEvent shows MethodFlags with bits cleared: only the size is known
                    if (name == "MethodFlags") {
                        all = off + size <= kd.Data[e].Length;
                        next[e] = off + size;
                        continue;
                    }
                    all = Matches(kd.Data[e], ref off, size, kd.Types[f], kd.Values[e][f]);
                    next[e] = off;
                }
                if (!all)
                    continue;
                sizes[f] = size;
                if (Solve(kd, f + 1, next, sizes, exact))
                    return true;
            }
            return false;
        }

        // ------------------------------------------------------------ canonical values
        static void Canon(StringBuilder sb, object v)
        {
            switch (v) {
            case null: sb.Append("null"); break;
            case string s: JsonString(sb, s); break;
            case bool b: sb.Append(b ? "true" : "false"); break;
            case Guid g: sb.Append('"').Append(g.ToString("D")).Append('"'); break;
            case float f: sb.Append(((double)f).ToString("R", Inv)); break;
            case double d: sb.Append(d.ToString("R", Inv)); break;
            case decimal m: sb.Append(m.ToString(Inv)); break;
            case DateTime t: sb.Append(t.ToFileTimeUtc().ToString(Inv)); break;
            case char c: sb.Append(((int)c).ToString(Inv)); break;
            case byte[] bytes:
                sb.Append('"');
                foreach (var x in bytes)
                    sb.Append(x.ToString("x2", Inv));
                sb.Append('"');
                break;
            case Enum en:
                Canon(sb, Convert.ChangeType(en, Enum.GetUnderlyingType(en.GetType()), Inv));
                break;
            case IntPtr ip: sb.Append(((long)ip).ToString(Inv)); break;
            case UIntPtr up: sb.Append(((ulong)up).ToString(Inv)); break;
            case IDictionary<string, object> dict:
                sb.Append('{');
                bool first = true;
                foreach (var kv in dict) {
                    if (!first)
                        sb.Append(';');
                    first = false;
                    sb.Append(kv.Key).Append('=');
                    Canon(sb, kv.Value);
                }
                sb.Append('}');
                break;
            case IEnumerable list:
                sb.Append('[');
                bool f1 = true;
                foreach (var x in list) {
                    if (!f1)
                        sb.Append(',');
                    f1 = false;
                    Canon(sb, x);
                }
                sb.Append(']');
                break;
            default:
                if (v is IConvertible cv && v.GetType().IsPrimitive)
                    sb.Append(cv.ToString(Inv));
                else
                    JsonString(sb, v.ToString());
                break;
            }
        }

        static void JsonString(StringBuilder sb, string s)
        {
            sb.Append('"');
            foreach (char c in s) {
                if (c == '"' || c == '\\')
                    sb.Append('\\').Append(c);
                else if (c < 0x20)
                    sb.Append("\\u").Append(((int)c).ToString("x4", Inv));
                else
                    sb.Append(c);
            }
            sb.Append('"');
        }

        static void Events(string file, bool full = false)
        {
            ForEachEvent(file, line => Console.WriteLine(line), full);
        }

        static void ForEachEvent(string file, Action<string> emit, bool full = false)
        {
            using var src = Open(file);
            long n = 0;
            var sb = new StringBuilder();
            src.AllEvents += e => {
                sb.Clear();
                sb.Append(e.TimeStampQPC.ToString(Inv)).Append(' ').Append(e.ThreadID.ToString(Inv))
                    .Append(' ').Append(e.ProviderName).Append(' ').Append(EventId(e).ToString(Inv))
                    .Append(' ').Append(e.Version.ToString(Inv)).Append(" {");
                string[] names = e.PayloadNames ?? Array.Empty<string>();
                for (int i = 0; i < names.Length; i++) {
                    if (i > 0)
                        sb.Append(';');
                    sb.Append(names[i]).Append('=');
                    object v;
                    try {
                        v = e.PayloadValue(i);
                    } catch (Exception ex) {
                        v = "<" + ex.GetType().Name + ">";
                    }
                    Canon(sb, v);
                }
                sb.Append('}');
                if (full)
                    sb.Append(" name=").Append(e.EventName).Append(" opcode=").Append(((int)e.Opcode).ToString(Inv))
                        .Append(" level=").Append(((int)e.Level).ToString(Inv))
                        .Append(" keywords=").Append(((ulong)e.Keywords).ToString(Inv))
                        .Append(" proc=").Append(e.ProcessorNumber.ToString(Inv))
                        .Append(" act=").Append(e.ActivityID.ToString("D"))
                        .Append(" rel=").Append(e.RelatedActivityID.ToString("D"));
                emit(sb.ToString());
                n++;
            };
            src.Process();
            if (full)
                PrintHeader(src, n, "#header ");
        }

        // The normaliser: `nettrace-info --events [--stacks]` lines to the canonical form.
        static void Ours(bool stacks)
        {
            OursEach(stacks, line => Console.WriteLine(line));
        }

        static void OursEach(bool stacks, Action<string> emit)
        {
            string line;
            var sb = new StringBuilder();
            var ips = new List<string>();
            string head = null;
            void Flush()
            {
                if (head != null && stacks && ips.Count > 0)
                    emit(head + " " + string.Join(",", ips));
                head = null;
                ips.Clear();
            }
            while ((line = Console.In.ReadLine()) != null) {
                if (line.StartsWith("    #", StringComparison.Ordinal)) {
                    // "    #0   0x0000000111483514 ..."
                    var parts = line.Trim().Split(' ', StringSplitOptions.RemoveEmptyEntries);
                    if (parts.Length >= 2)
                        ips.Add(ulong.Parse(parts[1].Substring(2), NumberStyles.HexNumber, Inv).ToString(Inv));
                    continue;
                }
                if (!line.StartsWith("[", StringComparison.Ordinal))
                    continue;
                Flush();
                // [+REL] ts=N PROVIDER/NAME(id=I, v=V) tid=T ctid=C seq=S proc=P stack=N frames {json}
                int brace = line.IndexOf(" {", StringComparison.Ordinal);
                string pre = brace >= 0 ? line.Substring(0, brace) : line;
                string json = brace >= 0 ? line.Substring(brace + 1) : "{}";
                int ts0 = pre.IndexOf(" ts=", StringComparison.Ordinal) + 4;
                int ts1 = pre.IndexOf(' ', ts0);
                string ts = pre.Substring(ts0, ts1 - ts0);
                int idp = pre.IndexOf("(id=", ts1, StringComparison.Ordinal);
                string pn = pre.Substring(ts1 + 1, idp - ts1 - 1);
                string provider = pn.Substring(0, pn.LastIndexOf('/'));
                int comma = pre.IndexOf(", v=", idp, StringComparison.Ordinal);
                string id = pre.Substring(idp + 4, comma - idp - 4);
                int close = pre.IndexOf(')', comma);
                string ver = pre.Substring(comma + 4, close - comma - 4);
                int tp = pre.IndexOf(" tid=", close, StringComparison.Ordinal) + 5;
                string tid = pre.Substring(tp, pre.IndexOf(' ', tp) - tp);
                if (stacks) {
                    head = ts + " " + tid;
                    continue;
                }
                sb.Clear();
                sb.Append(ts).Append(' ').Append(tid).Append(' ').Append(provider).Append(' ')
                    .Append(id).Append(' ').Append(ver).Append(' ');
                using (var doc = JsonDocument.Parse(json))
                    CanonJson(sb, doc.RootElement);
                emit(sb.ToString());
            }
            Flush();
        }

        static void CanonJson(StringBuilder sb, JsonElement e)
        {
            switch (e.ValueKind) {
            case JsonValueKind.Object:
                sb.Append('{');
                bool first = true;
                foreach (var p in e.EnumerateObject()) {
                    if (!first)
                        sb.Append(';');
                    first = false;
                    sb.Append(p.Name).Append('=');
                    CanonJson(sb, p.Value);
                }
                sb.Append('}');
                break;
            case JsonValueKind.Array:
                sb.Append('[');
                bool f1 = true;
                foreach (var x in e.EnumerateArray()) {
                    if (!f1)
                        sb.Append(',');
                    f1 = false;
                    CanonJson(sb, x);
                }
                sb.Append(']');
                break;
            case JsonValueKind.String: {
                string s = e.GetString();
                if (s.Length > 2 && s.StartsWith("0x", StringComparison.Ordinal) &&
                    ulong.TryParse(s.AsSpan(2), NumberStyles.HexNumber, Inv, out ulong u))
                    sb.Append(u.ToString(Inv));
                else
                    JsonString(sb, s);
                break;
            }
            case JsonValueKind.Number:
                if (e.TryGetInt64(out long l))
                    sb.Append(l.ToString(Inv));
                else if (e.TryGetUInt64(out ulong ul))
                    sb.Append(ul.ToString(Inv));
                else
                    sb.Append(e.GetDouble().ToString("R", Inv));
                break;
            case JsonValueKind.True: sb.Append("true"); break;
            case JsonValueKind.False: sb.Append("false"); break;
            default: sb.Append("null"); break;
            }
        }

        // ------------------------------------------------------------ diff
        // Fields TraceEvent computes rather than reads (its templates add them from other
        // fields), so that no reader of the bytes can have them: not differences.
        static readonly HashSet<string> Derived = new HashSet<string>(StringComparer.Ordinal) {
            "ModuleILFileName",     // Module*/DomainModule*: the file name of ModuleILPath
            "ModuleNativeFileName", // ... and of ModuleNativePath
            "OptimizationTier",     // Method*Verbose: bits 7-9 of MethodFlags ...
            "MethodFlags",          // ... which TraceEvent shows with those bits cleared
        };
        // ... and fields TraceEvent computes for one event kind ("PROVIDER ID FIELD").
        static readonly HashSet<string> DerivedIn = new HashSet<string>(StringComparer.Ordinal) {
            // GCHeapStats: sums of the generation sizes, and the depth of the last GCStart
            "Microsoft-Windows-DotNETRuntime 4 TotalHeapSize",
            "Microsoft-Windows-DotNETRuntime 4 TotalPromoted",
            "Microsoft-Windows-DotNETRuntime 4 Depth",
            // GCFinalizeObject: the type's name, looked up from earlier BulkType events
            "Microsoft-Windows-DotNETRuntime 29 TypeName",
        };

        // TraceEvent shows the fields of its newest template version for every version,
        // with a default (0, "", or an exception from reading past the payload) where the
        // event's own version has no such field: ours has no such field either.
        static bool DefaultValue(string v)
        {
            return v == "0" || v == "\"\"" || v == "false" || v == "null" ||
                v == "\"00000000-0000-0000-0000-000000000000\"" || (v.StartsWith("\"<", StringComparison.Ordinal) && v.EndsWith(">\"", StringComparison.Ordinal));
        }

        // TraceEvent gives GCDynamicEvent (runtime event 39) the id of its template, 0xFFF4;
        // the event's own id is 39.
        static int EventId(TraceEvent e)
        {
            int id = (int)e.ID;
            if (id == 0xFFF4 && e.ProviderName == "Microsoft-Windows-DotNETRuntime")
                id = 39;
            return id;
        }

        static List<KeyValuePair<string, string>> SplitFields(string canon)
        {
            var r = new List<KeyValuePair<string, string>>();
            int b = canon.IndexOf('{');
            if (b < 0)
                return r;
            string body = canon.Substring(b + 1, canon.Length - b - 2);
            int depth = 0, start = 0;
            bool str = false;
            for (int i = 0; i <= body.Length; i++) {
                char c = i < body.Length ? body[i] : ';';
                if (str) {
                    if (c == '\\')
                        i++;
                    else if (c == '"')
                        str = false;
                    continue;
                }
                if (c == '"')
                    str = true;
                else if (c == '{' || c == '[')
                    depth++;
                else if (c == '}' || c == ']')
                    depth--;
                else if (c == ';' && depth == 0) {
                    if (i > start) {
                        string f = body.Substring(start, i - start);
                        int eq = f.IndexOf('=');
                        r.Add(new KeyValuePair<string, string>(f.Substring(0, eq), f.Substring(eq + 1)));
                    }
                    start = i + 1;
                }
            }
            return r;
        }

        // TraceEvent reads some fields the runtime's manifest declares unsigned as signed
        // integers (GCSuspendEEBegin's Count = -1 for 0xFFFFFFFF, ...): the same bits.
        static bool SameValue(string te, string ours)
        {
            if (te == ours)
                return true;
            if (long.TryParse(te, NumberStyles.Integer, Inv, out long t) && t < 0 &&
                ulong.TryParse(ours, NumberStyles.Integer, Inv, out ulong o))
                return (ulong)(uint)t == o || (ulong)t == o || (ulong)(ushort)t == o || (ulong)(byte)t == o;
            // TraceEvent shows an array of chars as a string; ours is the array of its
            // UTF-16 units.
            if (te.StartsWith("\"", StringComparison.Ordinal) && ours.StartsWith("[", StringComparison.Ordinal)) {
                var units = ours.Trim('[', ']').Split(',');
                if (units.Length > 0 && units.All(u => ushort.TryParse(u, NumberStyles.Integer, Inv, out _))) {
                    var sb = new StringBuilder();
                    JsonString(sb, new string(units.Select(u => (char)ushort.Parse(u, Inv)).ToArray()));
                    return sb.ToString() == te;
                }
            }
            // a nested object (EventCounters' Payload...): field by field
            if (te.StartsWith("{", StringComparison.Ordinal) && ours.StartsWith("{", StringComparison.Ordinal)) {
                var tf = SplitFields(te);
                var of = SplitFields(ours);
                return tf.Count == of.Count && tf.Zip(of).All(p => p.First.Key == p.Second.Key && SameValue(p.First.Value, p.Second.Value));
            }
            if (double.TryParse(te, NumberStyles.Float, Inv, out double dt) &&
                double.TryParse(ours, NumberStyles.Float, Inv, out double dn)) {
                if (dt == dn)
                    return true;
                // TraceEvent widens a float to double and prints all its digits; we print a
                // float with the 9 significant digits that round-trip it
                return (float)dt == (float)dn && SignificantDigits(ours) <= 9;
            }
            return false;
        }

        static int SignificantDigits(string num)
        {
            int e = num.IndexOfAny(new[] { 'e', 'E' });
            string m = (e >= 0 ? num.Substring(0, e) : num).Replace("-", "").Replace(".", "").TrimStart('0');
            return m.Length;
        }

        static string KeyOf(string canon, out string kind)
        {
            // "QPC TID PROVIDER ID VERSION {...}"
            int b = canon.IndexOf(" {", StringComparison.Ordinal);
            string head = b >= 0 ? canon.Substring(0, b) : canon;
            var parts = head.Split(' ');
            kind = string.Join(" ", parts.Skip(2));
            return head;
        }

        // Differences, one line per kind, sorted:
        //   count PROVIDER ID VER te=N ours=M        events of this kind on one side only
        //   missing PROVIDER ID VER FIELD (N events) TraceEvent decodes FIELD, we do not
        //   value PROVIDER ID VER FIELD te=X ours=Y (N events)   the first differing value
        // Fields we decode and TraceEvent does not are not differences. Returns 0, or 3 when
        // there is a difference.
        static int Diff(string file)
        {
            var te = new Dictionary<string, List<string>>(StringComparer.Ordinal);
            var teCount = new SortedDictionary<string, long>(StringComparer.Ordinal);
            var ourCount = new SortedDictionary<string, long>(StringComparer.Ordinal);
            ForEachEvent(file, line => {
                string k = KeyOf(line, out string kind);
                if (!te.TryGetValue(k, out var l))
                    te[k] = l = new List<string>();
                l.Add(line);
                teCount.TryGetValue(kind, out long c);
                teCount[kind] = c + 1;
            });
            var missing = new SortedDictionary<string, long>(StringComparer.Ordinal);
            var values = new SortedDictionary<string, long>(StringComparer.Ordinal);
            var firstValue = new Dictionary<string, string>(StringComparer.Ordinal);
            OursEach(false, line => {
                string k = KeyOf(line, out string kind);
                ourCount.TryGetValue(kind, out long c);
                ourCount[kind] = c + 1;
                if (!te.TryGetValue(k, out var l) || l.Count == 0)
                    return;
                // among TraceEvent's events at this instant, the one equal to ours, or else
                // the first
                int at = l.IndexOf(line);
                string t = l[at < 0 ? 0 : at];
                l.RemoveAt(at < 0 ? 0 : at);
                if (at >= 0)
                    return;
                var mine = SplitFields(line).GroupBy(f => f.Key).ToDictionary(g => g.Key, g => g.First().Value);
                bool whole = !mine.ContainsKey("_raw") && !mine.ContainsKey("_rest") && !mine.ContainsKey("_error");
                string pid = string.Join(" ", kind.Split(' ').Take(2));
                foreach (var f in SplitFields(t)) {
                    if (Derived.Contains(f.Key) || DerivedIn.Contains(pid + " " + f.Key))
                        continue;
                    string dk = kind + " " + f.Key;
                    if (!mine.TryGetValue(f.Key, out string v)) {
                        if (whole && DefaultValue(f.Value))
                            continue;
                        missing.TryGetValue(dk, out long m);
                        missing[dk] = m + 1;
                    } else if (!SameValue(f.Value, v)) {
                        values.TryGetValue(dk, out long m);
                        values[dk] = m + 1;
                        if (m == 0)
                            firstValue[dk] = " te=" + f.Value + " ours=" + v;
                    }
                }
            });
            var lines = new List<string>();
            foreach (var k in teCount.Keys.Union(ourCount.Keys)) {
                teCount.TryGetValue(k, out long a);
                ourCount.TryGetValue(k, out long b);
                if (a != b)
                    lines.Add("count " + k + " te=" + a + " ours=" + b);
            }
            foreach (var kv in missing)
                lines.Add("missing " + kv.Key + " (" + kv.Value + " events)");
            foreach (var kv in values)
                lines.Add("value " + kv.Key + firstValue[kv.Key] + " (" + kv.Value + " events)");
            lines.Sort(StringComparer.Ordinal);
            foreach (var l in lines)
                Console.WriteLine(l);
            return lines.Count > 0 ? 3 : 0;
        }

        // ------------------------------------------------------------ TraceLog
        static TraceLog OpenLog(string file, out string etlx)
        {
            etlx = Path.Combine(Path.GetTempPath(), "nt-oracle-" + Environment.ProcessId + ".etlx");
            TraceLog.CreateFromEventPipeDataFile(file, etlx, new TraceLogOptions { ContinueOnError = true });
            return new TraceLog(etlx);
        }

        static void Stacks(string file)
        {
            string etlx;
            using (var log = OpenLog(file, out etlx)) {
                var ips = new List<string>();
                foreach (var e in log.Events) {
                    var cs = e.CallStackIndex();
                    if (cs == CallStackIndex.Invalid)
                        continue;
                    ips.Clear();
                    for (; cs != CallStackIndex.Invalid; cs = log.CallStacks.Caller(cs))
                        ips.Add(log.CodeAddresses.Address(log.CallStacks.CodeAddressIndex(cs)).ToString(Inv));
                    Console.WriteLine(e.TimeStampQPC.ToString(Inv) + " " + e.ThreadID.ToString(Inv) + " " + string.Join(",", ips));
                }
            }
            File.Delete(etlx);
        }

        static void Emit(SortedDictionary<string, double> folded)
        {
            foreach (var kv in folded)
                Console.WriteLine(kv.Key + " " + kv.Value.ToString("F6", Inv));
        }

        static void ThreadTime(string file)
        {
            string etlx;
            var folded = new SortedDictionary<string, double>(StringComparer.Ordinal);
            using (var log = OpenLog(file, out etlx))
            using (var symbols = new SymbolReader(TextWriter.Null)) {
                // as dotnet-trace convert: managed frames only, no EventSource events; no
                // symbol server (rundown names the managed frames)
                var stackSource = new MutableTraceEventStackSource(log) { OnlyManagedCodeStacks = true };
                var computer = new SampleProfilerThreadTimeComputer(log, symbols) { IncludeEventSourceEvents = false };
                computer.GenerateThreadTimeStacks(stackSource);
                var frames = new List<string>();
                stackSource.ForEach(s => {
                    frames.Clear();
                    for (var idx = s.StackIndex; idx != StackSourceCallStackIndex.Invalid; idx = stackSource.GetCallerIndex(idx))
                        frames.Add(stackSource.GetFrameName(stackSource.GetFrameIndex(idx), false));
                    frames.Reverse();
                    int t = frames.FindIndex(f => f.StartsWith("Thread (", StringComparison.Ordinal));
                    string key = string.Join(";", t >= 0 ? frames.Skip(t) : frames);
                    folded.TryGetValue(key, out double w);
                    folded[key] = w + s.Metric;
                });
            }
            File.Delete(etlx);
            Emit(folded);
        }

        // A speedscope file: each profile is named after its thread; evented profiles (O/C
        // at times in ms) or sampled ones (samples with weights).
        static void Speedscope(string file)
        {
            var folded = new SortedDictionary<string, double>(StringComparer.Ordinal);
            using var doc = JsonDocument.Parse(File.ReadAllBytes(file));
            var frames = doc.RootElement.GetProperty("shared").GetProperty("frames")
                .EnumerateArray().Select(f => f.GetProperty("name").GetString()).ToArray();
            foreach (var p in doc.RootElement.GetProperty("profiles").EnumerateArray()) {
                string name = p.GetProperty("name").GetString();
                string root = name;
                int paren = name.LastIndexOf('(');
                if (paren >= 0)
                    root = "Thread " + name.Substring(paren);
                if (p.GetProperty("type").GetString() == "evented") {
                    var stack = new List<int>();
                    double last = 0;
                    foreach (var ev in p.GetProperty("events").EnumerateArray()) {
                        double at = ev.GetProperty("at").GetDouble();
                        if (stack.Count > 0 && at > last) {
                            string key = root + ";" + string.Join(";", stack.Select(i => frames[i]));
                            folded.TryGetValue(key, out double w);
                            folded[key] = w + (at - last);
                        }
                        last = at;
                        int fr = ev.GetProperty("frame").GetInt32();
                        if (ev.GetProperty("type").GetString() == "O")
                            stack.Add(fr);
                        else if (stack.Count > 0)
                            stack.RemoveAt(stack.Count - 1);
                    }
                } else {
                    var samples = p.GetProperty("samples").EnumerateArray().ToArray();
                    var weights = p.GetProperty("weights").EnumerateArray().ToArray();
                    for (int i = 0; i < samples.Length; i++) {
                        string key = root + ";" + string.Join(";", samples[i].EnumerateArray().Select(x => frames[x.GetInt32()]));
                        folded.TryGetValue(key, out double w);
                        folded[key] = w + weights[i].GetDouble();
                    }
                }
            }
            Emit(folded);
        }
    }
}
