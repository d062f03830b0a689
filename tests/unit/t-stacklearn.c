/*
 * t-stacklearn.c - the learned stack copy sizes of the off-CPU agent
 * (tools/agent/stacklearn.c), without BPF: the safe start, learning
 * after STACKLEARN_EVENTS whole unwinds, raises, a cut and its growth
 * (and a cut already grown from), a copy short of its cap (the stack's
 * top) not taken for a cut, the floor and ceiling, forgetting with
 * colliding pids, and the table's bound.
 */
#include <errno.h>

#include "tap.h"
#include "agent/stacklearn.h"
#include <linux/types.h>
#include "agent/bpf/offcpu_event.h"
#include "base.h"

static int cuts;	/* whole unwinds said to be cut: must stay 0 */

/* @n whole unwinds of @pid needing @used bytes of a copy of @cap;
 * returns the last non-zero size given, or 0. */
static uint32_t whole(struct stacklearn *l, int32_t pid, uint32_t cap,
		      uint64_t used, int n)
{
	uint32_t got = 0, s;
	bool cut;

	for (int i = 0; i < n; i++) {
		s = stacklearn_seen(l, pid, cap, cap, true, used, false, &cut);
		if (s)
			got = s;
		cuts += cut;
	}
	return got;
}

int main(void)
{
	struct stacklearn *l;
	struct stacklearn_stats st;
	bool cut;

	CHECK_ERR(stacklearn_new(2048, 1024, &l), -EINVAL);
	CHECK(stacklearn_new(1024, 8192, &l) == 0);
	CHECK(stacklearn_fit(l, 0) == 1024);
	CHECK(stacklearn_fit(l, 704) == 1536);	/* 704+352+256 = 1312 */
	CHECK(stacklearn_fit(l, 100000) == 8192);

	/* Safe start: the ceiling until STACKLEARN_EVENTS whole ones. */
	CHECK(stacklearn_size(l, 7) == 8192);
	CHECK(whole(l, 7, 8192, 600, STACKLEARN_EVENTS - 1) == 0);
	CHECK(stacklearn_size(l, 7) == 8192);
	CHECK(whole(l, 7, 8192, 704, 1) == 1536);
	CHECK(stacklearn_size(l, 7) == 1536);
	/* A deeper whole stack raises it at once. */
	CHECK(whole(l, 7, 1536, 1200, 1) == stacklearn_fit(l, 1200));
	/* A copy short of its cap (the top of the stack) is no cut. */
	CHECK(stacklearn_seen(l, 7, 2048, 900, false, 0, true, &cut) == 0);
	CHECK(!cut);
	/* A cut: flagged, back to the ceiling; a second one (copied before
	 * the growth) only counted. */
	CHECK(stacklearn_seen(l, 7, 2048, 2048, false, 0, true, &cut) ==
	      8192);
	CHECK(cut);
	CHECK(stacklearn_seen(l, 7, 2048, 2048, false, 0, true, &cut) == 0);
	CHECK(cut);
	/* Learned again: at least fit(2048) even if the whole ones were
	 * shallow. */
	CHECK(whole(l, 7, 8192, 500, STACKLEARN_EVENTS) ==
	      stacklearn_fit(l, 2048));
	/* Running off a copy of the ceiling is no cut of ours. */
	CHECK(stacklearn_seen(l, 8, 8192, 8192, false, 0, true, &cut) == 0);
	CHECK(!cut);

	stacklearn_stats(l, &st);
	CHECK(st.cut == 2 && st.grown == 1 && st.raised == 1);
	CHECK(st.procs == 2 && st.learned == 1);
	CHECK(st.min_size == stacklearn_fit(l, 2048));

	/* Forget among colliding pids (all land on nearby slots). */
	for (int32_t p = 100; p < 100 + 3 * OFFCPU_LEARN_PROCS / 4; p++)
		whole(l, p, 8192, 300, STACKLEARN_EVENTS);
	for (int32_t p = 100; p < 100 + 3 * OFFCPU_LEARN_PROCS / 4; p += 2)
		stacklearn_forget(l, p);
	{
		int bad = 0;

		for (int32_t p = 100; p < 100 + 3 * OFFCPU_LEARN_PROCS / 4;
		     p++)
			bad += stacklearn_size(l, p) !=
			       (p % 2 ? 1024u : 8192u);
		CHECK(bad == 0);
	}
	/* The bound: past OFFCPU_LEARN_PROCS processes, untracked. */
	for (int32_t p = 100000; p < 100000 + OFFCPU_LEARN_PROCS; p++)
		whole(l, p, 8192, 300, 1);
	stacklearn_stats(l, &st);
	CHECK(st.procs == OFFCPU_LEARN_PROCS);
	CHECK(st.untracked > 0);
	CHECK(cuts == 0);
	stacklearn_free(l);
	return tap_done();
}
