// SPDX-License-Identifier: MIT
// te-samples - TraceEvent's account of a nettrace file, the oracle of tests/e2e/t680:
// "events=N" (every event TraceEvent delivers), "samples=N" (SampleProfiler ThreadSample
// events), "methods=N" (rundown MethodDCEndVerbose events), "spin70=N" and "spin30=N"
// (samples whose stack holds SplitA.Spin70 / SplitB.Spin30, by TraceEvent's own symbol
// resolution through a TraceLog).
using System;
using System.IO;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Etlx;

static class Program
{
    // The providers by GUID: without parsers registered, TraceEvent names events only so.
    static readonly Guid SampleProfiler = new Guid("3c530d44-97ae-513a-1e6d-783e8f8e03a9");
    static readonly Guid Rundown = new Guid("a669021c-c450-4609-a035-5af59af4df18");

    static int Main(string[] args)
    {
        if (args.Length != 1)
        {
            Console.Error.WriteLine("usage: te-samples FILE.nettrace");
            return 1;
        }
        long events = 0, samples = 0, methods = 0;
        using (var source = new EventPipeEventSource(args[0]))
        {
            source.AllEvents += e =>
            {
                events++;
                if (e.ProviderGuid == SampleProfiler && (int)e.ID == 0)
                    samples++;
                if (e.ProviderGuid == Rundown && (int)e.ID == 144)
                    methods++;
            };
            source.Process();
        }
        Console.WriteLine("events=" + events);
        Console.WriteLine("samples=" + samples);
        Console.WriteLine("methods=" + methods);
        string etlx = Path.ChangeExtension(Path.GetTempFileName(), ".etlx");
        long a = 0, b = 0;
        try
        {
            TraceLog.CreateFromEventPipeDataFile(args[0], etlx);
            using (var log = new TraceLog(etlx))
            {
                foreach (var e in log.Events)
                {
                    if (e.ProviderGuid != SampleProfiler || (int)e.ID != 0)
                        continue;
                    bool inA = false, inB = false;
                    for (var cs = e.CallStack(); cs != null; cs = cs.Caller)
                    {
                        string m = cs.CodeAddress.FullMethodName ?? "";
                        if (m.Contains("SplitA.Spin70")) inA = true;
                        if (m.Contains("SplitB.Spin30")) inB = true;
                    }
                    if (inA) a++;
                    if (inB) b++;
                }
            }
        }
        finally
        {
            File.Delete(etlx);
        }
        Console.WriteLine("spin70=" + a);
        Console.WriteLine("spin30=" + b);
        return 0;
    }
}
