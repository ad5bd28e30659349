// SPDX-License-Identifier: MIT
// Program.cs - TraceEvent's source lines for the managed frames of a nettrace file's CPU
// samples, as the oracle of tests/e2e/t722-dotnet-lines-traceevent.sh:
//   nt-lines-oracle TRACE.nettrace SYMBOL-DIR
// prints one line per distinct (address, leaf) of a managed frame that TraceEvent
// resolves to a source line: "ADDRESS-HEX LEAF(0|1) LINE FILE-NAME METHOD", sorted.
// TraceEvent converts the file to an .etlx next to it and reads PDBs through its
// SymbolReader with SYMBOL-DIR as the symbol path.
using System;
using System.Collections.Generic;
using System.IO;
using Microsoft.Diagnostics.Symbols;
using Microsoft.Diagnostics.Tracing.Etlx;

namespace NtLinesOracle
{
    static class Program
    {
        static int Main(string[] args)
        {
            if (args.Length != 2)
            {
                Console.Error.WriteLine("usage: nt-lines-oracle TRACE.nettrace SYMBOL-DIR");
                return 1;
            }
            string etlx = TraceLog.CreateFromEventPipeDataFile(args[0]);
            var seen = new SortedDictionary<string, string>(StringComparer.Ordinal);
            using (var log = new TraceLog(etlx))
            using (var reader = new SymbolReader(TextWriter.Null, args[1]))
            {
                reader.SecurityCheck = path => true;
                foreach (var ev in log.Events)
                {
                    if (ev.ProviderName != "Microsoft-DotNETCore-SampleProfiler")
                        continue;
                    int depth = 0;
                    for (var cs = ev.CallStack(); cs != null; cs = cs.Caller, depth++)
                    {
                        var ca = cs.CodeAddress;
                        if (ca == null || ca.Method == null)
                            continue;
                        string key = ca.Address.ToString("x") + " " + (depth == 0 ? "1" : "0");
                        if (seen.ContainsKey(key))
                            continue;
                        var sl = ca.GetSourceLine(reader);
                        if (sl == null || sl.SourceFile == null)
                        {
                            seen[key] = null;
                            continue;
                        }
                        seen[key] = sl.LineNumber + " " + Path.GetFileName(sl.SourceFile.BuildTimeFilePath) +
                                    " " + ca.Method.FullMethodName;
                    }
                }
            }
            foreach (var kv in seen)
                if (kv.Value != null)
                    Console.WriteLine(kv.Key + " " + kv.Value);
            return 0;
        }
    }
}
