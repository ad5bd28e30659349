// SPDX-License-Identifier: MIT
// Program.cs - TraceEvent's reading of a Universal-provider trace (Universal.Events cpu
// and cswitch with Universal.System processes, mappings and symbols), the oracle of t742:
// TraceLog converts the file (its NettraceUniversalConverter builds processes, modules
// and the ProcessSymbol methods) and each Universal.Events event is printed as
//   NAME <tab> PID <tab> PROCESS <tab> TID <tab> VALUE <tab> root;...;leaf
// with frames "Module!Method" as TraceEvent names them ("Module!?" when unresolved).
// Then one "process PID NAME" line per process that has a name.
// Usage: nt-universal-check TRACE.nettrace
using System;
using System.Collections.Generic;
using System.IO;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Etlx;

static class Program
{
    static int Main(string[] args)
    {
        if (args.Length != 1)
        {
            Console.Error.WriteLine("usage: nt-universal-check TRACE.nettrace");
            return 1;
        }
        string etlx = Path.Combine(Path.GetTempPath(), "nt-universal-" + Environment.ProcessId + ".etlx");
        try
        {
            TraceLog.CreateFromEventPipeDataFile(args[0], etlx);
            using (var log = new TraceLog(etlx))
            {
                var lines = new List<string>();
                foreach (TraceEvent ev in log.Events)
                {
                    if (ev.ProviderName != "Universal.Events")
                        continue;
                    var frames = new List<string>();
                    for (TraceCallStack cs = ev.CallStack(); cs != null; cs = cs.Caller)
                    {
                        TraceCodeAddress ca = cs.CodeAddress;
                        string m = ca.ModuleName;
                        string f = ca.FullMethodName;
                        frames.Add((string.IsNullOrEmpty(m) ? "?" : m) + "!" + (string.IsNullOrEmpty(f) ? "?" : f));
                    }
                    frames.Reverse();
                    object v = ev.PayloadByName("Value");
                    lines.Add(ev.EventName + "\t" + ev.ProcessID + "\t" + ev.ProcessName + "\t" +
                              ev.ThreadID + "\t" + Convert.ToUInt64(v) + "\t" + string.Join(";", frames));
                }
                foreach (string l in lines)
                    Console.WriteLine(l);
                foreach (TraceProcess p in log.Processes)
                    if (!string.IsNullOrEmpty(p.Name))
                        Console.WriteLine("process " + p.ProcessID + " " + p.Name);
            }
        }
        finally
        {
            try { File.Delete(etlx); } catch (IOException) { }
        }
        return 0;
    }
}
