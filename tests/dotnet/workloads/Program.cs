// SPDX-License-Identifier: MIT
// Program.cs - .NET workloads with a known truth for the tests under tests/e2e/t6xx-dotnet-*.
//
// Each mode does one thing and prints its own measurement of it, taken with the program's
// own clocks and counters and never from a trace, as "key=value" lines on stdout:
//   split [SECONDS]    one thread alternating 7 ms in SplitA.Spin70 and 3 ms in SplitB.Spin30;
//                      prints the wall time spent in each (Stopwatch around each slice)
//   lock [SECONDS]     two threads taking one Monitor, each holding it ~2 ms per turn;
//                      prints the time both spent waiting in Monitor.Enter and the count
//   block [SECONDS]    Thread.Sleep, a blocking read of an anonymous pipe and an awaited
//                      Task.Delay, one third of the time each; prints each one's wall time
//   gc [COUNT]         allocates and calls GC.Collect() COUNT times (default 20); prints the
//                      induced count and GC.CollectionCount(0..2) deltas, and gcs, the
//                      collections of the whole process (a session from the start sees them all)
//   threads [COUNT]    starts and joins COUNT short-lived threads (default 200), each
//                      spinning ~2 ms; prints the count and the OS thread ids (os_tids)
//   exceptions [COUNT] throws and catches COUNT exceptions (default 1000); prints the count
//                      and first_chance, every exception thrown in the process meanwhile
//   serve [SECONDS]    runs split until SECONDS pass or stdin closes (for attaching tools)
//   serve16 [SECONDS]  the same with 15 more threads that sleep 1 ms at a time: the sampler
//                      samples 16 threads per round (the load of a live view)
// Methods under test are NoInlining so that they stay frames of their own.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.IO.Pipes;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using static NtWorkloads.Program;

namespace NtWorkloads
{
    static class Spin
    {
        // Burns the CPU until sw reaches until ticks; returns a value so the loop stays.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long Until(Stopwatch sw, long until)
        {
            long x = 0;
            while (sw.ElapsedTicks < until)
                for (int i = 0; i < 200; i++)
                    x += i ^ (x >> 3);
            return x;
        }
    }

    static class SplitA
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long Spin70(Stopwatch sw, long ticks) => Spin.Until(sw, sw.ElapsedTicks + ticks);
    }

    static class SplitB
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long Spin30(Stopwatch sw, long ticks) => Spin.Until(sw, sw.ElapsedTicks + ticks);
    }

    static class Locks
    {
        static readonly object Gate = new object();
        static long waitTicks;
        static long turns;

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void HoldGate(Stopwatch sw, long hold)
        {
            long t0 = Stopwatch.GetTimestamp();
            Monitor.Enter(Gate);
            Interlocked.Add(ref waitTicks, Stopwatch.GetTimestamp() - t0);
            try
            {
                Spin.Until(sw, sw.ElapsedTicks + hold);
                Interlocked.Increment(ref turns);
            }
            finally
            {
                Monitor.Exit(Gate);
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Worker(double seconds)
        {
            var sw = Stopwatch.StartNew();
            long hold = Stopwatch.Frequency * 2 / 1000;
            long end = (long)(seconds * Stopwatch.Frequency);
            while (sw.ElapsedTicks < end)
                HoldGate(sw, hold);
        }

        public static void Run(double seconds)
        {
            var sw = Stopwatch.StartNew();
            var t1 = new Thread(() => Worker(seconds)) { Name = "lock-worker-1" };
            var t2 = new Thread(() => Worker(seconds)) { Name = "lock-worker-2" };
            t1.Start(); t2.Start(); t1.Join(); t2.Join();
            Console.WriteLine("wall_s=" + Secs(sw.ElapsedTicks));
            Console.WriteLine("wait_s=" + Secs(waitTicks));
            Console.WriteLine("turns=" + turns);
        }
    }

    static class Blocking
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        static void SleepFor(int ms) => Thread.Sleep(ms);

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int ReadPipe(Stream s, byte[] buf) => s.Read(buf, 0, 1);

        [MethodImpl(MethodImplOptions.NoInlining)]
        static async Task DelayFor(int ms) => await Task.Delay(ms).ConfigureAwait(false);

        public static void Run(double seconds)
        {
            int third = (int)(seconds * 1000 / 3);
            var sw = Stopwatch.StartNew();
            SleepFor(third);
            long sleepTicks = sw.ElapsedTicks;

            using var server = new AnonymousPipeServerStream(PipeDirection.Out);
            using var client = new AnonymousPipeClientStream(PipeDirection.In, server.ClientSafePipeHandle);
            var writer = new Thread(() => { Thread.Sleep(third); server.WriteByte(42); server.Flush(); })
                { Name = "pipe-writer" };
            long t0 = sw.ElapsedTicks;
            writer.Start();
            int got = ReadPipe(client, new byte[1]);
            long pipeTicks = sw.ElapsedTicks - t0;
            writer.Join();

            t0 = sw.ElapsedTicks;
            DelayFor(third).GetAwaiter().GetResult();
            long delayTicks = sw.ElapsedTicks - t0;
            Console.WriteLine("sleep_s=" + Secs(sleepTicks));
            Console.WriteLine("pipe_s=" + Secs(pipeTicks));
            Console.WriteLine("pipe_byte=" + got);
            Console.WriteLine("delay_s=" + Secs(delayTicks));
        }
    }

    static class Garbage
    {
        static object keep;

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Allocate(int n)
        {
            var list = new object[1024];
            for (int i = 0; i < n; i++)
                list[i & 1023] = new byte[64 + (i & 255)];
            keep = list;
        }

        public static void Run(int count)
        {
            int[] before = { GC.CollectionCount(0), GC.CollectionCount(1), GC.CollectionCount(2) };
            for (int i = 0; i < count; i++)
            {
                Allocate(200000);
                GC.Collect();
            }
            Console.WriteLine("induced=" + count);
            Console.WriteLine("gen0=" + (GC.CollectionCount(0) - before[0]));
            Console.WriteLine("gen1=" + (GC.CollectionCount(1) - before[1]));
            Console.WriteLine("gen2=" + (GC.CollectionCount(2) - before[2]));
            // Every collection counts in generation 0, and none runs after this line.
            Console.WriteLine("gcs=" + GC.CollectionCount(0));
            GC.KeepAlive(keep);
        }
    }

    static class ShortThreads
    {
        // The OS thread id (what traces carry); glibc has had gettid since 2.30.
        [DllImport("libc", EntryPoint = "gettid")]
        static extern int GetTid();

        static readonly List<int> tids = new List<int>();

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Body()
        {
            var sw = Stopwatch.StartNew();
            int tid = GetTid();
            lock (tids)
                tids.Add(tid);
            Spin.Until(sw, Stopwatch.Frequency * 2 / 1000);
        }

        public static void Run(int count)
        {
            for (int i = 0; i < count; i++)
            {
                var t = new Thread(Body) { Name = "short-" + i };
                t.Start();
                t.Join();
            }
            Console.WriteLine("threads=" + count);
            Console.WriteLine("os_tids=" + string.Join(",", tids));
        }
    }

    static class Throwing
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Thrower(int i) => throw new InvalidOperationException("workload " + i);

        static int firstChance;

        public static void Run(int count)
        {
            AppDomain.CurrentDomain.FirstChanceException += (o, e) => Interlocked.Increment(ref firstChance);
            int caught = 0;
            for (int i = 0; i < count; i++)
            {
                try { Thrower(i); }
                catch (InvalidOperationException) { caught++; }
            }
            Console.WriteLine("exceptions=" + caught);
            Console.WriteLine("first_chance=" + firstChance);
        }
    }

    static class Program
    {
        internal static string Secs(long ticks) =>
            ((double)ticks / Stopwatch.Frequency).ToString("F6", System.Globalization.CultureInfo.InvariantCulture);

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Split(double seconds, TextReader stop)
        {
            var sw = Stopwatch.StartNew();
            long a = Stopwatch.Frequency * 7 / 1000, b = Stopwatch.Frequency * 3 / 1000;
            long inA = 0, inB = 0, end = (long)(seconds * Stopwatch.Frequency);
            long x = 0;
            var stopped = new ManualResetEventSlim(false);
            if (stop != null)
                new Thread(() => { while (stop.Read() >= 0) { } stopped.Set(); }) { IsBackground = true }.Start();
            while (sw.ElapsedTicks < end && !stopped.IsSet)
            {
                long t0 = sw.ElapsedTicks;
                x += SplitA.Spin70(sw, a);
                long t1 = sw.ElapsedTicks;
                x += SplitB.Spin30(sw, b);
                inA += t1 - t0;
                inB += sw.ElapsedTicks - t1;
            }
            Console.WriteLine("wall_s=" + Secs(sw.ElapsedTicks));
            Console.WriteLine("a_s=" + Secs(inA));
            Console.WriteLine("b_s=" + Secs(inB));
            Console.WriteLine("a_share=" + ((double)inA / (inA + inB)).ToString("F4", System.Globalization.CultureInfo.InvariantCulture));
            Console.WriteLine("checksum=" + (x & 1));
        }

        static double Arg(string[] args, double dflt) =>
            args.Length > 1 ? double.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture) : dflt;

        static int Main(string[] args)
        {
            string mode = args.Length > 0 ? args[0] : "";
            Console.WriteLine("mode=" + mode);
            Console.WriteLine("pid=" + Environment.ProcessId);
            Console.WriteLine("tid=" + Environment.CurrentManagedThreadId);
            switch (mode)
            {
                case "split": Split(Arg(args, 2), null); break;
                case "lock": Locks.Run(Arg(args, 2)); break;
                case "block": Blocking.Run(Arg(args, 1.5)); break;
                case "gc": Garbage.Run((int)Arg(args, 20)); break;
                case "threads": ShortThreads.Run((int)Arg(args, 200)); break;
                case "exceptions": Throwing.Run((int)Arg(args, 1000)); break;
                case "serve": Console.Out.Flush(); Split(Arg(args, 60), Console.In); break;
                case "serve16":
                    for (int i = 0; i < 15; i++)
                        new Thread(() => { for (;;) Thread.Sleep(1); }) { IsBackground = true, Name = "sleeper-" + i }.Start();
                    Console.Out.Flush();
                    Split(Arg(args, 60), Console.In);
                    break;
                default:
                    Console.Error.WriteLine("usage: nt-workloads split|lock|block|gc|threads|exceptions|serve|serve16 [N]");
                    return 1;
            }
            return 0;
        }
    }
}
