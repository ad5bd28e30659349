/* SPDX-License-Identifier: MIT */
/* test-category.c - unit tests of the blocked-time category rules (category.c): category
 * names, the built-in rules (checked byte for byte against data/rules/default.rules, then
 * exercised with realistic managed and native stacks for every category), precedence
 * (leaf-most frame, file order within a frame, outer rules), the glob matcher (edge
 * cases, a randomized cross-check against a naive backtracking matcher, a pathological
 * pattern), every kind of rule-file error with its line and byte offset, and a
 * micro-benchmark printed as a TAP diagnostic (not asserted). */
#include "internal.h" /* first: config.h enables the POSIX/GNU declarations used below */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "testutil.h"

/* ------------------------------------------------------------------ helpers */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Parses text (NUL-terminated) as a rules file named "t.rules"; NULL on error (then
 * *err says why). */
static nt_rules *parse_str(const char *text, nt_error *err)
{
	nt_rules *r = NULL;
	nt_error_clear(err);
	nt_rules_parse(&r, text, strlen(text), "t.rules", err);
	return r;
}

/* Category of a stack; the frames are listed leaf first. */
#define MATCH(R, ...)                                                                       \
	nt_rules_match((R), (const char *const[]){ __VA_ARGS__ },                           \
		       sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *))

/* Categories produced by the default-rule cases, to check that each one is exercised. */
static int seen[NT_CAT_COUNT];

#define EXPECT(R, want, desc, ...)                                                          \
	do {                                                                                 \
		int got_ = MATCH((R), __VA_ARGS__);                                          \
		if (got_ >= 0 && got_ < NT_CAT_COUNT)                                        \
			seen[got_]++;                                                        \
		if (!ok(got_ == (want), "%s -> %s", desc,                                    \
			(want) >= 0 ? nt_category_name(want) : "no match"))                  \
			printf("#   got %s\n", got_ >= 0 ? nt_category_name(got_) : "no match"); \
	} while (0)

/* 1 if the single-rule file "cpu PATTERN" matches name, 0 if not, -1 if it doesn't parse. */
static int glob(const char *pattern, const char *name)
{
	char text[2100];
	nt_error err;
	snprintf(text, sizeof text, "cpu %s\n", pattern);
	nt_rules *r = parse_str(text, &err);
	if (!r)
		return -1;
	const char *f[1] = { name };
	int m = nt_rules_match(r, f, 1);
	nt_rules_free(r);
	return m == NT_CAT_CPU;
}

/* Naive backtracking glob (the specification, exponential in the worst case). */
static int ref_glob(const char *p, const char *s)
{
	if (!*p)
		return !*s;
	if (*p == '*')
		return ref_glob(p + 1, s) || (*s && ref_glob(p, s + 1));
	if (!*s)
		return 0;
	return (*p == '?' || *p == *s) && ref_glob(p + 1, s + 1);
}

/* Checks that parsing text fails with NT_EFORMAT, the message msg and offset off. */
static void expect_error(const char *desc, const char *text, size_t len, const char *name,
			 const char *msg, uint64_t off)
{
	nt_rules *r = (nt_rules *)1;
	nt_error err;
	nt_error_clear(&err);
	int rc = nt_rules_parse(&r, text, len, name, &err);
	ok(rc == NT_EFORMAT && err.code == NT_EFORMAT && r == NULL, "%s: NT_EFORMAT", desc);
	is_str(err.msg, msg, "%s: message", desc);
	is_u64(err.offset, off, "%s: offset", desc);
}

/* ------------------------------------------------------------------ names */

static void test_category_names_round_trip(void)
{
	static const char *const want[] = { "cpu",  "lock", "io",       "sleep",   "wait",
					    "gc",   "external", "unknown", "ready", "running" };
	is_int(NT_CAT_COUNT, 10, "10 categories");
	for (int i = 0; i < NT_CAT_COUNT; i++) {
		is_str(nt_category_name(i), want[i], "name of category %d", i);
		is_int(nt_category_parse(want[i]), i, "parse '%s'", want[i]);
	}
	ok(nt_category_name(-1) == NULL, "name of -1 is NULL");
	ok(nt_category_name(NT_CAT_COUNT) == NULL, "name of NT_CAT_COUNT is NULL");
	is_int(nt_category_parse("Lock"), -1, "names are case-sensitive");
	is_int(nt_category_parse("locks"), -1, "no prefix matching");
	is_int(nt_category_parse(""), -1, "empty name");
	is_int(nt_category_parse(NULL), -1, "NULL name");
}

/* ------------------------------------------------------------------ built-in rules */

static void test_category_default_text_matches_file(void)
{
	size_t flen = 0, dlen = 0;
	unsigned char *file = tu_slurp(tu_data("rules/default.rules"), &flen);
	const char *text = nt_rules_default_source(&dlen);
	ok(file != NULL, "read data/rules/default.rules");
	ok(file && flen == dlen && memcmp(file, text, flen) == 0,
	   "compiled-in default rules equal data/rules/default.rules byte for byte");
	if (file && (flen != dlen || memcmp(file, text, flen) != 0))
		printf("#   file %zu bytes, compiled in %zu bytes\n", flen, dlen);
	free(file);

	nt_rules *a = NULL, *b = NULL;
	nt_error err;
	nt_error_clear(&err);
	is_int(nt_rules_default(&a, &err), 0, "nt_rules_default");
	nt_error_clear(&err);
	is_int(nt_rules_load(&b, tu_data("rules/default.rules"), &err), 0,
	       "nt_rules_load(data/rules/default.rules)");
	if (err.code)
		printf("#   %s\n", err.msg);
	const char *f[] = { "System.Private.CoreLib!System.Threading.Monitor.Enter(class System.Object)" };
	ok(a && b && nt_rules_match(a, f, 1) == NT_CAT_LOCK && nt_rules_match(b, f, 1) == NT_CAT_LOCK,
	   "loaded and built-in rules agree");
	nt_rules_free(a);
	nt_rules_free(b);
}

#define CORELIB "System.Private.CoreLib!System."
#define CORELIB_IL "System.Private.CoreLib.il!System."
#define APP "MyApp!MyApp.Worker."

static void test_category_default_lock(const nt_rules *R)
{
	EXPECT(R, NT_CAT_LOCK, "Monitor.Enter over user code",
	       CORELIB "Threading.Monitor.Enter(class System.Object)", APP "Update()",
	       APP "Run()");
	EXPECT(R, NT_CAT_LOCK, "Monitor.ReliableEnter (ReadyToRun module name)",
	       CORELIB_IL "Threading.Monitor.ReliableEnter(class System.Object,bool&)",
	       CORELIB_IL "Threading.Monitor.Enter(class System.Object,bool&)", APP "Run()");
	EXPECT(R, NT_CAT_LOCK, "Monitor.TryEnter with a timeout",
	       CORELIB "Threading.Monitor.ReliableEnterTimeout(class System.Object,int32,bool&)",
	       CORELIB "Threading.Monitor.TryEnter(class System.Object,int32,bool&)", APP "Run()");
	/* .NET 10: Monitor.Enter -> Lock.Enter -> Lock.TryEnterSlow -> AutoResetEvent.WaitOne */
	EXPECT(R, NT_CAT_LOCK, "Monitor built on System.Threading.Lock waiting on an event",
	       CORELIB "Threading.WaitHandle.WaitOneCore(int,int32,bool)",
	       CORELIB "Threading.WaitHandle.WaitOneNoCheck(int32)",
	       CORELIB "Threading.WaitHandle.WaitOne(int32)",
	       CORELIB "Threading.Lock.TryEnterSlow(int32,value class System.Threading.Lock+ThreadId)",
	       CORELIB "Threading.Lock.Enter()",
	       CORELIB "Threading.Monitor.Enter(class System.Object)", APP "Update()");
	EXPECT(R, NT_CAT_LOCK, "System.Threading.Lock spinning",
	       CORELIB "Threading.Thread.SpinWait(int32)",
	       CORELIB "Threading.Lock.TryEnterSlow(int32,value class System.Threading.Lock+ThreadId)",
	       CORELIB "Threading.Lock.EnterScope()", APP "Update()");
	EXPECT(R, NT_CAT_LOCK, "ReaderWriterLockSlim writer waiting on its event",
	       CORELIB "Threading.WaitHandle.WaitOneNoCheck(int32)",
	       CORELIB "Threading.WaitHandle.WaitOne(int32)",
	       CORELIB "Threading.ReaderWriterLockSlim.WaitOnEvent(class System.Threading.EventWaitHandle,unsigned int32&,value class TimeoutTracker,value class EnterLockType)",
	       CORELIB "Threading.ReaderWriterLockSlim.TryEnterWriteLockCore(value class TimeoutTracker)",
	       CORELIB "Threading.ReaderWriterLockSlim.TryEnterWriteLock(value class TimeoutTracker)",
	       CORELIB "Threading.ReaderWriterLockSlim.EnterWriteLock()", APP "Save()");
	EXPECT(R, NT_CAT_LOCK, "SpinLock whose SpinWait sleeps",
	       CORELIB "Threading.Thread.Sleep(int32)", CORELIB "Threading.SpinWait.SpinOnceCore(int32)",
	       CORELIB "Threading.SpinLock.ContinueTryEnter(int32,bool&)",
	       CORELIB "Threading.SpinLock.Enter(bool&)", APP "Update()");
	EXPECT(R, NT_CAT_LOCK, "glibc: contended pthread mutex",
	       "libc.so.6!__lll_lock_wait", "libc.so.6!___pthread_mutex_lock",
	       "libcoreclr.so!CrstBase::Enter()", "libcoreclr.so!MethodDesc::DoPrestub(MethodTable*)");
	EXPECT(R, NT_CAT_LOCK, "glibc: rwlock sleeping in a futex",
	       "libc.so.6!__futex_abstimed_wait_common64", "libc.so.6!__pthread_rwlock_wrlock_full64",
	       "libc.so.6!pthread_rwlock_wrlock@@GLIBC_2.34", "libapp.so!cache_put");
	EXPECT(R, NT_CAT_LOCK, "CoreCLR native monitor (AwareLock) waiting on a PAL event",
	       "libc.so.6!__futex_abstimed_wait_common64",
	       "libc.so.6!pthread_cond_timedwait@@GLIBC_2.3.2",
	       "libcoreclr.so!CorUnix::CPalSynchronizationManager::ThreadNativeWait(CorUnix::_ThreadNativeWaitData*, unsigned int, CorUnix::ThreadWakeupReason*, unsigned int*)",
	       "libcoreclr.so!CLREvent::WaitEx(unsigned int, WaitMode, PendingSync*)",
	       "libcoreclr.so!AwareLock::EnterEpilogHelper(Thread*, int)",
	       "libcoreclr.so!AwareLock::EnterEpilog(Thread*, int)",
	       CORELIB "Threading.Monitor.Enter(class System.Object)", APP "Update()");
}

static void test_category_default_sleep(const nt_rules *R)
{
	EXPECT(R, NT_CAT_SLEEP, "Thread.Sleep (CoreCLR)",
	       CORELIB "Threading.Thread.SleepInternal(int32)", CORELIB "Threading.Thread.Sleep(int32)",
	       APP "Poll()");
	EXPECT(R, NT_CAT_SLEEP, "Thread.Sleep built on WaitSubsystem (NativeAOT/Mono)",
	       CORELIB "Threading.LowLevelMonitor.WaitCore(int32)",
	       CORELIB "Threading.WaitSubsystem+ThreadWaitInfo.Wait(int32,bool,bool)",
	       CORELIB "Threading.WaitSubsystem+ThreadWaitInfo.Sleep(int32,bool)",
	       CORELIB "Threading.WaitSubsystem.Sleep(int32,bool)",
	       CORELIB "Threading.Thread.Sleep(int32)", APP "Poll()");
	EXPECT(R, NT_CAT_SLEEP, "native nanosleep", "libc.so.6!__GI___clock_nanosleep",
	       "libc.so.6!__nanosleep", "libapp.so!backoff");
	EXPECT(R, NT_CAT_SLEEP, "native usleep (versioned)", "libc.so.6!usleep@GLIBC_2.2.5",
	       "libapp.so!backoff");
	EXPECT(R, NT_CAT_SLEEP, "PAL SleepEx on a timed condition wait",
	       "libc.so.6!pthread_cond_timedwait@@GLIBC_2.3.2",
	       "libcoreclr.so!CorUnix::CPalSynchronizationManager::ThreadNativeWait(CorUnix::_ThreadNativeWaitData*, unsigned int, CorUnix::ThreadWakeupReason*, unsigned int*)",
	       "libcoreclr.so!SleepEx", "libcoreclr.so!ClrSleepEx(unsigned int, int)",
	       "libcoreclr.so!Thread::UserSleep(int)");
}

static void test_category_default_wait(const nt_rules *R)
{
	EXPECT(R, NT_CAT_WAIT, "WaitHandle.WaitOne",
	       CORELIB "Threading.WaitHandle.WaitOneCore(int,int32,bool)",
	       CORELIB "Threading.WaitHandle.WaitOneNoCheck(int32)",
	       CORELIB "Threading.WaitHandle.WaitOne()", APP "Run()");
	EXPECT(R, NT_CAT_WAIT, "Task.Result: InternalWait -> SpinThenBlockingWait -> MRES.Wait",
	       CORELIB "Threading.Monitor.Wait(class System.Object,int32)",
	       CORELIB "Threading.ManualResetEventSlim.Wait(int32,value class System.Threading.CancellationToken)",
	       CORELIB "Threading.Tasks.Task.SpinThenBlockingWait(int32,value class System.Threading.CancellationToken)",
	       CORELIB "Threading.Tasks.Task.InternalWaitCore(int32,value class System.Threading.CancellationToken)",
	       CORELIB "Threading.Tasks.Task`1[System.__Canon].GetResultCore(bool)",
	       CORELIB "Threading.Tasks.Task`1[System.__Canon].get_Result()", APP "Run()");
	EXPECT(R, NT_CAT_WAIT, "ManualResetEventSlim spinning with Thread.Sleep(1)",
	       CORELIB "Threading.Thread.SleepInternal(int32)", CORELIB "Threading.Thread.Sleep(int32)",
	       CORELIB "Threading.SpinWait.SpinOnceCore(int32)",
	       CORELIB "Threading.ManualResetEventSlim.Wait(int32,value class System.Threading.CancellationToken)",
	       APP "Run()");
	EXPECT(R, NT_CAT_WAIT, "SemaphoreSlim.Wait", CORELIB "Threading.Monitor.Wait(class System.Object,int32)",
	       CORELIB "Threading.SemaphoreSlim.WaitUntilCountOrTimeout(int32,unsigned int32,value class System.Threading.CancellationToken)",
	       CORELIB "Threading.SemaphoreSlim.Wait(int32,value class System.Threading.CancellationToken)",
	       "System.Collections.Concurrent!System.Collections.Concurrent.BlockingCollection`1[System.__Canon].TryTakeWithNoTimeValidation(!0&,int32,value class System.Threading.CancellationToken,class System.Threading.CancellationTokenSource)");
	EXPECT(R, NT_CAT_WAIT, "idle thread-pool worker",
	       CORELIB_IL "Threading.LowLevelLifoSemaphore.WaitForSignal(int32)",
	       CORELIB_IL "Threading.LowLevelLifoSemaphore.Wait(int32,bool)",
	       CORELIB_IL "Threading.PortableThreadPool+WorkerThread.WorkerThreadStart()");
	EXPECT(R, NT_CAT_WAIT, "Task.Wait() of a running task", CORELIB "Threading.Tasks.Task.InternalWaitCore(int32,value class System.Threading.CancellationToken)",
	       CORELIB "Threading.Tasks.Task.Wait()", APP "Main(class System.String[])");
	EXPECT(R, NT_CAT_WAIT, "glibc condition variable", "libc.so.6!__futex_abstimed_wait_common64",
	       "libc.so.6!___pthread_cond_wait", "libc.so.6!pthread_cond_wait@@GLIBC_2.3.2",
	       "libapp.so!queue_pop");
	EXPECT(R, NT_CAT_WAIT, "idle server-GC thread (waiting, not collecting)",
	       "libc.so.6!__futex_abstimed_wait_common64", "libc.so.6!pthread_cond_wait@@GLIBC_2.3.2",
	       "libcoreclr.so!GCEvent::Impl::Wait(unsigned int, bool)",
	       "libcoreclr.so!SVR::gc_heap::gc_thread_function()",
	       "libcoreclr.so!SVR::gc_heap::gc_thread_stub(void*)");
	EXPECT(R, NT_CAT_WAIT, "bare futex", "libc.so.6!futex_wait", "libapp.so+0x1a2b0");
}

static void test_category_default_io(const nt_rules *R)
{
	EXPECT(R, NT_CAT_IO, "Console.ReadLine -> Interop+Sys.Read",
	       "System.Private.CoreLib!Interop+Sys.Read(class System.Runtime.InteropServices.SafeHandle,unsigned int8*,int32)",
	       "System.Console!System.ConsolePal.Read(class Microsoft.Win32.SafeHandles.SafeFileHandle,value class System.Span`1<unsigned int8>)",
	       "System.Console!System.Console.ReadLine()", APP "Main(class System.String[])");
	EXPECT(R, NT_CAT_IO, "[LibraryImport] P/Invoke stub of Interop+Sys.Receive",
	       "?!?", "System.Net.Sockets!Interop+Sys.<Receive>g____PInvoke|25_0(int,unsigned int8*,int32,value class SocketFlags,int32*)",
	       "System.Net.Sockets!Interop+Sys.Receive(class System.Runtime.InteropServices.SafeHandle,unsigned int8*,int32,value class SocketFlags,int32*)",
	       APP "Serve()");
	EXPECT(R, NT_CAT_IO, "synchronous socket receive waiting on an MRES (Unix)",
	       CORELIB "Threading.Monitor.Wait(class System.Object,int32)",
	       CORELIB "Threading.ManualResetEventSlim.Wait(int32,value class System.Threading.CancellationToken)",
	       "System.Net.Sockets!System.Net.Sockets.SocketAsyncContext.Receive(value class System.Span`1<unsigned int8>,value class SocketFlags,int32,int32&)",
	       "System.Net.Sockets!System.Net.Sockets.Socket.Receive(value class System.Span`1<unsigned int8>,value class SocketFlags,value class SocketError&)",
	       "System.Net.Sockets!System.Net.Sockets.NetworkStream.Read(value class System.Span`1<unsigned int8>)",
	       APP "Serve()");
	EXPECT(R, NT_CAT_IO, "socket engine thread",
	       "System.Net.Sockets!Interop+Sys.WaitForSocketEvents(int,value class SocketEvent*,int32*)",
	       "System.Net.Sockets!System.Net.Sockets.SocketAsyncEngine.EventLoop()",
	       CORELIB "Threading.Thread.StartCallback()");
	EXPECT(R, NT_CAT_IO, "FileStream.Read", CORELIB "IO.RandomAccess.ReadAtOffset(class Microsoft.Win32.SafeHandles.SafeFileHandle,value class System.Span`1<unsigned int8>,int64)",
	       CORELIB "IO.Strategies.UnixFileStreamStrategy.Read(value class System.Span`1<unsigned int8>)",
	       CORELIB "IO.FileStream.Read(unsigned int8[],int32,int32)", APP "Load()");
	EXPECT(R, NT_CAT_IO, "native epoll_wait", "libc.so.6!epoll_wait",
	       "libSystem.Native.so!SystemNative_WaitForSocketEvents", "?!?");
	EXPECT(R, NT_CAT_IO, "native read (glibc debug alias)", "libc.so.6!__GI___libc_read",
	       "libapp.so!load_file");
	EXPECT(R, NT_CAT_IO, "native read (versioned)", "libc.so.6!read@GLIBC_2.2.5", "libapp.so!load_file");
	EXPECT(R, NT_CAT_IO, "native pread64", "libc.so.6!__libc_pread64", "libapp.so!load_file");
	EXPECT(R, NT_CAT_IO, "native recvmsg", "libc.so.6!__libc_recvmsg", "libapp.so!serve");
	EXPECT(R, NT_CAT_IO, "native poll", "libc.so.6!__poll", "libapp.so!serve");
	EXPECT(R, NT_CAT_IO, "io_uring", "liburing.so.2!__sys_io_uring_enter", "libapp.so!serve");
	EXPECT(R, -1, "SSL_read is not io by itself (its read() would be)", "libssl.so.3!SSL_read",
	       "libapp.so!serve");
	EXPECT(R, -1, "pthread thread start is not a read (\"thread\" ends in \"read\")",
	       "libc.so.6!start_thread", "libc.so.6!clone3");
}

static void test_category_default_gc(const nt_rules *R)
{
	EXPECT(R, NT_CAT_GC, "GC.Collect", "?!?", CORELIB "GC._Collect(int32,int32,bool)",
	       CORELIB "GC.Collect()", APP "Trim()");
	EXPECT(R, NT_CAT_GC, "GC.WaitForPendingFinalizers",
	       CORELIB "GC._WaitForPendingFinalizers()", CORELIB "GC.WaitForPendingFinalizers()",
	       APP "Trim()");
	EXPECT(R, NT_CAT_GC, "thread waiting for another thread's GC",
	       "libc.so.6!__futex_abstimed_wait_common64", "libc.so.6!pthread_cond_wait@@GLIBC_2.3.2",
	       "libcoreclr.so!GCEvent::Impl::Wait(unsigned int, bool)",
	       "libcoreclr.so!WKS::GCHeap::WaitUntilGCComplete(bool)",
	       "libcoreclr.so!Thread::RareDisablePreemptiveGC()", APP "Run()");
	EXPECT(R, NT_CAT_GC, "GC marking on the allocating thread",
	       "libcoreclr.so!WKS::gc_heap::mark_object_simple(unsigned char**)",
	       "libcoreclr.so!WKS::gc_heap::mark_phase(int)",
	       "libcoreclr.so!WKS::gc_heap::garbage_collect(int)",
	       "libcoreclr.so!WKS::GCHeap::Alloc(gc_alloc_context*, unsigned long, unsigned int)",
	       "libcoreclr.so!AllocateSzArray(MethodTable*, int, GC_ALLOC_FLAGS)", APP "Run()");
	EXPECT(R, NT_CAT_GC, "server GC suspending the runtime",
	       "libc.so.6!__futex_abstimed_wait_common64",
	       "libcoreclr.so!ThreadSuspend::SuspendRuntime(ThreadSuspend::SUSPEND_REASON)",
	       "libcoreclr.so!SVR::gc_heap::garbage_collect(int)",
	       "libcoreclr.so!SVR::GCHeap::GarbageCollectGeneration(unsigned int, gc_reason)");
}

static void test_category_default_cpu_external(const nt_rules *R)
{
	EXPECT(R, NT_CAT_CPU, "task run inline by Task.Wait", APP "Compute()",
	       CORELIB "Threading.Tasks.Task.InnerInvoke()",
	       CORELIB "Threading.Tasks.Task.ExecuteWithThreadLocal(class System.Threading.Tasks.Task&,class System.Threading.Thread)",
	       CORELIB "Threading.Tasks.TaskScheduler.TryExecuteTask(class System.Threading.Tasks.Task)",
	       CORELIB "Threading.Tasks.ThreadPoolTaskScheduler.TryExecuteTaskInline(class System.Threading.Tasks.Task,bool)",
	       CORELIB "Threading.Tasks.TaskScheduler.TryRunInline(class System.Threading.Tasks.Task,bool)",
	       CORELIB "Threading.Tasks.Task.WrappedTryRunInline()",
	       CORELIB "Threading.Tasks.Task.InternalWaitCore(int32,value class System.Threading.CancellationToken)",
	       CORELIB "Threading.Tasks.Task.Wait()", APP "Main(class System.String[])");
	EXPECT(R, NT_CAT_SLEEP, "task run inline by Task.Wait that sleeps",
	       CORELIB "Threading.Thread.Sleep(int32)", APP "Nap()",
	       CORELIB "Threading.Tasks.TaskScheduler.TryRunInline(class System.Threading.Tasks.Task,bool)",
	       CORELIB "Threading.Tasks.Task.WrappedTryRunInline()",
	       CORELIB "Threading.Tasks.Task.InternalWaitCore(int32,value class System.Threading.CancellationToken)",
	       CORELIB "Threading.Tasks.Task.Wait()", APP "Main(class System.String[])");
	EXPECT(R, NT_CAT_EXTERNAL, "unrecognised native code behind a P/Invoke stub",
	       "libcompute.so+0x4f10", "?!?",
	       "System.Private.CoreLib!ILStubClass.IL_STUB_PInvoke(int32)",
	       APP "NativeMethods.Compute(int32)", APP "Run()");
	EXPECT(R, NT_CAT_IO, "a recognised call behind a P/Invoke stub wins", "libc.so.6!read",
	       "System.Private.CoreLib!ILStubClass.IL_STUB_PInvoke(int32)",
	       APP "NativeMethods.Read(int32)", APP "Run()");
	EXPECT(R, -1, "plain managed code", APP "Compute()", APP "Run()",
	       CORELIB "Threading.Thread.StartCallback()");
	EXPECT(R, -1, "unresolved frames only", "?!?", "libcoreclr.so+0x2f4410", "?!?");
	ok(nt_rules_match(R, NULL, 0) == -1, "empty stack -> no match");
}

static void test_category_default_all_exercised(void)
{
	/* "unknown" has no default rule: unresolved frames must not hide the frames above;
	 * "ready" and "running" come from a sample's CPU clock or type, never from frames. */
	for (int c = 0; c < NT_CAT_COUNT; c++)
		if (c != NT_CAT_UNKNOWN && c != NT_CAT_READY && c != NT_CAT_RUNNING)
			ok(seen[c] > 0, "default rules produce '%s' in some case", nt_category_name(c));
	nt_error err;
	nt_rules *r = parse_str("unknown ?!?\n", &err);
	const char *f[] = { "?!?", "App!A.B()" };
	ok(r && nt_rules_match(r, f, 2) == NT_CAT_UNKNOWN, "a custom rule can produce 'unknown'");
	nt_rules_free(r);
}

/* ------------------------------------------------------------------ precedence */

static void test_category_precedence(void)
{
	nt_error err;
	nt_rules *r = parse_str("lock *A*\nwait *B*\n", &err);
	ok(r != NULL, "parse two rules");
	is_int(MATCH(r, "xBx", "xAx"), NT_CAT_WAIT, "leaf-most matching frame wins (leaf B)");
	is_int(MATCH(r, "none", "xAx", "xBx"), NT_CAT_LOCK, "leaf-most matching frame wins (A)");
	is_int(MATCH(r, NULL, "xAx"), NT_CAT_LOCK, "a NULL frame is skipped");
	is_int(MATCH(r, "none", "nothing"), -1, "no match -> -1");
	nt_rules_free(r);

	r = parse_str("wait *AB*\nlock *A*\n", &err);
	is_int(MATCH(r, "xABx"), NT_CAT_WAIT, "within a frame, file order: first rule");
	nt_rules_free(r);
	r = parse_str("lock *A*\nwait *AB*\n", &err);
	is_int(MATCH(r, "xABx"), NT_CAT_LOCK, "within a frame, file order: swapped");
	nt_rules_free(r);

	r = parse_str("wait *W*\nouter lock *L*\nio *I*\n", &err);
	is_int(MATCH(r, "W", "L"), NT_CAT_LOCK, "an outer rule beats a leaf-ward plain match");
	is_int(MATCH(r, "L", "W"), NT_CAT_LOCK, "an outer rule at the leaf beats a plain rule");
	is_int(MATCH(r, "I", "W"), NT_CAT_IO, "without outer matches, the leaf-most wins");
	nt_rules_free(r);

	r = parse_str("outer wait *W*\nouter lock *L*\n", &err);
	is_int(MATCH(r, "W", "L"), NT_CAT_LOCK, "outer: the root-most match wins (L)");
	is_int(MATCH(r, "L", "W"), NT_CAT_WAIT, "outer: the root-most match wins (W)");
	is_int(MATCH(r, "x", "L", "x", "x"), NT_CAT_LOCK, "outer: a single outer match");
	nt_rules_free(r);

	r = parse_str("outer io *X*\nouter gc *X*\nlock *X*\n", &err);
	is_int(MATCH(r, "X"), NT_CAT_IO, "outer: file order within a frame");
	nt_rules_free(r);
	r = parse_str("lock *X*\nouter gc *X*\n", &err);
	is_int(MATCH(r, "X"), NT_CAT_GC, "outer beats an earlier plain rule in the same frame");
	nt_rules_free(r);

	/* keyless rules (no 4-byte literal run) mixed with keyed ones keep file order */
	r = parse_str("sleep *ab*\nlock *abcd*\nwait *a?cd*\n", &err);
	is_int(MATCH(r, "xabcdx"), NT_CAT_SLEEP, "keyless rule first in file order");
	nt_rules_free(r);
	r = parse_str("lock *abcd*\nsleep *ab*\n", &err);
	is_int(MATCH(r, "xabcdx"), NT_CAT_LOCK, "keyed rule first in file order");
	nt_rules_free(r);
}

/* ------------------------------------------------------------------ glob */

static void test_category_glob_edge_cases(void)
{
	static const struct {
		const char *pat, *name;
		int want;
	} c[] = {
		{ "*", "", 1 },          { "*", "anything", 1 },  { "**", "", 1 },
		{ "***", "abc", 1 },     { "?", "", 0 },          { "?", "a", 1 },
		{ "?", "ab", 0 },        { "??", "ab", 1 },       { "*?", "", 0 },
		{ "*?*", "x", 1 },       { "?*?", "a", 0 },       { "?*?", "ab", 1 },
		{ "abc", "abc", 1 },     { "abc", "ab", 0 },      { "abc", "abcd", 0 },
		{ "abc", "xabc", 0 },    { "a*b", "a", 0 },       { "a*b", "ab", 1 },
		{ "a**b", "ab", 1 },     { "a**b", "axxb", 1 },   { "a*a", "a", 0 },
		{ "a*a", "aa", 1 },      { "*a*a*", "a", 0 },     { "*a*a*", "xaxax", 1 },
		{ "*abc", "xxabc", 1 },  { "*abc", "abcx", 0 },   { "abc*", "abcxx", 1 },
		{ "abc*", "xabc", 0 },   { "a?c", "abc", 1 },     { "a?c", "ac", 0 },
		{ "*a?c*", "xxabxabcx", 1 },                      { "*b?b*", "bbb", 1 },
		{ "*b?b*", "bb", 0 },    { "*x??y*", "axbcyd", 1 },
		{ "*x??y*", "axbyxcdy", 1 },                      { "longer-than-name", "long", 0 },
		{ "\\*", "*", 1 },       { "\\*", "x", 0 },       { "\\?", "?", 1 },
		{ "\\?", "x", 0 },       { "a\\\\b", "a\\b", 1 }, { "a\\ b", "a b", 1 },
		{ "a\\\tb", "a\tb", 1 }, { "\\#x", "#x", 1 },     { "x#y", "x#y", 1 },
		{ "*\\**", "a*b", 1 },   { "*\\**", "ab", 0 },
		{ "?", "\xc3\xa9", 0 }, /* '?' is one byte: U+00E9 is two */
		{ "??", "\xc3\xa9", 1 },
		{ "*!System.Threading.Monitor.Enter(*",
		  "System.Private.CoreLib!System.Threading.Monitor.Enter(class System.Object)", 1 },
		{ "*!System.Threading.Monitor.Enter(*",
		  "System.Private.CoreLib!System.Threading.Monitor.EnterScope()", 0 },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
		is_int(glob(c[i].pat, c[i].name), c[i].want, "glob '%s' vs '%s'", c[i].pat,
		       c[i].name);

	nt_error err;
	nt_rules *r = parse_str("  lock\t*x*   # trailing comment\n", &err);
	ok(r && MATCH(r, "axb") == NT_CAT_LOCK, "blanks around fields and a trailing comment");
	nt_rules_free(r);
	r = parse_str("cpu *a*\r\n# comment\r\n\r\nlock *b*\r\n", &err);
	ok(r && MATCH(r, "b") == NT_CAT_LOCK && MATCH(r, "a") == NT_CAT_CPU,
	   "CRLF line endings");
	nt_rules_free(r);
	r = parse_str("io *x*", &err);
	ok(r && MATCH(r, "x") == NT_CAT_IO, "last line without a newline");
	nt_rules_free(r);
	r = parse_str("", &err);
	ok(r && MATCH(r, "x") == -1, "empty rules text");
	nt_rules_free(r);
	r = NULL;
	ok(nt_rules_parse(&r, NULL, 0, NULL, NULL) == 0 && r && MATCH(r, "x") == -1,
	   "NULL text of length 0, NULL err");
	nt_rules_free(r);
}

/* Random patterns over {a, b, ?, *} and names over {a, b}, checked against ref_glob. */
static void test_category_glob_matches_reference(void)
{
	uint64_t s = 0x5eed1234abcdull;
	int bad = 0, n = 0;
	for (int iter = 0; iter < 20000; iter++) {
		char pat[12], name[12];
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t x = s;
		int pl = 1 + (int)(x % 8), nl = (int)((x >> 8) % 10);
		x >>= 16;
		for (int i = 0; i < pl; i++, x >>= 2)
			pat[i] = "ab?*"[x & 3];
		pat[pl] = '\0';
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		x = s;
		for (int i = 0; i < nl; i++, x >>= 1)
			name[i] = "ab"[x & 1];
		name[nl] = '\0';
		int got = glob(pat, name), want = ref_glob(pat, name);
		n++;
		if (got != want && bad++ < 5)
			printf("#   '%s' vs '%s': got %d, want %d\n", pat, name, got, want);
	}
	ok(bad == 0, "%d random pattern/name pairs agree with a backtracking matcher (%d differ)",
	   n, bad);
}

/* Whole rule files of random rules checked against the specification: for one frame,
 * the first outer rule (in file order) that matches, else the first rule that matches.
 * Literal runs of 4 to 12 bytes over an alphabet with '!' put keys in every prefilter
 * table (8-byte, '!', 5-byte, 4-byte, none), and the names embed instances of the
 * patterns at every offset modulo the probe strides. */
static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

static void random_pattern(uint64_t *s, char *out)
{
	static const char lit[] = "ab!_.X";
	int len = 0, pieces = 1 + (int)(lcg(s) % 4);
	if (lcg(s) % 2)
		out[len++] = '*';
	for (int p = 0; p < pieces; p++) {
		int run = (int)(lcg(s) % 13);
		for (int i = 0; i < run; i++)
			out[len++] = lcg(s) % 12 ? lit[lcg(s) % 6] : '?';
		if (p + 1 < pieces || lcg(s) % 2)
			out[len++] = '*';
	}
	if (len == 0)
		out[len++] = '*';
	out[len] = '\0';
}

/* A name matching pattern p (random fill for '*' and '?'), with random junk around it
 * when p allows. */
static void instantiate(uint64_t *s, const char *p, char *out)
{
	static const char fill[] = "ab!_.Xyz";
	int len = 0;
	for (; *p; p++) {
		if (*p == '*') {
			int k = (int)(lcg(s) % 6);
			for (int i = 0; i < k; i++)
				out[len++] = fill[lcg(s) % 8];
		} else if (*p == '?') {
			out[len++] = fill[lcg(s) % 8];
		} else {
			out[len++] = *p;
		}
	}
	out[len] = '\0';
}

static void test_category_prefilter_matches_reference(void)
{
	enum { NRULES = 40, NFILES = 150, NNAMES = 200 };
	uint64_t s = 0xfeedface1234ull;
	int bad = 0, checked = 0, matched = 0;
	char pats[NRULES][64], text[NRULES * 80], name[600];
	int cat[NRULES], outer[NRULES];
	for (int file = 0; file < NFILES; file++) {
		text[0] = '\0';
		for (int r = 0; r < NRULES; r++) {
			random_pattern(&s, pats[r]);
			cat[r] = (int)(lcg(&s) % NT_CAT_COUNT);
			outer[r] = lcg(&s) % 4 == 0;
			char line[100];
			snprintf(line, sizeof line, "%s%s %.63s\n", outer[r] ? "outer " : "",
				 nt_category_name(cat[r]), pats[r]);
			strcat(text, line);
		}
		nt_error err;
		nt_rules *R = parse_str(text, &err);
		if (!R) {
			bad++;
			printf("#   parse failed: %s\n", err.msg);
			continue;
		}
		for (int k = 0; k < NNAMES; k++) {
			if (lcg(&s) % 3) {
				char inner[200];
				instantiate(&s, pats[lcg(&s) % NRULES], inner);
				int pre = (int)(lcg(&s) % 9), post = (int)(lcg(&s) % 9);
				int len = 0;
				for (int i = 0; i < pre; i++)
					name[len++] = "ab!_.X"[lcg(&s) % 6];
				strcpy(name + len, inner);
				len += (int)strlen(inner);
				for (int i = 0; i < post; i++)
					name[len++] = "ab!_.X"[lcg(&s) % 6];
				name[len] = '\0';
				if (lcg(&s) % 2) /* the bare instance too: anchored patterns */
					strcpy(name, inner);
			} else {
				int len = (int)(lcg(&s) % 30);
				for (int i = 0; i < len; i++)
					name[i] = "ab!_.X"[lcg(&s) % 6];
				name[len] = '\0';
			}
			int want = -1, first_outer = -1;
			for (int r = 0; r < NRULES; r++) {
				if (!ref_glob(pats[r], name))
					continue;
				if (want < 0)
					want = cat[r];
				if (outer[r] && first_outer < 0)
					first_outer = cat[r];
			}
			if (first_outer >= 0)
				want = first_outer;
			const char *f[1] = { name };
			int got = nt_rules_match(R, f, 1);
			checked++;
			matched += want >= 0;
			if (got != want && bad++ < 5)
				printf("#   name '%s': got %d, want %d\n", name, got, want);
		}
		nt_rules_free(R);
	}
	ok(bad == 0, "%d names against %d random %d-rule files agree with the specification "
	   "(%d matched some rule; %d differ)", checked, NFILES, NRULES, matched, bad);
}

static void test_category_glob_pathological_is_fast(void)
{
	size_t n = 200000;
	char *name = malloc(n + 1);
	memset(name, 'a', n);
	name[n] = '\0';
	nt_error err;
	/* 200 segments: a backtracking matcher would never finish */
	char pat[1024] = "cpu ";
	for (int i = 0; i < 200; i++)
		strcat(pat, "*a");
	strcat(pat, "*b\n");
	const char *texts[] = { "cpu *a*a*a*a*a*b\n", "cpu *a?a?a?a?a?b*\n", pat };
	for (size_t t = 0; t < 3; t++) {
		nt_rules *r = parse_str(texts[t], &err);
		const char *f[1] = { name };
		double t0 = now_s();
		int m = r ? nt_rules_match(r, f, 1) : -2;
		double dt = now_s() - t0;
		ok(m == -1 && dt < 2.0, "pathological pattern %zu vs %zu x 'a': no match in %.3f s",
		   t + 1, n, dt);
		nt_rules_free(r);
	}
	free(name);
}

/* ------------------------------------------------------------------ errors */

static void test_category_parse_errors(void)
{
	static const char expected[] = "(expected cpu, lock, io, sleep, wait, gc, external or unknown)";
	char msg[300];

	snprintf(msg, sizeof msg, "t.rules: line 3: unknown category 'lok' %s", expected);
	expect_error("unknown category", "cpu *\n\nlok *x*\n", 15, "t.rules", msg, 7);
	snprintf(msg, sizeof msg, "line 1: unknown category 'Lock' %s", expected);
	expect_error("category case, no name", "Lock *x*", 8, NULL, msg, 0);
	snprintf(msg, sizeof msg,
		 "t.rules: line 1: unknown category 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' %s",
		 expected);
	expect_error("long category", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa *x*", 44, "t.rules",
		     msg, 0);
	expect_error("missing pattern", "# c\nlock\n", 9, "t.rules",
		     "t.rules: line 2: missing pattern after category 'lock'", 4);
	expect_error("missing pattern before a comment", "io  *x*\nwait   # no pattern\n", 28,
		     "t.rules", "t.rules: line 2: missing pattern after category 'wait'", 8);
	expect_error("outer without category", "outer\n", 6, "t.rules",
		     "t.rules: line 1: missing category after 'outer'", 0);
	expect_error("trailing garbage", "cpu *\nio *read* extra\n", 22, "t.rules",
		     "t.rules: line 2: unexpected 'extra' after the pattern (escape blanks in "
		     "patterns as '\\ ')", 6);
	expect_error("invalid escape", "sleep a\\qb\n", 11, "t.rules",
		     "t.rules: line 1: invalid escape '\\q' in pattern (only \\\\, \\*, \\?, \\#, "
		     "'\\ ' and '\\<tab>')", 0);
	expect_error("unfinished escape", "\n\nsleep ab\\\n", 12, "t.rules",
		     "t.rules: line 3: pattern ends with an unfinished escape '\\'", 2);
	expect_error("NUL byte", "cpu a\0b\n", 8, "t.rules", "t.rules: line 1: NUL byte in rule", 0);

	/* pattern length limit: 1024 bytes after unescaping */
	char *text = malloc(2100);
	strcpy(text, "wait ");
	memset(text + 5, 'a', 1024);
	text[5 + 1024] = '\0';
	nt_error err;
	nt_rules *r = parse_str(text, &err);
	ok(r != NULL, "a 1024-byte pattern is accepted");
	nt_rules_free(r);
	strcpy(text, "io *\n");
	strcat(text, "wait ");
	memset(text + 10, 'a', 1025);
	text[10 + 1025] = '\0';
	expect_error("overlong pattern", text, strlen(text), "t.rules",
		     "t.rules: line 2: pattern longer than 1024 bytes", 5);
	/* escapes count once: 1024 '\*' is 2048 bytes of text but a 1024-byte pattern */
	strcpy(text, "wait ");
	for (int i = 0; i < 1024; i++)
		strcat(text, "\\*");
	r = parse_str(text, &err);
	ok(r != NULL, "1024 escaped bytes are a 1024-byte pattern");
	nt_rules_free(r);
	free(text);

	/* size limit and API misuse */
	size_t big = (16u << 20) + 1;
	char *huge = malloc(big);
	memset(huge, '\n', big);
	nt_error_clear(&err);
	r = NULL;
	is_int(nt_rules_parse(&r, huge, big, "big.rules", &err), NT_ELIMIT, "text over 16 MiB");
	is_str(err.msg, "big.rules: rules text is 16777217 bytes, limit 16777216", "limit message");
	free(huge);
	nt_error_clear(&err);
	is_int(nt_rules_parse(NULL, "", 0, NULL, &err), NT_EINVAL, "NULL output pointer");
	nt_error_clear(&err);
	is_int(nt_rules_parse(&r, NULL, 3, NULL, &err), NT_EINVAL, "NULL text of nonzero length");
	nt_rules_free(NULL);
	ok(1, "nt_rules_free(NULL)");
}

static void test_category_load_errors(void)
{
	nt_error err;
	nt_rules *r = NULL;
	nt_error_clear(&err);
	is_int(nt_rules_load(&r, "/nonexistent/dir/x.rules", &err), NT_EIO, "missing file: NT_EIO");
	is_int(err.sys_errno, ENOENT, "missing file: ENOENT");
	ok(strstr(err.msg, "cannot open /nonexistent/dir/x.rules") != NULL,
	   "missing file: message names the path");

	char path[] = "/tmp/nt-test-category-XXXXXX";
	int fd = mkstemp(path);
	ok(fd >= 0, "temporary rules file");
	if (fd < 0)
		return;
	const char text[] = "# mine\nlock *x*\nsleep\n";
	ok(write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1), "write it");
	close(fd);
	char want[200];
	snprintf(want, sizeof want, "%s: line 3: missing pattern after category 'sleep'", path);
	nt_error_clear(&err);
	is_int(nt_rules_load(&r, path, &err), NT_EFORMAT, "bad file: NT_EFORMAT");
	is_str(err.msg, want, "bad file: message names the file and line");
	is_u64(err.offset, 16, "bad file: offset of line 3");
	unlink(path);
}

/* ------------------------------------------------------------------ benchmark */

/* Matches a synthetic but realistic workload: 4096 distinct frame names (managed frames of
 * several shapes, native frames, unresolved ones) in stacks of 32 frames whose leaf is a
 * blocking primitive in 1 stack out of 8 (the others run user code, so every frame is
 * tried). Prints frames/s and stacks/s; only checks that the results are stable. */
static void test_category_benchmark(void)
{
	enum { NFRAMES = 4096, DEPTH = 32, NSTACKS = 512 };
	static const char *const ns[] = { "MyApp.Orders", "MyApp.Billing.Internal",
					  "Microsoft.AspNetCore.Routing", "System.Linq",
					  "System.Collections.Generic", "Newtonsoft.Json.Serialization",
					  "System.Text.Json", "Npgsql.Internal" };
	static const char *const blocking[] = {
		"System.Private.CoreLib!System.Threading.Monitor.Enter(class System.Object)",
		"System.Private.CoreLib!System.Threading.WaitHandle.WaitOneNoCheck(int32)",
		"System.Net.Sockets!Interop+Sys.Receive(class System.Runtime.InteropServices.SafeHandle,unsigned int8*,int32,value class SocketFlags,int32*)",
		"libc.so.6!__futex_abstimed_wait_common64",
	};
	char **names = calloc(NFRAMES, sizeof *names);
	const char **stacks = calloc((size_t)NSTACKS * DEPTH, sizeof *stacks);
	uint64_t s = 42;
	for (int i = 0; i < NFRAMES; i++) {
		char buf[300];
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		unsigned k = (unsigned)(s >> 33);
		switch (k % 8) {
		case 6:
			snprintf(buf, sizeof buf, "libcoreclr.so+0x%x", k & 0xfffff);
			break;
		case 7:
			snprintf(buf, sizeof buf, "libapp.so!worker_step_%u", k % 977);
			break;
		default:
			snprintf(buf, sizeof buf,
				 "%s!%s.Type%u`1[System.__Canon].Method%u(class System.String,value class System.Threading.CancellationToken,int32)",
				 ns[k % 8], ns[(k >> 3) % 8], (k >> 6) % 200, (k >> 14) % 50);
			break;
		}
		names[i] = strdup(buf);
	}
	for (int st = 0; st < NSTACKS; st++) {
		for (int d = 0; d < DEPTH; d++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			stacks[st * DEPTH + d] = names[(s >> 33) % NFRAMES];
		}
		if (st % 8 == 0)
			stacks[st * DEPTH] = blocking[(st / 8) % 4];
	}

	nt_rules *R = NULL;
	nt_error err;
	nt_error_clear(&err);
	nt_rules_default(&R, &err);
	int first[NSTACKS];
	for (int st = 0; st < NSTACKS; st++)
		first[st] = nt_rules_match(R, stacks + st * DEPTH, DEPTH);
	int stable = 1;
	uint64_t frames = 0, nst = 0;
	double t0 = now_s(), dt;
	do {
		for (int st = 0; st < NSTACKS; st++) {
			if (nt_rules_match(R, stacks + st * DEPTH, DEPTH) != first[st])
				stable = 0;
			nst++;
			frames += DEPTH; /* outer rules exist: every frame is looked at */
		}
		dt = now_s() - t0;
	} while (dt < 0.3);
	/* single frames, as a caller memoizing per distinct frame name would use it */
	uint64_t single = 0;
	double t1 = now_s(), dt1;
	do {
		for (int i = 0; i < NFRAMES; i++)
			single += nt_rules_match(R, (const char *const *)&names[i], 1) >= -1;
		dt1 = now_s() - t1;
	} while (dt1 < 0.3);
	ok(stable, "benchmark: results are stable");

	/* nt_rules_match_memo (the profile's finish): the same category for every stack,
	 * each distinct name matched once; a second rule set given the same memo is matched
	 * without it, and still right */
	nt_rules_memo memo;
	memset(&memo, 0, sizeof memo);
	int same = 1;
	for (int pass = 0; pass < 2; pass++)
		for (int st = 0; st < NSTACKS; st++)
			same &= nt_rules_match_memo(R, &memo, stacks + st * DEPTH, DEPTH) == first[st];
	ok(same, "memo: the categories of nt_rules_match() for %d stacks, twice", NSTACKS);
	ok(memo.n > 0 && memo.n <= NFRAMES + 4, "memo: %zu names kept (at most the %d distinct)",
	   memo.n, NFRAMES + 4);
	nt_rules *R2 = parse_str("outer lock *Type1`1*\nio *Method2(*\n", &err);
	int same2 = R2 != NULL;
	size_t kept = memo.n;
	for (int st = 0; R2 && st < NSTACKS; st++)
		same2 &= nt_rules_match_memo(R2, &memo, stacks + st * DEPTH, DEPTH) ==
			 nt_rules_match(R2, stacks + st * DEPTH, DEPTH);
	ok(same2 && memo.n == kept, "memo: another rule set is matched without the memo");
	nt_rules_free(R2);
	nt_rules_memo_free(&memo);
	ok(memo.n == 0 && memo.res == NULL, "memo: freed and reset");
	nt_subsystems *S = NULL;
	if (nt_subsystems_default(&S, &err) == 0) {
		nt_rules_memo sm;
		memset(&sm, 0, sizeof sm);
		int32_t fa[DEPTH], fb[DEPTH];
		int ssame = 1, hits = 0;
		for (int pass = 0; pass < 2; pass++)
			for (int st = 0; st < NSTACKS; st++) {
				int a = nt_subsystems_match(S, stacks + st * DEPTH, DEPTH, fa);
				int b = nt_subsystems_match_memo(S, &sm, stacks + st * DEPTH, DEPTH,
								 pass ? fb : NULL);
				if (pass)
					ssame &= a == b && memcmp(fa, fb, sizeof fa) == 0;
				else
					ssame &= a == nt_subsystems_match(S, stacks + st * DEPTH,
									  DEPTH, NULL) && a == b;
				hits += a >= 0;
			}
		ok(ssame && hits > 0, "memo: nt_subsystems_match()'s results and frame subsystems "
		   "for %d stacks (%d with a subsystem)", 2 * NSTACKS, hits);
		nt_rules_memo_free(&sm);
		nt_subsystems_free(S);
	} else {
		ok(1, "memo: subsystems # SKIP built without the default subsystem rules");
	}
	char line[200];
	snprintf(line, sizeof line,
		 "benchmark (default rules): %.2f M frames/s in %d-frame stacks (%.0f k stacks/s), "
		 "%.2f M single-frame matches/s",
		 (double)frames / dt / 1e6, DEPTH, (double)nst / dt / 1e3,
		 (double)single / dt1 / 1e6);
	tap_diag(line);
	nt_rules_free(R);
	for (int i = 0; i < NFRAMES; i++)
		free(names[i]);
	free(names);
	free(stacks);
}

int main(void)
{
	test_category_names_round_trip();
	test_category_default_text_matches_file();

	nt_rules *R = NULL;
	nt_error err;
	nt_error_clear(&err);
	is_int(nt_rules_default(&R, &err), 0, "default rules parse");
	if (R) {
		test_category_default_lock(R);
		test_category_default_sleep(R);
		test_category_default_wait(R);
		test_category_default_io(R);
		test_category_default_gc(R);
		test_category_default_cpu_external(R);
		test_category_default_all_exercised();
	}
	nt_rules_free(R);

	test_category_precedence();
	test_category_glob_edge_cases();
	test_category_glob_matches_reference();
	test_category_prefilter_matches_reference();
	test_category_glob_pathological_is_fast();
	test_category_parse_errors();
	test_category_load_errors();
	test_category_benchmark();
	return tap_done();
}
