/* common.c - shared tool plumbing: --help from the option table, error printing,
 * exit codes, and the final stdout check (as perf's run_builtin does). */
#include "common.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void tool_getopt_tables(const tool *t, struct option **longopts, char **shortopts)
{
	size_t n = 0;
	while (t->opts[n].name)
		n++;
	static struct option lo[128];
	static char so[256];
	size_t k = 0, s = 0;
	for (size_t i = 0; i < n && i < 127; i++) {
		lo[k].name = t->opts[i].name;
		lo[k].has_arg = t->opts[i].has_arg;
		lo[k].flag = NULL;
		lo[k].val = t->opts[i].val;
		k++;
		if (t->opts[i].val > 0 && t->opts[i].val < 128 && s < sizeof so - 3) {
			so[s++] = (char)t->opts[i].val;
			if (t->opts[i].has_arg == required_argument)
				so[s++] = ':';
		}
	}
	memset(&lo[k], 0, sizeof lo[k]);
	so[s] = '\0';
	*longopts = lo;
	*shortopts = so;
}

void tool_help(const tool *t)
{
	printf("Usage: %s %s\n%s\n\nOptions:\n", t->prog, t->usage, t->summary);
	for (const tool_opt *o = t->opts; o->name; o++) {
		char left[64];
		if (o->val > 0 && o->val < 128)
			snprintf(left, sizeof left, "-%c, --%s%s%s", o->val, o->name, o->arg ? " " : "",
				 o->arg ? o->arg : "");
		else
			snprintf(left, sizeof left, "    --%s%s%s", o->name, o->arg ? " " : "",
				 o->arg ? o->arg : "");
		printf("  %-28s %s\n", left, o->help);
	}
	printf("\nExit status: 0 ok, 1 usage error, 2 bad input, 3 system error, 4 internal "
	       "error.\nSee %s(1) for details.\n",
	       t->prog);
}

void tool_version(const tool *t)
{
	printf("%s (libnettrace) %s\n", t->prog, NT_VERSION_STRING);
}

int tool_usage_error(tool *t, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", t->prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", t->prog);
	if (t->rc < EXIT_USAGE)
		t->rc = EXIT_USAGE;
	return EXIT_USAGE;
}

int tool_exit_code(int code)
{
	switch (code) {
	case NT_OK: return EXIT_OK;
	case NT_EFORMAT: case NT_ETRUNC: case NT_EUNSUPPORTED: case NT_ELIMIT: return EXIT_BADINPUT;
	case NT_EINVAL: return EXIT_USAGE;
	case NT_EIO: case NT_ENOMEM: case NT_ESQL: return EXIT_SYSTEM;
	default: return EXIT_INTERNAL;
	}
}

int tool_error(tool *t, const char *file, const nt_error *err)
{
	fprintf(stderr, "%s: ", t->prog);
	if (file)
		fprintf(stderr, "%s: ", file);
	if (err->offset != NT_NO_OFFSET)
		fprintf(stderr, "at byte %" PRIu64 " (0x%" PRIx64 "): ", err->offset, err->offset);
	fprintf(stderr, "%s\n", err->msg[0] ? err->msg : nt_strerror(err->code));
	int ec = tool_exit_code(err->code);
	if (ec > t->rc)
		t->rc = ec;
	return ec;
}

void tool_warn(tool *t, const char *file, uint64_t offset, const char *msg)
{
	fprintf(stderr, "%s: ", t->prog);
	if (file)
		fprintf(stderr, "%s: ", file);
	if (offset != NT_NO_OFFSET)
		fprintf(stderr, "at byte %" PRIu64 " (0x%" PRIx64 "): ", offset, offset);
	fprintf(stderr, "warning: %s\n", msg);
}

int tool_finish(tool *t)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "%s: cannot write to standard output: %s\n", t->prog, strerror(errno));
		return EXIT_SYSTEM;
	}
	return t->rc;
}
