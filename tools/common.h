/* SPDX-License-Identifier: MIT */
/* common.h - what every nettrace-* tool shares: option table -> --help, error printing
 * with "prog: file: at byte N (0xN): message", return code -> exit code, stdout check.
 * Tools only call functions declared in nettrace.h and here. */
#ifndef NT_TOOLS_COMMON_H
#define NT_TOOLS_COMMON_H
#include <getopt.h>
#include <stdio.h>

#include "nettrace.h"

/* Exit codes (the EXIT STATUS section of doc/man/nettrace-X.1). */
enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_BADINPUT = 2, EXIT_SYSTEM = 3, EXIT_INTERNAL = 4 };

/* One row of a tool's option table: the getopt_long entry plus help text. */
typedef struct tool_opt {
	const char *name;  /* long name */
	int has_arg;       /* no_argument / required_argument / optional_argument */
	int val;           /* short option char or a code >= 256 */
	const char *arg;   /* argument name for help, or NULL */
	const char *help;
} tool_opt;

typedef struct tool {
	const char *prog;
	const char *usage;       /* "[OPTIONS] FILE..." */
	const char *summary;     /* one line */
	const tool_opt *opts;    /* terminated by {NULL} */
	int verbose;
	int rc;                  /* worst exit code so far */
} tool;

/* Builds the getopt tables from t->opts (static storage, one tool per process). */
void tool_getopt_tables(const tool *t, struct option **longopts, char **shortopts);
/* The same tables for getopt_long with a ':' first (a missing argument is reported as
 * ':', for tool_bad_option) and extra appended; sets opterr = 0 so that getopt's own
 * messages (which would name the libtool wrapper's argv[0]) stay quiet. */
const char *tool_getopt_colon(const tool *t, struct option **longopts, const char *extra);
/* tool_getopt_colon() for a tool that runs a command: a '+' first as well, so that
 * getopt_long stops at the command and leaves the command's own options to it. */
const char *tool_getopt_cmd(const tool *t, struct option **longopts);
/* A decimal integer in [lo, hi] and nothing else (no sign, no space): 0, else -1. */
int tool_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
/* The argument of -p PID: a decimal process id from 1 to INT32_MAX, as strtol() reads it.
 * 0 with *out set; else prints "prog: bad pid 'S'" (tool_usage_error) and returns
 * EXIT_USAGE. */
int tool_parse_pid(tool *t, const char *s, long *out);
void tool_help(const tool *t);
void tool_version(const tool *t);
/* Prints "prog: message" + "Try 'prog --help'." and returns EXIT_USAGE. */
int tool_usage_error(tool *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The one wording of a bad command-line option, after getopt_long() returned c ('?' or,
 * with shortopts starting with ':', ':' for a missing argument): "unrecognized option
 * '--x'", "invalid option '-x'", "option '--x' requires an argument"; exit code 1. */
int tool_bad_option(tool *t, int c, char **argv);
/* Prints an nt_error for file (NULL = none) and records its exit code; returns it. */
int tool_error(tool *t, const char *file, const nt_error *err);
/* Prints a warning "prog: file: at byte N (0xN): warning: msg". */
void tool_warn(tool *t, const char *file, uint64_t offset, const char *msg);
/* Maps an nt_errcode to an exit code. */
int tool_exit_code(int code);
/* "prog: cannot open FILE: reason" (the one wording of every tool) with exit code 3;
 * mode "r" or "w" only matters for the message of a directory. Returns EXIT_SYSTEM. */
int tool_open_error(tool *t, const char *path, const char *mode);
/* Closes an output file opened by the tool; on failure prints "prog: cannot write FILE:
 * reason", records exit code 3 and returns it; else 0. */
int tool_close_output(tool *t, FILE *fp, const char *path);
/* Columns of the terminal fp writes to: COLUMNS when set to a number, else the terminal's
 * width (TIOCGWINSZ) when fp is one, else 0 (no limit). */
unsigned tool_term_width(FILE *fp);
/* Flushes and checks stdout; returns the final exit code. */
int tool_finish(tool *t);

/* ---- time ---- */

/* Seconds on the monotonic clock. */
double tool_mono_s(void);
/* A duration: "10s", "500ms", "2m" (or "2min"), "1h", "1.5" (seconds); < 0 when it is not
 * one (callers reject 0 and their own minimum). */
double tool_parse_duration(const char *s);

/* ---- progress of long reads ---- */

/* A line on stderr, rewritten in place, while a file is read: "prog: FILE: 45% of 1.2 GB,
 * 80 MB/s" (bytes only when the size is unknown: a pipe, compressed input). Shown when
 * stderr is a terminal and the file takes more than a second; NETTRACE_PROGRESS=1 shows
 * it always (from the first update, e.g. in a CI log), =0 never. Erased when done. */
typedef struct tool_progress {
	const char *prog, *file;
	uint64_t total;     /* file size, 0 = unknown */
	double start, last; /* seconds (monotonic) */
	int mode;           /* 0 never, 1 always, 2 terminal after a second */
	int shown;
} tool_progress;

/* Starts the progress of one file (path "-": standard input). */
void tool_progress_begin(tool_progress *pg, const tool *t, const char *path);
/* An nt_progress_fn: ctx is the tool_progress. */
void tool_progress_update(void *ctx, uint64_t offset);
/* Erases the line if one is shown. */
void tool_progress_end(tool_progress *pg);

/* ---- options shared by the profile tools (fold, tree, flame, sql) ---- */

/* Option codes >= 256 for long-only profile options. */
enum {
	OPT_UNIT = 256, OPT_COMPAT, OPT_PER_THREAD, OPT_THREAD, OPT_RANGE, OPT_CATEGORY,
	OPT_CATEGORY_FRAME, OPT_MANAGED_ONLY, OPT_NO_MODULE, OPT_RULES, OPT_SUBSYSTEMS,
	OPT_SUBSYSTEM_FRAME, OPT_SYMBOLS, OPT_PID, OPT_PROCESS, OPT_THREAD_TIME, OPT_HIDE_IDLE,
	OPT_COLLAPSE_UNRESOLVED, OPT_NO_COLLAPSE_UNRESOLVED, OPT_FOCUS, OPT_EXCLUDE, OPT_GROUP,
	OPT_FOLD_PAT, OPT_NO_SIGNATURE, OPT_NO_DEMANGLE, OPT_NO_DEFAULT_RULES, OPT_JOBS,
	OPT_PROFILE_LAST
};

/* --symbols DIR (repeatable): where managed PDBs and assemblies are looked for first,
 * before the directories of NETTRACE_SYMBOL_PATH (':'-separated) and the recorded paths. */
#define TOOL_SYMBOLS_OPT                                                                   \
	{"symbols", required_argument, OPT_SYMBOLS, "DIR",                                   \
	 "look for .NET PDBs and assemblies in DIR (repeatable; NETTRACE_SYMBOL_PATH)"}

/* Rows of the thread and symbol options shared by every profile tool. */
#define TOOL_THREAD_OPTS                                                                   \
	{"hide-idle", no_argument, OPT_HIDE_IDLE, NULL,                                      \
	 "drop the threads never on a CPU (cpu + running under 1% of their time)"},              \
	{"collapse-unresolved", no_argument, OPT_COLLAPSE_UNRESOLVED, NULL,                  \
	 "merge each run of unresolved frames ('?!?') into one '[unresolved]' frame"},       \
	{"no-collapse-unresolved", no_argument, OPT_NO_COLLAPSE_UNRESOLVED, NULL,            \
	 "keep every unresolved frame"},                                                     \
	{"jobs", required_argument, OPT_JOBS, "N",                                           \
	 "threads (1: decode and aggregate on one; default $NETTRACE_JOBS, else the CPUs)"}

/* --rules FILE adds to the built-in rules; --no-default-rules drops those. */
#define TOOL_RULES_OPTS                                                                    \
	{"rules", required_argument, OPT_RULES, "FILE",                                      \
	 "category rules tried before the built-in ones (nettrace-rules(5))"},              \
	{"no-default-rules", no_argument, OPT_NO_DEFAULT_RULES, NULL,                        \
	 "no built-in category rules: only those of --rules (if any)"}

/* Native frames keep their mangled C++/Rust names. */
#define TOOL_DEMANGLE_OPT                                                                  \
	{"no-demangle", no_argument, OPT_NO_DEMANGLE, NULL,                                  \
	 "keep C++ and Rust function names mangled (_ZN...)"}

/* Stack selection options (libtrace/select.c), for the tools that show stacks. */
#define TOOL_SELECT_OPTS                                                                   \
	{"focus", required_argument, OPT_FOCUS, "RE",                                        \
	 "only stacks through a frame matching RE (regex, any case)"},                      \
	{"exclude", required_argument, OPT_EXCLUDE, "RE",                                    \
	 "drop stacks through a frame matching RE"},                                        \
	{"group", required_argument, OPT_GROUP, "PAT->NAME",                                 \
	 "rename frames matching PAT to NAME, merging runs ('=>': entry group)"},           \
	{"fold", required_argument, OPT_FOLD_PAT, "PAT",                                     \
	 "remove frames matching PAT, their time going to the caller"},                     \
	{"no-signature", no_argument, OPT_NO_SIGNATURE, NULL,                                \
	 "drop argument lists from frame names (overloads merge)"}

/* Subsystem options, for the tools that show subsystems (not in TOOL_PROFILE_OPTS: each
 * tool lists the rows it documents). --subsystems turns classification on. */
#define TOOL_SUBSYSTEMS_OPT                                                                \
	{"subsystems", required_argument, OPT_SUBSYSTEMS, "FILE",                            \
	 "subsystem rules instead of the built-in ones"}
#define TOOL_SUBSYSTEM_FRAME_OPT                                                           \
	{"subsystem-frame", required_argument, OPT_SUBSYSTEM_FRAME, "WHERE",                 \
	 "show the subsystem as a frame '[NAME]': leaf, root or none"}

/* Options for machine-wide Universal traces (dotnet-trace collect-linux, one-collect). */
#define TOOL_UNIVERSAL_OPTS                                                                \
	{"pid", required_argument, OPT_PID, "PID,...", "keep only these processes"},          \
	{"process", required_argument, OPT_PROCESS, "NAME", "keep only processes named NAME"}, \
	{"thread-time", no_argument, OPT_THREAD_TIME, NULL,                                  \
	 "add blocked time from context switches (cswitch) to the CPU samples"}

#define TOOL_PROFILE_OPTS                                                                  \
	{"unit", required_argument, OPT_UNIT, "UNIT", "weight unit: samples, ns, us or ms"},  \
	{"compat", required_argument, OPT_COMPAT, "MODE",                                    \
	 "weighting: none (inferred interval), pyroscope or traceevent"},                   \
	{"per-thread", no_argument, OPT_PER_THREAD, NULL,                                    \
	 "add a root frame per thread: 'NAME (TID)', or 'Thread (TID)' without a name"},     \
	{"thread", required_argument, OPT_THREAD, "TID|NAME,...",                            \
	 "keep only these threads: ids, names or globs ('worker-*')"},                       \
	{"range", required_argument, OPT_RANGE, "A..B",                                      \
	 "keep samples in a time range (1.5s..3s, 200ms.., ..2s, ts:RAW..ts:RAW)"},          \
	{"category", required_argument, OPT_CATEGORY, "CAT,...",                             \
	 "keep only these categories (cpu,ready,running,lock,io,...: nettrace-rules(5))"}, \
	{"category-frame", required_argument, OPT_CATEGORY_FRAME, "WHERE",                   \
	 "show the category as a frame: leaf, root or none"},                                \
	{"managed-only", no_argument, OPT_MANAGED_ONLY, NULL, "drop External (native) time"}, \
	{"no-module", no_argument, OPT_NO_MODULE, NULL, "drop 'Module!' from frame names"},   \
	TOOL_RULES_OPTS,                                                                   \
	TOOL_THREAD_OPTS

/* What the shared profile options set. */
typedef struct profile_args {
	nt_profile_opts popts;
	nt_fold_opts fopts;
	int unit_set;
	uint64_t *threads;       /* owned */
	uint64_t *pids;          /* owned: --pid */
	char **thread_patterns;  /* owned: --thread names and globs */
	size_t nthread_patterns;
	nt_rules *rules;         /* owned */
	const char *rules_path;
	nt_subsystems *subsystems; /* owned: --subsystems FILE */
	const char *subsystems_path;
	char *symbols;           /* owned: --symbols DIRs joined by ':' */
	nt_native_opts nopts;    /* popts.native points here once profile_load() ran */
	nt_select *select;       /* owned: --focus, --exclude, --group, --fold, --no-signature */
	int select_rewrites;     /* --group, --fold or --no-signature given */
	int no_demangle;         /* --no-demangle: NT_NATIVE_NO_DEMANGLE in nopts */
	int no_default_rules;    /* --no-default-rules */
	unsigned jobs;           /* --jobs N, 0 not given (then NETTRACE_JOBS, else the CPUs) */
} profile_args;

void profile_args_init(profile_args *a);
void profile_args_free(profile_args *a);
/* Handles one shared option; returns 1 if it was one (0 otherwise), or an exit code < 0
 * negated on error (-EXIT_USAGE, -EXIT_BADINPUT...) after printing the message.
 * OPT_SUBSYSTEMS loads the file (a bad rule exits 2 with "prog: FILE: at byte N (0xN):
 * line L: ...") and sets popts.subsystems; OPT_SUBSYSTEM_FRAME sets fopts.subsystem_frame
 * and popts.subsystems. */
int profile_args_handle(tool *t, profile_args *a, int code, const char *arg);
/* The threads to give nt_profile_add_trace() (nt_profile_opts.jobs): --jobs, else
 * NETTRACE_JOBS, else the CPUs this process may run on (sched_getaffinity), and 1 when an
 * input is not a regular file (standard input, a pipe: the decoding thread could block on
 * it forever). Returns 0, or an exit code (message printed). */
int profile_jobs(tool *t, const profile_args *a, char *const *files, int nfiles,
		 unsigned *jobs);
/* Reads every input (path or "-") into a new profile; prints reader warnings (and why
 * modules lack symbols or lines: a PDB that does not match or is malformed); returns 0
 * or an exit code (message printed). */
int profile_load(tool *t, profile_args *a, char **files, int nfiles, nt_profile **out);

/* Samples (and weight) the profile's selection keeps after every filter. When none, prints
 * "prog: no samples selected (...)" with the sessions' time span on stderr. */
uint64_t profile_check_selection(tool *t, const profile_args *a, nt_profile *p);

/* b bytes as "1.2 GB", "35 MB" or "200 kB"; fine: one more decimal for GB and MB
 * ("1.23 GB", "35.2 MB"). */
void tool_human_bytes(char *buf, size_t len, double b, int fine);

/* Writes all n bytes to fd (retrying EINTR): 0, or -1 on an error or a zero write. */
int tool_write_all(int fd, const void *p, size_t n);

/* StopTracing on a thread of its own (pthread_create(..., tool_stop_main, &stopper)): the
 * runtime answers only once the session's rundown has gone through the stream, which the
 * caller must keep reading meanwhile. rc and err say how it went. */
typedef struct tool_stopper {
	const char *sock;
	uint64_t session;
	int timeout_ms;
	int rc;
	nt_error err;
} tool_stopper;
void *tool_stop_main(void *arg);

/* Handles --help/--version (codes 'h' and 'V') for the standard rows. */
#define TOOL_STD_OPTS                                                                      \
	{"help", no_argument, 'h', NULL, "show this help and exit"},                       \
	{"version", no_argument, 'V', NULL, "show the version and exit"}
#endif
