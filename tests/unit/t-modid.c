/*
 * t-modid.c - module IDs (libsym/modid.c, sym_file_module_id(),
 * sym_module_id()): the rule of docs/store.md, "Module IDs".
 *
 * Every expected value comes from outside the code under test:
 *  - SHA-256: the FIPS 180-2 appendix B vectors ("abc", the 448-bit
 *    message, one million 'a'), fed whole and in odd pieces;
 *  - the file ID: the OpenTelemetry profiler's own test vector
 *    (libpf/fileid_test.go, TestFileIDFromExecutableReader: the 9 bytes
 *    7f 'E' 'L' 'F' 00 01 02 03 04 give caf6e5907166ac76eef618e5f7f59cd9);
 *  - the go ID: SHA-256 of "symd-go-build-id\0" + a Go 1.19 build ID,
 *    computed with Python's hashlib;
 *  - a C program linked with --build-id=none, built here: its ID from
 *    Python's hashlib over the file; one with a build ID: readelf's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "modid.h"
#include "base.h"

static void hexof(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", p[i]);
}

/* SHA-256 of @msg fed in pieces of @step bytes (0: whole), in hex. */
static void sha_hex(const void *msg, size_t len, size_t step, char *out)
{
	struct symi_sha256 c;
	uint8_t sum[32];
	const uint8_t *p = msg;

	symi_sha256_init(&c);
	if (!step)
		step = len ? len : 1;
	for (size_t off = 0; off < len; off += step)
		symi_sha256_update(&c, p + off, len - off < step ? len - off
								  : step);
	symi_sha256_final(&c, sum);
	hexof(sum, sizeof(sum), out);
}

static void test_sha256(void)
{
	static const char m448[] =
		"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	static const size_t steps[] = { 0, 1, 3, 63, 64, 65 };
	char out[65], *million;

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		sha_hex("abc", 3, steps[i], out);
		CHECK(!strcmp(out, "ba7816bf8f01cfea414140de5dae2223"
				   "b00361a396177a9cb410ff61f20015ad"));
		sha_hex(m448, strlen(m448), steps[i], out);
		CHECK(!strcmp(out, "248d6a61d20638b8e5c026930c3e6039"
				   "a33ce45964ff2167f6ecedd419db06c1"));
	}
	sha_hex("", 0, 0, out);
	CHECK(!strcmp(out, "e3b0c44298fc1c149afbf4c8996fb924"
			   "27ae41e4649b934ca495991b7852b855"));
	million = malloc(1000000);
	if (!million) {
		tap_skip("one million 'a'", "no memory");
		return;
	}
	memset(million, 'a', 1000000);
	sha_hex(million, 1000000, 4096, out);
	CHECK(!strcmp(out, "cdc76e5c9914fb9281a1c7e284d73e67"
			   "f1809a48a497200e046d39ccc7112cd0"));
	free(million);
}

/* The OTel profiler's vector, in memory and through a file's fd. */
static void test_otel_vector(const char *dir)
{
	static const uint8_t data[] = { 0x7f, 'E', 'L', 'F', 0, 1, 2, 3, 4 };
	static const char want[] = "caf6e5907166ac76eef618e5f7f59cd9";
	uint8_t id[SYMI_MODID_LEN];
	char hex[2 * SYMI_MODID_LEN + 1], path[4096];
	int fd;

	symi_modid_file(data, sizeof(data), data, sizeof(data), sizeof(data),
			id);
	hexof(id, sizeof(id), hex);
	CHECK(!strcmp(hex, want));
	snprintf(path, sizeof(path), "%s/otel", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, data, sizeof(data)) == sizeof(data));
	memset(id, 0, sizeof(id));
	CHECK_ERR(symi_modid_fd(fd, sizeof(data), id), 0);
	hexof(id, sizeof(id), hex);
	CHECK(!strcmp(hex, want));
	/* A size past the end is a short read, not a wrong ID. */
	CHECK_ERR(symi_modid_fd(fd, sizeof(data) + 1, id), -EIO);
	if (fd >= 0)
		close(fd);
}

/* Append one 4-byte-aligned note to @buf at *@off. */
static void put_note(uint8_t *buf, size_t *off, const char *name,
		     uint32_t namesz, uint32_t type, const void *desc,
		     uint32_t descsz)
{
	uint32_t hdr[3] = { namesz, descsz, type };

	memcpy(buf + *off, hdr, sizeof(hdr));
	*off += sizeof(hdr);
	memcpy(buf + *off, name, namesz);
	*off += (namesz + 3) & ~3u;
	memcpy(buf + *off, desc, descsz);
	*off += (descsz + 3) & ~3u;
}

static void test_go_note(void)
{
	static const char goid[] =
		"D12GtFoGzq5Tiei9ye1s/X_K143NeEXtCP_-LaJFc/"
		"RWw0TPlG5cpuO4v5Q4Wf/6IIrSUuAJhYI2ODMDIFm";
	static const uint8_t gnu[20] = { 0xde, 0xad, 0xbe, 0xef };
	uint8_t notes[512] = { 0 }, id[SYMI_MODID_LEN];
	const uint8_t *d;
	char hex[2 * SYMI_MODID_LEN + 1];
	size_t off = 0, n = 0, withgo;

	/* An unrelated note first, then the Go one, as Go's linker lays
	 * them out (.note.go.buildid after others). */
	put_note(notes, &off, "Go\0\0", 4, 1, "pkg", 3);
	put_note(notes, &off, "Go\0\0", 4, SYMI_NT_GO_BUILDID, goid,
		 sizeof(goid) - 1);
	withgo = off;
	CHECK(symi_notes_find(notes, off, 4, "Go\0\0", 4, SYMI_NT_GO_BUILDID,
			      1024, &d, &n) == 0 &&
	      n == sizeof(goid) - 1 && !memcmp(d, goid, n));
	symi_modid_go(d, n, id);
	hexof(id, sizeof(id), hex);
	CHECK(!strcmp(hex, "52beceb3dff906b864259ff569c10fbf"));
	CHECK(symi_notes_find(notes, off, 4, "GNU", 4, SYMI_NT_GNU_BUILD_ID,
			      64, &d, &n) == -1);
	/* Cut inside the Go note's descriptor: not found, no overread. */
	CHECK(symi_notes_find(notes, withgo - 8, 4, "Go\0\0", 4,
			      SYMI_NT_GO_BUILDID, 1024, &d, &n) == -1);
	/* A descriptor over the limit is skipped. */
	CHECK(symi_notes_find(notes, off, 4, "Go\0\0", 4, SYMI_NT_GO_BUILDID,
			      16, &d, &n) == -1);
	/* A GNU note after it is found by the GNU parser too. */
	put_note(notes, &off, "GNU", 4, SYMI_NT_GNU_BUILD_ID, gnu,
		 sizeof(gnu));
	CHECK(symi_notes_find(notes, off, 4, "GNU", 4, SYMI_NT_GNU_BUILD_ID,
			      64, &d, &n) == 0 && n == 20 && d[0] == 0xde);
	{
		char bid[41];

		CHECK_ERR(sym_notes_build_id(notes, off, 4, bid, sizeof(bid)),
			  0);
		CHECK(!strncmp(bid, "deadbeef", 8));
	}
}

/* One line of @path, without its newline, into @out. */
static bool read_line(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");
	bool ok = f && fgets(out, (int)len, f);

	if (f)
		fclose(f);
	if (ok)
		out[strcspn(out, "\n")] = '\0';
	return ok;
}

static void test_c_binaries(const char *dir)
{
	char hex[129], want[129], p[4096];
	struct sym_module *mod = NULL;
	const char *mid;
	int kind = -1;

	if (!tap_sh("cd '%s' && printf 'int main(void){return 0;}\\n' > m.c"
		    " && cc -o noid -Wl,--build-id=none m.c && "
		    "cc -o withid -Wl,--build-id=sha1 m.c", dir) ||
	    !tap_sh("python3 -c 'import hashlib,struct,sys; "
		    "d=open(sys.argv[1],\"rb\").read(); "
		    "print(hashlib.sha256(d[:4096]+d[-4096:]+"
		    "struct.pack(\">Q\",len(d))).hexdigest()[:32])' "
		    "'%s/noid' > '%s/noid.want'", dir, dir) ||
	    !tap_sh("readelf -n '%s/withid' | awk '/Build ID:/ "
		    "{ print $3 }' > '%s/withid.want'", dir, dir)) {
		tap_skip("C binaries without and with a build ID",
			 "no cc, python3 or readelf");
		return;
	}
	snprintf(p, sizeof(p), "%s/noid.want", dir);
	CHECK(read_line(p, want, sizeof(want)) && strlen(want) == 32);
	snprintf(p, sizeof(p), "%s/noid", dir);
	CHECK_ERR(sym_file_build_id(p, hex, sizeof(hex)), -SYM_E_NOTFOUND);
	CHECK_ERR(sym_file_module_id(p, hex, sizeof(hex), &kind), 0);
	CHECK(kind == SYM_MODID_FILE && !strcmp(hex, want));
	CHECK(!strcmp(sym_modid_kind_name(kind), "file"));
	CHECK_ERR(sym_file_module_id(p, hex, 32, NULL), -ERANGE);
	CHECK_ERR(sym_module_open(p, NULL, &mod), 0);
	mid = sym_module_id(mod, &kind);
	CHECK(mid && !strcmp(mid, want) && kind == SYM_MODID_FILE);
	CHECK(sym_module_build_id(mod) == NULL);
	sym_module_close(mod);
	mod = NULL;
	{
		/* The same image from memory: the same ID. */
		size_t len = 0;
		void *img = tap_read_file(p, &len);

		CHECK(img && sym_module_open_mem(img, len, NULL, &mod) == 0);
		mid = sym_module_id(mod, NULL);
		CHECK(mid && !strcmp(mid, want));
		sym_module_close(mod);
		mod = NULL;
		free(img);
	}

	snprintf(p, sizeof(p), "%s/withid.want", dir);
	CHECK(read_line(p, want, sizeof(want)) && strlen(want) == 40);
	snprintf(p, sizeof(p), "%s/withid", dir);
	CHECK_ERR(sym_file_module_id(p, hex, sizeof(hex), &kind), 0);
	CHECK(kind == SYM_MODID_GNU && !strcmp(hex, want));
	CHECK_ERR(sym_module_open(p, NULL, &mod), 0);
	mid = sym_module_id(mod, &kind);
	CHECK(mid && !strcmp(mid, want) && kind == SYM_MODID_GNU);
	sym_module_close(mod);
}

static void test_contract(void)
{
	char hex[129];
	int kind = 7;

	CHECK_ERR(sym_file_module_id(NULL, hex, sizeof(hex), NULL), -EINVAL);
	CHECK_ERR(sym_file_module_id("/", NULL, 0, NULL), -EINVAL);
	CHECK_ERR(sym_file_module_id("/nonexistent/x", hex, sizeof(hex),
				     &kind), -ENOENT);
	CHECK(kind == 7);
	CHECK(sym_module_id(NULL, &kind) == NULL && kind == SYM_MODID_NONE);
	CHECK(!strcmp(sym_modid_kind_name(SYM_MODID_GNU), "gnu"));
	CHECK(!strcmp(sym_modid_kind_name(SYM_MODID_GO), "go"));
	CHECK(!strcmp(sym_modid_kind_name(SYM_MODID_NONE), "none"));
	CHECK(!strcmp(sym_modid_kind_name(42), "none"));
}

int main(void)
{
	const char *base = getenv("TMPDIR");
	char dir[1024];

	snprintf(dir, sizeof(dir), "%s/t-modid.XXXXXX", base ? base : "/tmp");
	if (!mkdtemp(dir))
		tap_skip_all("cannot make a temporary directory");
	test_sha256();
	test_otel_vector(dir);
	test_go_note();
	test_c_binaries(dir);
	test_contract();
	tap_sh("rm -rf '%s'", dir);
	return tap_done();
}
