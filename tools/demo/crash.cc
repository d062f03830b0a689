// crash.cc - the program `make demo` builds, crashes and symbolizes.
//
// It computes a basket total through a chain of inlined calls
// (main -> lambda -> checkout -> total -> line_price -> Price::cents) and,
// when run with the argument "crash", one item has no price: the null
// dereference happens four inline levels deep inside checkout().
//
// A SIGSEGV handler then prints what a profiler agent would ship: the raw
// stack as ELF virtual addresses of this executable (runtime PC minus the
// load bias), the faulting PC first, then return addresses.  It does no
// symbolization itself; tools/demo.sh gives those addresses to
// `sym addr2line`.  (snprintf() in a signal handler is not
// async-signal-safe; acceptable for a demo that dies right after.)
#include <execinfo.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

namespace shop {

struct Price {
	const int *cents_ptr;
	inline __attribute__((always_inline)) int cents() const
	{
		int c = *cents_ptr; // the crash: cents_ptr is null
		return c < 0 ? 0 : c;
	}
};

struct Item {
	const char *name;
	Price price;
	int quantity;
};

template <typename T>
inline __attribute__((always_inline)) int line_price(const T &item)
{
	return item.price.cents() * item.quantity;
}

inline __attribute__((always_inline)) int total(const Item *items, int n)
{
	int sum = 0;
	for (int i = 0; i < n; i++)
		sum += line_price(items[i]);
	return sum;
}

__attribute__((noinline)) int checkout(const Item *items, int n)
{
	int t = total(items, n);
	return t > 10000 ? t * 95 / 100 : t; // 5% off big baskets
}

} // namespace shop

static uintptr_t exe_bias, exe_lo, exe_hi;

// The main program is the first object dl_iterate_phdr() reports.
static int find_exe(struct dl_phdr_info *info, size_t, void *)
{
	exe_bias = info->dlpi_addr;
	exe_lo = UINTPTR_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = exe_bias + ph->p_vaddr;
		if (lo < exe_lo)
			exe_lo = lo;
		if (lo + ph->p_memsz > exe_hi)
			exe_hi = lo + ph->p_memsz;
	}
	return 1;
}

static void say(const char *s)
{
	ssize_t r = write(STDERR_FILENO, s, strlen(s));
	(void)r;
}

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = (ucontext_t *)ctx;
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	void *stack[32];
	char line[128];
	int n = backtrace(stack, 32), i, k = 0;

	snprintf(line, sizeof(line),
		 "crash: signal %d, fault address %p; raw stack of this "
		 "executable (ELF addresses):\n", sig, si->si_addr);
	say(line);
	snprintf(line, sizeof(line), "#%d pc 0x%lx\n", k++,
		 (unsigned long)(pc - exe_bias));
	say(line);
	// Frames above the handler and the signal trampoline: after the
	// faulting PC, return addresses.
	for (i = 0; i < n && (uintptr_t)stack[i] != pc; i++)
		;
	for (i++; i < n; i++) {
		uintptr_t a = (uintptr_t)stack[i];
		if (a < exe_lo || a >= exe_hi)
			continue;
		snprintf(line, sizeof(line), "#%d ret 0x%lx\n", k++,
			 (unsigned long)(a - exe_bias));
		say(line);
	}
	_exit(128 + sig);
}

int main(int argc, char **argv)
{
	static const int apple = 120, bread = 250;
	bool crash = argc > 1 && strcmp(argv[1], "crash") == 0;
	shop::Item basket[] = {
		{ "apple", { &apple }, 3 },
		{ "bread", { crash ? nullptr : &bread }, 1 },
	};
	struct sigaction sa;
	void *warm[4];

	dl_iterate_phdr(find_exe, nullptr);
	backtrace(warm, 4); // loads libgcc_s now, not in the handler
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, nullptr);

	auto pay = [&](int n) { return shop::checkout(basket, n); };
	printf("total: %d cents\n", pay(2));
	return 0;
}
