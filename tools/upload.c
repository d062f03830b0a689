/*
 * upload.c - `sym upload --server URL --token-file F [--force] FILE...`:
 * put executables and their debug files into symd's store, as CI does
 * after a build (docs/http-api.md, "Uploads").
 *
 * For each FILE: its GNU build ID (a file without one is an error), its
 * kind, then HEAD /v1/<kind>/<id>: a file the server already has is
 * skipped, unless --force.  Otherwise PUT /v1/<kind>/<id>, streamed from
 * the file with its size (never read whole into memory), with
 * "Authorization: Bearer <token>"; the server checks the build ID again
 * and answers 201.  One line per file on stdout,
 *
 *	<id>  <file>  <kind>  uploaded <n> bytes
 *	<id>  <file>  <kind>  already there, skipped
 *
 * or one error line on stderr, with the server's own message.  On a
 * terminal, stderr also shows a progress bar while a file goes out.  The
 * exit status is 0 only when every file is on the server afterwards.
 *
 * The kind: "executable" when the file has bytes of its own to load, else
 * "debuginfo".  objcopy --only-keep-debug and eu-strip -f keep the
 * section headers of the original but make every allocated section except
 * the notes SHT_NOBITS, and their PT_LOAD segments have no file bytes
 * for code.  So: an allocated, non-note section with file bytes makes an
 * executable; without section headers, an executable PT_LOAD with file
 * bytes does.  An unstripped binary is an executable (its DWARF inside
 * serves the server's conversion as well).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "base.h"

/* Width of the progress bar, in characters. */
#define BAR 30

struct up {
	struct client *client;
	bool force;
	bool bar;		/* stderr is a terminal */
	/* Why the rest of the files are not tried (server down, token
	 * refused); NULL while all is well. */
	const char *stop;

	/* The progress bar of the file going out. */
	const char *name;
	double last;
	uint64_t shown;		/* bytes the bar shows */
	bool drawn;
};

enum { OPT_SERVER = 0x100, OPT_TOKEN_FILE, OPT_FORCE, OPT_TIMEOUT };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sym upload [--server=URL] [--token-file=FILE] [--force] "
		"FILE...\n\n"
		"Upload ELF files to symd, each under its GNU build ID: "
		"executables and\nshared objects to /v1/executable/<id>, "
		"separate debug files to\n/v1/debuginfo/<id>.  Files the "
		"server already has are skipped.  Exit\nstatus 0 when every "
		"file is on the server, 1 otherwise.\n\n"
		"      --server=URL        symd, e.g. http://127.0.0.1:8630 "
		"(default:\n"
		"                          $SYM_SERVER)\n"
		"      --token-file=FILE   the upload token: the first line "
		"of FILE\n"
		"                          (default: $SYM_TOKEN_FILE's, else "
		"$SYM_TOKEN)\n"
		"      --force             upload even what the server already "
		"has\n"
		"      --timeout=SECONDS   give up on a server that sends "
		"nothing for\n"
		"                          SECONDS (default %d; connecting: "
		"%d)\n\nSee sym(1).\n", CLIENT_STALL_TIMEOUT,
		CLIENT_CONNECT_TIMEOUT);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "12.3 MiB" */
static const char *human(char *buf, size_t len, uint64_t n)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)n;
	size_t u = 0;

	while (v >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
	return buf;
}

/* The bar, redrawn at most ten times a second, and at the end. */
static void progress(void *ctx, uint64_t done, uint64_t total)
{
	static const char fill[BAR + 1] = "==============================";
	struct up *u = ctx;
	const char *base = strrchr(u->name, '/');
	double t = now_s();
	char a[32], b[32];
	int pct, n;

	/* curl calls on while the server checks the file: no redraw. */
	if ((u->drawn && done == u->shown) ||
	    (done < total && t - u->last < 0.1))
		return;
	u->last = t;
	u->shown = done;
	pct = total ? (int)(done * 100 / total) : 100;
	n = pct * BAR / 100;
	fprintf(stderr, "\r%-24.24s [%.*s%*s] %3d%%  %s / %s\033[K",
		base ? base + 1 : u->name, n, fill, BAR - n, "", pct,
		human(a, sizeof(a), done), human(b, sizeof(b), total));
	u->drawn = true;
}

static void bar_clear(struct up *u)
{
	if (u->drawn)
		fputs("\r\033[K", stderr);
	u->drawn = false;
}

/*
 * file_kind() - "executable" or "debuginfo" (see the top of the file).
 * @return 0, -SYM_E_NOTELF, -SYM_E_BADELF, -SYM_E_UNSUPPORTED (not an
 *         executable, a shared object or a debug file of one)
 */
static int file_kind(int fd, const char **kind)
{
	bool bytes = false;
	size_t n, i;
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	Elf *e;
	int err = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -SYM_E_BADELF;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		err = -SYM_E_NOTELF;
		goto out;
	}
	if (!gelf_getehdr(e, &eh) || elf_getshdrnum(e, &n) != 0) {
		err = -SYM_E_BADELF;
		goto out;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		err = -SYM_E_UNSUPPORTED;
		goto out;
	}
	if (n > 0) {
		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh)) {
				err = -SYM_E_BADELF;
				goto out;
			}
			bytes |= (sh.sh_flags & SHF_ALLOC) && sh.sh_size &&
				 sh.sh_type != SHT_NOBITS &&
				 sh.sh_type != SHT_NOTE;
		}
	} else {
		if (elf_getphdrnum(e, &n) != 0) {
			err = -SYM_E_BADELF;
			goto out;
		}
		for (i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e, (int)i, &ph)) {
				err = -SYM_E_BADELF;
				goto out;
			}
			bytes |= ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
				 ph.p_filesz;
		}
	}
	*kind = bytes ? "executable" : "debuginfo";
out:
	if (e)
		elf_end(e);
	return err;
}

/* Why a file cannot be uploaded, from libsym's or file_kind()'s error. */
static void file_error(const char *path, int err)
{
	if (err == -SYM_E_NOTFOUND)
		tool_err("'%s': no GNU build ID (link with -Wl,--build-id); "
			 "not uploaded", path);
	else if (err == -SYM_E_NOTELF)
		tool_err("'%s': not an ELF file; not uploaded", path);
	else if (err == -SYM_E_UNSUPPORTED)
		tool_err("'%s': not an executable, a shared object or a debug "
			 "file of one (a relocatable or core file); not "
			 "uploaded", path);
	else
		tool_err_code(path, err);
}

/* The answer to an upload that was refused: does it stop the rest? */
static void refused(struct up *u, const char *path, const char *kind,
		    const char *id, const struct client_result *r)
{
	tool_err("'%s': the server refused the %s of build ID %s: %s", path,
		 kind, id, r->msg);
	if (r->status == 401 || r->status == 403)
		u->stop = "the server refused the token";
}

/* upload_one() - @return true when @path is on the server afterwards */
static bool upload_one(struct up *u, const char *path)
{
	struct client_result r;
	char id[2 * 64 + 1], url[192];
	const char *kind = NULL;
	struct stat st;
	FILE *f = NULL;
	bool ok = false;
	int fd, err;

	if (u->stop) {
		tool_err("'%s': not tried: %s", path, u->stop);
		return false;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		tool_err_code(path, -errno);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		tool_err("'%s': not a regular file; not uploaded", path);
		goto out;
	}
	err = sym_file_build_id(path, id, sizeof(id));
	if (!err)
		err = file_kind(fd, &kind);
	if (err) {
		file_error(path, err);
		goto out;
	}
	snprintf(url, sizeof(url), "/v1/%s/%s", kind, id);
	if (!u->force) {
		err = client_head(u->client, url, &r);
		if (err) {
			tool_err("'%s': %s", path, r.msg);
			if (r.unreachable)
				u->stop = "the server cannot be reached";
			goto out;
		}
		if (r.status == 200) {
			printf("%s  %s  %s  already there, skipped\n", id, path,
			       kind);
			ok = true;
			goto out;
		}
		/* 404, or something the PUT will explain. */
	}
	f = fdopen(fd, "rb");
	if (f)
		fd = -1;		/* fclose() closes it */
	if (!f || fseeko(f, 0, SEEK_SET) != 0) {
		tool_err_code(path, -errno);
		goto out;
	}
	u->name = path;
	u->last = 0;
	err = client_put_file(u->client, url, f, path, (uint64_t)st.st_size,
			      u->bar ? progress : NULL, u, &r);
	bar_clear(u);
	if (err) {
		tool_err("'%s': %s", path, r.msg);
		if (r.unreachable)
			u->stop = "the server cannot be reached";
	} else if (r.status != 200 && r.status != 201) {
		refused(u, path, kind, id, &r);
	} else {
		printf("%s  %s  %s  uploaded %" PRIu64 " bytes\n", id, path,
		       kind, r.bytes ? r.bytes : (uint64_t)st.st_size);
		ok = true;
	}
out:
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	fflush(stdout);
	return ok;
}

int cmd_upload(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "server", required_argument, NULL, OPT_SERVER },
		{ "token-file", required_argument, NULL, OPT_TOKEN_FILE },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct up u = { 0 };
	const char *server = NULL, *token_file = NULL, *token_from = NULL;
	unsigned long timeout = 0;
	bool server_flag;
	char token[4096], *end;
	int status = TOOL_EXIT_OK;
	int c, i, err;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SERVER:
			server = optarg;
			break;
		case OPT_TOKEN_FILE:
			token_file = optarg;
			break;
		case OPT_FORCE:
			u.force = true;
			break;
		case OPT_TIMEOUT:
			errno = 0;
			timeout = strtoul(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end || errno ||
			    timeout == 0 || timeout > 86400) {
				tool_err("--timeout: '%s' is not a number of "
					 "seconds from 1 to 86400", optarg);
				return TOOL_EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return TOOL_EXIT_OK;
		default:
			usage(stderr);
			return TOOL_EXIT_USAGE;
		}
	}
	server_flag = server != NULL;
	server = client_env_server(server, NULL);
	if (!server || optind >= argc) {
		if (!server)
			tool_err("no server: give --server or set SYM_SERVER");
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	err = client_read_token(token_file, token, sizeof(token), &token_from);
	if (err == -ENOENT) {
		tool_err("no upload token: give --token-file, or set "
			 "SYM_TOKEN_FILE or SYM_TOKEN");
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (err) {
		status = TOOL_EXIT_FAIL;
		goto out;
	}
	err = client_new(server, (unsigned)timeout, &u.client);
	if (err == -EINVAL) {
		tool_err("%s: '%s' is not an http:// or https:// URL",
			 server_flag ? "--server" : "SYM_SERVER", server);
		status = TOOL_EXIT_USAGE;
		goto out;
	}
	if (err) {
		tool_err("out of memory");
		status = TOOL_EXIT_FAIL;
		goto out;
	}
	if (client_set_token(u.client, token) != 0) {
		tool_err("the token in %s%s%s has blanks or control characters",
			 *token_from == '$' ? "" : "'", token_from,
			 *token_from == '$' ? "" : "'");
		status = TOOL_EXIT_FAIL;
		goto out;
	}
	u.bar = isatty(STDERR_FILENO);
	for (i = optind; i < argc; i++)
		if (!upload_one(&u, argv[i]))
			status = TOOL_EXIT_FAIL;
	if (fflush(stdout) != 0)
		status = TOOL_EXIT_FAIL;
out:
	explicit_bzero(token, sizeof(token));
	client_free(u.client);
	return status;
}
