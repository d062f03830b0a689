/*
 * client.h - the sym tools' HTTP client for symd (docs/http-api.md), on
 * libcurl: `sym upload` and `sym lookup --server`.
 *
 * One struct client per process holds one libcurl handle, so successive
 * requests reuse the connection.  Every request has a connect timeout and
 * a stall limit (no byte moved for that long), so a dead or stopped
 * server costs seconds, never a hung CI job.  Replies are read into
 * memory only for the small JSON bodies of the API; uploads stream from
 * the file.
 *
 * Nothing here prints, except client_symbolize(), which reports the
 * module's status the way `sym lookup` does.  libcurl's declarations stay
 * in client.c.
 */
#ifndef SYM_CLIENT_H
#define SYM_CLIENT_H

#include "tools.h"


/** A connection to one symd.  Opaque. */
struct client;

/** Defaults: seconds to connect, and seconds without progress. */
#define CLIENT_CONNECT_TIMEOUT 10
#define CLIENT_STALL_TIMEOUT 60

/** The outcome of one request. */
struct client_result {
	/** The HTTP status; 0 when no answer came. */
	long status;
	/** No connection could be made (refused, no such host, connect
	 *  timeout): later requests to the same server will fail too. */
	bool unreachable;
	/** When status is 0 or not 2xx: why, in one line ("wrong token
	 *  (HTTP 403)", "Failed to connect to ..."). */
	char msg[512];
	/** A JSON reply's "bytes" member (PUT); 0 when absent. */
	uint64_t bytes;
	/** symd's X-Sym-Quality header (sym_quality_name() of the best
	 *  file it holds for the build ID): "" when absent. */
	char quality[16];
};

/**
 * client_new() - a client for the symd at @server.
 * @param server  "http://host:port" or "https://...", with an optional
 *                path prefix; trailing slashes are dropped.  Borrowed.
 * @param stall_s  give up a request after this many seconds without a
 *                 byte moving; 0 for CLIENT_STALL_TIMEOUT
 * @param[out] out  caller owns, free with client_free()
 * @return 0, -EINVAL (not an http(s) URL), -ENOMEM
 */
int client_new(const char *server, unsigned stall_s, struct client **out);

/** client_free() - close the connection.  NULL-safe. */
void client_free(struct client *c);

/** The server's URL as given to client_new(), for messages. */
const char *client_server(const struct client *c);

/**
 * client_set_token() - send "Authorization: Bearer @token" from now on.
 * @param token  borrowed; printable ASCII without blanks
 * @return 0, -EINVAL (a character that cannot go in a header), -ENOMEM
 */
int client_set_token(struct client *c, const char *token);

/**
 * client_env_server() - the server a command asks: @flag (its --server),
 * else $SYM_SERVER when it is set and not empty, unless @exclusive (a
 * --store that excludes a server) is given: flags win over the
 * environment.
 * @return borrowed (@flag or the environment), or NULL for no server
 */
const char *client_env_server(const char *flag, const char *exclusive);

/**
 * client_read_token() - the upload token, from the first of: the first
 * line of @token_file (--token-file), of $SYM_TOKEN_FILE's file, or
 * $SYM_TOKEN itself; without blanks around it.
 * @param[out] buf   the token; the caller wipes it (explicit_bzero())
 * @param[out] from  where it came from, for messages ("--token-file
 *                   'F'", "$SYM_TOKEN"); static or borrowed
 * @return 0; -ENOENT when none of the three is given (no message);
 *         -EINVAL after a message on stderr (an unreadable or empty
 *         file, an empty token)
 */
int client_read_token(const char *token_file, char *buf, size_t len,
		      const char **from);

/** Called now and then while a file uploads: @done of @total bytes sent. */
typedef void (*client_progress_fn)(void *ctx, uint64_t done, uint64_t total);

/**
 * client_head() - HEAD @path (e.g. "/v1/debuginfo/<id>").
 * @param[out] r  filled
 * @return 0 when an answer came (see r->status), else -EIO (r->msg says
 *         why)
 */
int client_head(struct client *c, const char *path, struct client_result *r);

/**
 * client_put_file() - PUT @size bytes of @f to @path, streamed from the
 * file: it is never read whole into memory.
 * @param name      the file's name, for messages
 * @param progress  NULL, or called as bytes go out
 * @return as client_head(); a read error of @f is -EIO too
 */
int client_put_file(struct client *c, const char *path, FILE *f,
		    const char *name, uint64_t size,
		    client_progress_fn progress, void *ctx,
		    struct client_result *r);

/**
 * client_symbolize() - POST /v1/symbolize/@build_id and hand each
 * address's frames to @fn, in the order of @addrs, as sym_store_lookup()
 * does: the frames and their strings are valid only during the call.
 * The frames hold what the API sends (names, linkage names, file, line,
 * column, discriminator, the inline flag, and the entry of the outermost
 * function when "offset" is there); symbol-table fields are unknown.
 * @param wait_ms  how long the server may wait for a cold build ID
 * @return 0, the first non-zero value of @fn, or a negative error after
 *         one line on stderr: -ECOMM (no answer: the server unreachable,
 *         or it stopped answering), -EPROTO (an HTTP error, with its
 *         "error" message, or a reply that is not the API's), and for
 *         the build ID -ENOENT (missing), -EAGAIN (pending: still being
 *         fetched or converted; or partial, unless accepted:
 *         client_accept_partial()) or -EIO (the server's "error" status)
 */
int client_symbolize(struct client *c, const char *build_id,
		     const uint64_t *addrs, size_t n, unsigned wait_ms,
		     sym_frames_fn fn, void *ctx);

/**
 * client_accept_partial() - whether client_symbolize() takes a "partial"
 * answer (a cold build ID's frames from its symbols alone, while the
 * server builds its table: docs/http-api.md) as an answer (@on), or as
 * -EAGAIN, like "pending" (the default: ask again for the full frames).
 */
void client_accept_partial(struct client *c, bool on);

/**
 * client_partial() - whether the last client_symbolize() that returned 0
 * was answered "partial" (only with client_accept_partial()).
 */
bool client_partial(const struct client *c);

/**
 * client_source() - the "source" of the last module client_symbolize()
 * got "ok" (dwarf, gopclntab, symtab or none: docs/http-api.md), "" when
 * the server sent none (an older symd) or a word not among these.
 * @return borrowed from @c, valid until the next call
 */
const char *client_source(const struct client *c);

/**
 * client_read_symbolize() - read symd's answer to POST
 * /v1/symbolize/@build_id for @addrs[@n] (client_symbolize() after the
 * transfer; separate so that tests/fuzz/fuzz-reply.c can drive it).
 * @param body  the reply, @len bytes, not NUL-terminated; strings are
 *              decoded in place, so it is modified
 * @param frames_buf  room for SYM_MAX_FRAMES frames
 * @param source      NULL, or 16 bytes: an "ok" module's "source", ""
 *                    when none or an unknown word (client_source())
 * @param partial     NULL: a "partial" answer is -EAGAIN; else it is read
 *                    as an "ok" one, and *@partial set to true
 * @return as client_symbolize(): 0 after @fn got every address, -EPROTO
 *         (a malformed reply), -ENOENT (missing), -EAGAIN (pending),
 *         -EIO (error), or @fn's non-zero value; the reason is printed
 */
int client_read_symbolize(char *body, size_t len, const char *build_id,
			  const uint64_t *addrs, size_t n, unsigned wait_ms,
			  struct sym_frame *frames_buf, char *source,
			  bool *partial, sym_frames_fn fn, void *ctx);

#endif /* SYM_CLIENT_H */
