/*
 * tiny.c - seed program for the fuzz corpora (see ../make-seeds.sh).
 *
 * Freestanding (-nostdlib -static), so the binary stays a few KB: its own
 * _start and exit system call, no libc.  It has what the table builder
 * handles: inline chains three deep, a function split into a hot and a
 * .cold part, recursion, a lexical block, a static function, a global
 * table and a function in its own section (dropped by --gc-sections,
 * which leaves a tombstone in the DWARF).
 */
static volatile int sink;
int table[16] = { 3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3 };

static inline __attribute__((always_inline)) int leaf(int x)
{
	return x * 7 + table[x & 15];
}

static inline __attribute__((always_inline)) int middle(int x)
{
	int r = leaf(x + 1);

	if (r & 1)
		r += leaf(r);
	return r;
}

static inline __attribute__((always_inline)) int outer(int x)
{
	return middle(x) + middle(x * 3);
}

__attribute__((noinline, cold)) static int rare(int x)
{
	sink = x;
	return -x;
}

__attribute__((noinline)) int hot(int x)
{
	if (__builtin_expect(x > 1000, 0))
		return rare(x);
	{
		int local = outer(x);

		sink = local;
		return local;
	}
}

__attribute__((noinline)) int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) int unused_gc(int x)
{
	return x + 42;
}

int main_(int argc);
int main_(int argc)
{
	int s = 0;

	for (int i = 0; i < argc + 3; i++)
		s += hot(i) + fib(i);
	return s & 0x7f;
}

__attribute__((noreturn)) void _start(void);
__attribute__((noreturn)) void _start(void)
{
	int rc = main_(1);

	for (;;)
		__asm__ volatile("syscall" : : "a"(60), "D"(rc));
}
