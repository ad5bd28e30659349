/* common.h - what every nettrace-* tool shares: option table -> --help, error printing
 * with "prog: file: at byte N (0xN): message", return code -> exit code, stdout check.
 * Tools only call functions declared in nettrace.h and here. */
#ifndef NT_TOOLS_COMMON_H
#define NT_TOOLS_COMMON_H
#include <getopt.h>
#include <stdio.h>

#include "nettrace.h"

/* Exit codes (doc/man/*.1 EXIT STATUS). */
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
void tool_help(const tool *t);
void tool_version(const tool *t);
/* Prints "prog: message" + "Try 'prog --help'." and returns EXIT_USAGE. */
int tool_usage_error(tool *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints an nt_error for file (NULL = none) and records its exit code; returns it. */
int tool_error(tool *t, const char *file, const nt_error *err);
/* Prints a warning "prog: file: at byte N (0xN): warning: msg". */
void tool_warn(tool *t, const char *file, uint64_t offset, const char *msg);
/* Maps an nt_errcode to an exit code. */
int tool_exit_code(int code);
/* Flushes and checks stdout; returns the final exit code. */
int tool_finish(tool *t);
/* Handles --help/--version (codes 'h' and 'V') for the standard rows. */
#define TOOL_STD_OPTS                                                                      \
	{"help", no_argument, 'h', NULL, "show this help and exit"},                       \
	{"version", no_argument, 'V', NULL, "show the version and exit"}
#endif
