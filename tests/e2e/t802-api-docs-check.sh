#!/bin/sh
# SPDX-License-Identifier: MIT
# t802-api-docs-check.sh - tests/build/check-api-docs.sh (every public function's comment
# states ownership, lifetime and errors) passes on the public headers and fails, naming
# the function and the missing part, on a header whose comments leave them out.
. "$top_srcdir/tests/e2e/lib.sh"

CHECK=$top_srcdir/tests/build/check-api-docs.sh

run sh "$CHECK"
is_rc 0 "the public headers pass"

cat >"$T/good.h" <<'H'
/* ---------------------------------------------------------------------------------------
 * Widgets. Thread safety: none.
 * ------------------------------------------------------------------------------------- */
typedef struct nt_widget nt_widget;
/* Creates a widget. Fails with NT_ENOMEM (*out NULL); free it with nt_widget_free(). */
NT_API int nt_widget_new(nt_widget **out, nt_error *err);
/* Frees w (accepts NULL). */
NT_API void nt_widget_free(nt_widget *w);
/* Its name; borrowed until nt_widget_free(), never NULL. */
NT_API const char *nt_widget_name(const nt_widget *w);
/* Count and item i (NULL out of range; borrowed until nt_widget_free()). */
NT_API size_t nt_widget_count(const nt_widget *w);
NT_API const char *nt_widget_at(const nt_widget *w, size_t i);
H
run sh "$CHECK" "$T/good.h"
is_rc 0 "a header that states every contract passes"

cat >"$T/bad.h" <<'H'
typedef struct nt_gadget nt_gadget;
/* Makes one. */
NT_API int nt_gadget_new(nt_gadget **out, nt_error *err);
/* Frees g. */
NT_API void nt_gadget_free(nt_gadget *g);
/* Its name. */
NT_API const char *nt_gadget_name(const nt_gadget *g);
/* Whether it is blue. */
NT_API int nt_gadget_blue(const nt_gadget *g);

NT_API int nt_gadget_paint(nt_gadget *g, int colour,
			   nt_error *err);
H
run sh "$CHECK" "$T/bad.h"
is_rc 1 "a header with undocumented contracts fails"
for want in \
	"nt_gadget_new: takes an nt_error but its comment says nothing of how it fails" \
	"nt_gadget_new: creates something but its comment does not say what frees it" \
	"nt_gadget_free: frees but its comment does not say that it accepts NULL" \
	"nt_gadget_name: returns a pointer but its comment does not say how long it lives" \
	"nt_gadget_name: returns a pointer but its comment does not say when it is NULL" \
	"nt_gadget_blue: returns int but its comment does not say what" \
	"bad.h:11: nt_gadget_paint: no comment above it" \
	"nt_gadget: handle without a \"Thread safety\" rule"; do
	if grep -qF "$want" "$T/out"; then
		pass "reported: $want"
	else
		fail "reported: $want"
		diag "$(cat "$T/out")"
	fi
done
done_testing
