/*
 * broken.c - broken stacks in the views (broken.h): the tally of an
 * input's flagged stacks, the 2% decision, the warning with its cures,
 * and `sym diff`'s test of two profiles' flagged shares.
 *
 * The cures come from how each recorder flags a stack (docs/record.md,
 * "Flags"; docs/symprof.md, "The drain thread") and the options that
 * change it (sym record's -g, --max-depth, --stack-size,
 * --leaf-stack-size).  They are one table, by recorder and flag, so that
 * every view says the same thing; a mode this table does not know gets
 * the generic row.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

#include "broken.h"
#include "views.h"

/* How an input was recorded, as far as the cures go. */
enum recorder {
	REC_FP,		/* sym record -g fp */
	REC_DWARF,	/* sym record -g dwarf */
	REC_SYMPROF,	/* libsymprof (sym run, LD_PRELOAD) */
	REC_OTHER,	/* anything else, or not known */
	NREC
};

static const char *const flag_names[BROKEN_NKINDS] = {
	"truncated", "badreturn", "leaf", "unwind", "kernel", "unknown",
};

#define KERNEL_ONLY                                                        \
	"only kernel frames were captured, no user frame: these samples "  \
	"show where the kernel ran, not which user code called it"
#define UNKNOWN_FLAG                                                       \
	"a flag this version of sym does not know (a newer recorder's): "  \
	"the stack is likely wrong"
#define OTHER_UNWIND                                                       \
	"the recorder could not unwind the stack completely: record with "  \
	"sym record -g dwarf, which unwinds with CFI"

/* The index of each flag bit in enum sym_prof_stack_flags. */
enum { F_TRUNCATED, F_BADRETURN, F_LEAF, F_UNWIND, F_KERNEL };

static const char *const cures[NREC][BROKEN_NKINDS] = {
	[REC_FP] = {
		[F_TRUNCATED] = "the stack is deeper than the depth limit, "
			"127 frames in fp mode (the kernel's own): record with "
			"-g dwarf --max-depth N (up to 1023)",
		[F_BADRETURN] = "a return address lies in no executable "
			"mapping or follows no call instruction: the "
			"frame-pointer walk read data as frames, in code built "
			"without frame pointers: record with -g dwarf",
		[F_LEAF] = "the leaf function's caller could not be recovered "
			"from its CFI (or --leaf-stack-size 0 turned the repair "
			"off), so one caller may be missing: record with "
			"-g dwarf",
		[F_UNWIND] = "the frame-pointer chain cannot be shown "
			"complete: code built without frame pointers (most "
			"distributions' programs and libraries) breaks it: "
			"record with -g dwarf",
		[F_KERNEL] = KERNEL_ONLY,
		[BROKEN_UNKNOWN] = UNKNOWN_FLAG,
	},
	[REC_DWARF] = {
		[F_TRUNCATED] = "the stack is deeper than the depth limit "
			"(--max-depth, 127 frames by default): record with a "
			"larger --max-depth (up to 1023)",
		[F_BADRETURN] = "a return address lies in no executable "
			"mapping or follows no call instruction: wrong CFI, or "
			"code that rewrites return addresses (coroutines, "
			"hand-written assembly); no recording option cures it",
		[F_LEAF] = "the leaf function's caller may be missing",
		[F_UNWIND] = "the CFI unwind stopped before the outermost "
			"frame: either the binary has no CFI where it stopped "
			"(JIT code, assembly without CFI directives: give the "
			"recorder its debug file with .debug_frame, or build it "
			"with -fasynchronous-unwind-tables), or the stack is "
			"deeper than the copy (raise --stack-size, 8192 bytes by "
			"default, up to 63488)",
		[F_KERNEL] = KERNEL_ONLY,
		[BROKEN_UNKNOWN] = UNKNOWN_FLAG,
	},
	[REC_SYMPROF] = {
		[F_TRUNCATED] = "the stack is deeper than libsymprof's fixed "
			"limit of 256 frames: record with sym record -g dwarf "
			"--max-depth N (up to 1023)",
		[F_BADRETURN] = "a return address lies in no executable "
			"mapping or follows no call instruction: libsymprof's "
			"frame-pointer walk read data as frames, in code built "
			"without frame pointers: record with sym record "
			"-g dwarf",
		[F_LEAF] = "callers are missing where frameless code needed "
			"more stack than libsymprof copies: record with "
			"sym record -g dwarf",
		[F_UNWIND] = "libsymprof could not follow the stack to the "
			"thread's start: code built without frame pointers "
			"(most distributions' libraries) breaks it: record with "
			"sym record -g dwarf",
		[F_KERNEL] = KERNEL_ONLY,
		[BROKEN_UNKNOWN] = UNKNOWN_FLAG,
	},
	[REC_OTHER] = {
		[F_TRUNCATED] = "the stack hit the recorder's depth limit, so "
			"outer frames are missing: raise the limit (sym record "
			"-g dwarf --max-depth N)",
		[F_BADRETURN] = OTHER_UNWIND,
		[F_LEAF] = OTHER_UNWIND,
		[F_UNWIND] = OTHER_UNWIND,
		[F_KERNEL] = KERNEL_ONLY,
		[BROKEN_UNKNOWN] = UNKNOWN_FLAG,
	},
};

static enum recorder recorder_of(const char *tool, const char *mode)
{
	static const char *const symprof_modes[] = {
		"thread-timer", "process-timer", "wall",
	};

	if (mode && strcmp(mode, "fp") == 0)
		return REC_FP;
	if (mode && strcmp(mode, "dwarf") == 0)
		return REC_DWARF;
	if (tool && strcmp(tool, "libsymprof") == 0)
		return REC_SYMPROF;
	for (size_t i = 0; mode && i < sizeof(symprof_modes) /
					  sizeof(symprof_modes[0]); i++)
		if (strcmp(mode, symprof_modes[i]) == 0)
			return REC_SYMPROF;
	return REC_OTHER;
}

const char *broken_flag_name(unsigned kind)
{
	return kind < BROKEN_NKINDS ? flag_names[kind] : "?";
}

const char *broken_cure(const char *tool, const char *mode, unsigned kind)
{
	if (kind >= BROKEN_NKINDS)
		return UNKNOWN_FLAG;
	return cures[recorder_of(tool, mode)][kind];
}

bool broken_warns(const struct broken_tally *t)
{
	/* flagged / samples > BROKEN_WARN_PCT / 100, exactly. */
	return t->samples && (unsigned __int128)t->flagged * 100 >
			     (unsigned __int128)t->samples * BROKEN_WARN_PCT;
}

/* ---- the tally ---- */

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* One module's unwind samples (a map, named as the views name it). */
struct stop {
	const char *name;
	size_t len;
	uint64_t n;
};

static int cmp_stop(const void *x, const void *y)
{
	const struct stop *a = x, *b = y;
	int c = memcmp(a->name, b->name, a->len < b->len ? a->len : b->len);

	return c ? c : (a->len > b->len) - (a->len < b->len);
}

/*
 * The module most unwind samples stop in, from per-map counts @per_map
 * (index nmaps: outside every map).  Maps of one file in several
 * processes are one module: the counts are added up by name.
 */
static int pick_stop(const struct sym_prof *p, const uint64_t *per_map,
		     size_t nmaps, struct broken_tally *t)
{
	struct stop *s;
	size_t n = 0, i, j;

	s = calloc(nmaps + 1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (i = 0; i <= nmaps; i++) {
		if (!per_map[i])
			continue;
		s[n].name = views_module_name(i < nmaps ? sym_prof_map(p,
			(uint32_t)i) : NULL, &s[n].len);
		s[n++].n = per_map[i];
	}
	qsort(s, n, sizeof(*s), cmp_stop);
	for (i = 0; i < n; i = j) {
		uint64_t sum = 0;

		for (j = i; j < n && cmp_stop(&s[i], &s[j]) == 0; j++)
			sum = sat_add(sum, s[j].n);
		if (sum > t->stop_samples) {
			t->stop_samples = sum;
			snprintf(t->stop_module, sizeof(t->stop_module), "%.*s",
				 (int)(s[i].len < sizeof(t->stop_module) ?
				       s[i].len : sizeof(t->stop_module) - 1),
				 s[i].name);
		}
	}
	free(s);
	return 0;
}

int broken_tally_prof(const struct sym_prof *p, struct broken_tally *t)
{
	const struct sym_prof_header *h = sym_prof_header(p);
	size_t nmaps = sym_prof_nmaps(p), ns = sym_prof_nstacks(p);
	uint64_t *per_map = NULL;
	int err = 0;

	memset(t, 0, sizeof(*t));
	t->tool = h->tool;
	t->mode = h->mode;
	for (size_t i = 0; i < ns; i++) {
		const struct sym_prof_stack *s = sym_prof_stack(p, i);
		uint32_t m;

		t->samples = sat_add(t->samples, s->count);
		if (!s->flags)
			continue;
		t->flagged = sat_add(t->flagged, s->count);
		for (unsigned k = 0; k < SYM_PROF_NFLAGS; k++)
			if (s->flags & (1u << k))
				t->by_flag[k] = sat_add(t->by_flag[k],
							s->count);
		if (s->flags & SYM_PROF_UNKNOWN_FLAG)
			t->by_flag[BROKEN_UNKNOWN] =
				sat_add(t->by_flag[BROKEN_UNKNOWN], s->count);
		if (!(s->flags & SYM_PROF_UNWIND) || !s->nframes)
			continue;
		if (!per_map) {
			per_map = calloc(nmaps + 1, sizeof(*per_map));
			if (!per_map)
				return -ENOMEM;
		}
		/* Frames are leaf first: the last one is where it stopped. */
		m = s->frames[s->nframes - 1].map;
		if (m >= nmaps)
			m = (uint32_t)nmaps;
		per_map[m] = sat_add(per_map[m], s->count);
	}
	if (per_map)
		err = pick_stop(p, per_map, nmaps, t);
	free(per_map);
	return err;
}

/* ---- the warning ---- */

static double pct(uint64_t k, uint64_t n)
{
	return n ? 100.0 * (double)k / (double)n : 0;
}

/* The flags present in @t, most samples first (then in flag order). */
static unsigned order_flags(const struct broken_tally *t,
			    unsigned order[BROKEN_NKINDS])
{
	unsigned n = 0;

	for (unsigned k = 0; k < BROKEN_NKINDS; k++) {
		unsigned i;

		if (!t->by_flag[k])
			continue;
		i = n++;
		while (i > 0 && t->by_flag[order[i - 1]] < t->by_flag[k]) {
			order[i] = order[i - 1];
			i--;
		}
		order[i] = k;
	}
	return n;
}

void broken_list(const struct broken_tally *t, char *buf, size_t len)
{
	unsigned order[BROKEN_NKINDS], n = order_flags(t, order);
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (unsigned i = 0; i < n && used < len; i++) {
		int w = snprintf(buf + used, len - used, "%s%s %llu",
				 i ? ", " : "", flag_names[order[i]],
				 (unsigned long long)t->by_flag[order[i]]);

		if (w < 0)
			break;
		used += (size_t)w;
	}
}

void broken_add(struct broken_tally *sum, const struct broken_tally *t)
{
	/* An empty tally (folded input) says nothing; tool and mode stay
	 * when every other tally agrees. */
	if (!t->samples)
		return;
	if (!sum->samples) {
		sum->tool = t->tool;
		sum->mode = t->mode;
	} else {
		if (!sum->tool || !t->tool || strcmp(sum->tool, t->tool))
			sum->tool = NULL;
		if (!sum->mode || !t->mode || strcmp(sum->mode, t->mode))
			sum->mode = NULL;
	}
	sum->samples = sat_add(sum->samples, t->samples);
	sum->flagged = sat_add(sum->flagged, t->flagged);
	for (unsigned k = 0; k < BROKEN_NKINDS; k++)
		sum->by_flag[k] = sat_add(sum->by_flag[k], t->by_flag[k]);
	/* Where unwinds stop is per input: not summed. */
	sum->stop_module[0] = '\0';
	sum->stop_samples = 0;
}

bool broken_warn(FILE *f, const struct broken_tally *t, const char *input,
		 const char *shown)
{
	unsigned order[BROKEN_NKINDS], n = order_flags(t, order);
	enum recorder rec = recorder_of(t->tool, t->mode);

	if (!broken_warns(t))
		return false;
	fflush(stdout);
	fprintf(f, "%s: warning: '%s': %llu of %llu samples (%.2f%%) have "
		   "broken stacks", tool_prog(), input,
		(unsigned long long)t->flagged,
		(unsigned long long)t->samples, pct(t->flagged, t->samples));
	if (t->tool && t->mode)
		fprintf(f, ", recorded by %s in %s mode", t->tool, t->mode);
	else if (t->tool || t->mode)
		fprintf(f, ", recorded %s%s", t->tool ? "by " : "in mode ",
			t->tool ? t->tool : t->mode);
	if (shown)
		fprintf(f, "; %s", shown);
	fputs(":\n", f);
	for (unsigned i = 0; i < n; i++) {
		unsigned k = order[i];

		fprintf(f, "%s:   %s: %llu sample%s (%.2f%%)", tool_prog(),
			flag_names[k], (unsigned long long)t->by_flag[k],
			t->by_flag[k] == 1 ? "" : "s",
			pct(t->by_flag[k], t->samples));
		if (k == F_UNWIND && rec == REC_DWARF && t->stop_samples)
			fprintf(f, ", %llu of them stopping in %s",
				(unsigned long long)t->stop_samples,
				t->stop_module);
		fprintf(f, ": %s\n", broken_cure(t->tool, t->mode, k));
	}
	return true;
}

/* ---- sym diff ---- */

int broken_compare(const struct broken_tally *a, const struct broken_tally *b,
		   struct broken_cmp *out)
{
	struct stats_share sa, sb;
	struct broken_cmp c = { 0 };
	int err;

	if (!a->samples || !b->samples)
		return -EINVAL;
	err = stats_share_counts(a->flagged, a->samples, &sa);
	if (!err)
		err = stats_share_counts(b->flagged, b->samples, &sb);
	/* B - A, as sym diff's rows. */
	if (!err)
		err = stats_diff_between(&sb, &sa, BROKEN_DIFF_CONF,
					 STATS_NEWCOMBE, &c.d);
	if (err)
		return err;
	c.pa = sa.p;
	c.pb = sb.p;
	c.differ = c.d.differ;
	c.refuse = c.differ && (broken_warns(a) || broken_warns(b));
	*out = c;
	return 0;
}
