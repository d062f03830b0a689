// tiny.cc - C++ seed program for the fuzz corpora (see ../make-seeds.sh).
//
// Freestanding like tiny.c (no libstdc++, no exceptions, no RTTI), with
// what makes C++ DWARF different: namespaces, templates, a lambda, a
// virtual call, member functions inlined into each other, and mangled
// linkage names for the demangler.
namespace demo {

static volatile int sink;

template <typename T> struct Acc {
	T total = 0;
	inline void add(T v) { total += v * 3; }
	inline T get() const { return total; }
};

struct Shape {
	virtual int area() const = 0;
};

struct Square : Shape {
	int side;
	explicit Square(int s) : side(s) {}
	int area() const override { return side * side; }
};

template <typename T, typename F> inline T apply_all(T n, F f)
{
	Acc<T> acc;
	for (T i = 0; i < n; i++)
		acc.add(f(i));
	return acc.get();
}

__attribute__((noinline)) int compute(int n)
{
	int k = n + 1;
	return apply_all(n, [k](int i) { return i * k; });
}

__attribute__((noinline)) long compute_long(long n)
{
	return apply_all(n, [](long i) { return i ^ 5; });
}

__attribute__((noinline)) int measure(const Shape &s)
{
	return s.area();
}

} // namespace demo

extern "C" __attribute__((noreturn)) void _start(void)
{
	demo::Square sq(demo::sink + 3);
	int rc = demo::compute(5) + (int)demo::compute_long(7) +
		 demo::measure(sq);
	for (;;)
		__asm__ volatile("syscall" : : "a"(60), "D"(rc & 0x7f));
}
