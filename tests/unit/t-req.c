/*
 * t-req.c - symd/req.c: the POST /v1/symbolize body parser (both shapes,
 * every kind of bad input, the limits, truncation at every byte) and the
 * JSON output helpers (escaping, numbers, the capped buffer), with a
 * round trip between the two.  Prints parse and escape throughput as TAP
 * comments; they are not asserted.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tap.h"
#include "req.h"
#include "base.h"

static const char ID40[] = "93ac61ec5a8eb1396f9fbd350e3169a558528a40";

/* Parse @body (a C string, its NUL excluded) from an exact-size heap copy,
 * so that ASan sees any read past its end. */
static int parse_lim(const char *body, size_t len, const char *url,
		     const struct symd_req_limits *lim, struct symd_req *req,
		     char *err, size_t errlen)
{
	char *copy = malloc(len ? len : 1);
	int rc;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, body, len);
	rc = symd_req_parse(len ? copy : NULL, len, url, lim, req, err,
			    errlen);
	free(copy);
	return rc;
}

static int parse(const char *body, const char *url, struct symd_req *req,
		 char *err)
{
	return parse_lim(body, strlen(body), url, NULL, req, err,
			 SYMD_REQ_ERRLEN);
}

static int parse_l(const char *body, const char *url,
		   const struct symd_req_limits *lim, struct symd_req *req,
		   char *err)
{
	return parse_lim(body, strlen(body), url, lim, req, err,
			 SYMD_REQ_ERRLEN);
}

static int is_zero(const struct symd_req *req)
{
	static const struct symd_req zero;

	return !memcmp(req, &zero, sizeof(zero));
}

/* @body fails with @want, an error naming @what, and a zeroed request. */
static void bad_lim(const char *body, const char *url,
		    const struct symd_req_limits *lim, int want,
		    const char *what)
{
	struct symd_req req;
	char err[SYMD_REQ_ERRLEN], name[120];
	size_t i;
	int rc;

	/* The body as the test's name, on one line. */
	for (i = 0; body[i] && i < sizeof(name) - 1; i++)
		name[i] = body[i] < 0x20 || body[i] > 0x7e || body[i] == '#' ?
			  '?' : body[i];
	name[i] = '\0';
	memset(&req, 0xa5, sizeof(req));
	rc = parse_lim(body, strlen(body), url, lim, &req, err, sizeof(err));
	tap_ok(rc == want && strstr(err, what) && is_zero(&req), __FILE__,
	       __LINE__, name);
	if (rc != want || !strstr(err, what))
		printf("#   got %d \"%s\", want %d \"...%s...\"\n", rc, err,
		       want, what);
	symd_req_release(&req);
}

#define BAD(body, what) bad_lim((body), NULL, NULL, -EINVAL, (what))
#define BAD1(body, what) bad_lim((body), "abcd", NULL, -EINVAL, (what))

static void test_valid(void)
{
	struct symd_req req;
	char err[SYMD_REQ_ERRLEN], body[512];

	CHECK_ERR(parse("{\"modules\": [{\"build_id\": \"ABCDef0123\", "
			"\"addresses\": [\"0x1a2b\", 6699]}], "
			"\"wait_ms\": 2000}", NULL, &req, err), 0);
	CHECK(err[0] == '\0');
	CHECK(req.nmodules == 1 && req.naddrs == 2 && req.wait_ms == 2000);
	CHECK(!strcmp(req.modules[0].build_id, "abcdef0123"));
	CHECK(req.modules[0].naddrs == 2 && req.modules[0].addrs == req.addrs);
	CHECK(req.addrs[0] == 0x1a2b && req.addrs[1] == 6699);
	symd_req_release(&req);
	CHECK(is_zero(&req));
	symd_req_release(&req);
	symd_req_release(NULL);

	/* The single-module form, with the URL's build ID. */
	CHECK_ERR(parse("{\"addresses\": [\"0x1a2b\", 6699], \"wait_ms\": 5}",
			"93AC61EC5A8EB1396F9FBD350E3169A558528A40", &req, err),
		  0);
	CHECK(req.nmodules == 1 && req.naddrs == 2 && req.wait_ms == 5);
	CHECK(!strcmp(req.modules[0].build_id, ID40));
	CHECK(req.modules[0].addrs == req.addrs &&
	      req.modules[0].naddrs == 2 && req.addrs[1] == 6699);
	symd_req_release(&req);

	/* Every kind of address, the extremes included; default wait. */
	CHECK_ERR(parse("{\"modules\":[{\"addresses\":[\"0X1A2B\","
			"\"0xffffffffffffffff\",18446744073709551615,0,\"0x0\","
			"\"0x0000000000401000\",9007199254740993],"
			"\"build_id\":\"00\"}]}", NULL, &req, err), 0);
	CHECK(req.naddrs == 7 && req.wait_ms == SYMD_REQ_DEFAULT_WAIT_MS);
	CHECK(req.addrs[0] == 0x1a2b && req.addrs[1] == UINT64_MAX &&
	      req.addrs[2] == UINT64_MAX && req.addrs[3] == 0 &&
	      req.addrs[4] == 0 && req.addrs[5] == 0x401000 &&
	      req.addrs[6] == 9007199254740993ull);
	symd_req_release(&req);

	/* Whitespace everywhere JSON allows it. */
	CHECK_ERR(parse(" \t\r\n{ \n\"modules\"\t:\r[ {\n\"build_id\" : "
			"\"ab\" ,\"addresses\" :[ 1 ,\n\"0x2\" ] } ] , "
			"\"wait_ms\" : 7 } \n\t", NULL, &req, err), 0);
	CHECK(req.naddrs == 2 && req.addrs[1] == 2 && req.wait_ms == 7);
	symd_req_release(&req);

	/* Escapes in keys and values, surrogate pairs in unknown ones. */
	CHECK_ERR(parse("{\"mod\\u0075les\":[{\"\\u0062uild_id\":"
			"\"\\u0061B\",\"addr\\u0065sses\":[\"\\u0030x10\"],"
			"\"note\\ud83d\\ude00\":\"\\ud83d\\ude00\\\"\\\\\\/"
			"\\b\\f\\n\\r\\t\"}]}", NULL, &req, err), 0);
	CHECK(req.nmodules == 1 && !strcmp(req.modules[0].build_id, "ab"));
	CHECK(req.naddrs == 1 && req.addrs[0] == 0x10);
	symd_req_release(&req);

	/* Unknown keys, their nested values skipped, at every level. */
	CHECK_ERR(parse("{\"x\":{\"a\":[1,{\"b\":[true,false,null,"
			"\"s\xc3\xa9\",-1.5e+3,0,0.25,1E-2,{}]}],\"c\":[]},"
			"\"modules\":[{\"v\":{\"w\":[[[]]]},"
			"\"build_id\":\"ab\","
			"\"addresses\":[3],\"z\":null}],\"y\":\"\\u0000\"}",
			NULL, &req, err), 0);
	CHECK(req.naddrs == 1 && req.addrs[0] == 3);
	symd_req_release(&req);

	/* Several modules: slices in order; empty ones; repeated IDs. */
	CHECK_ERR(parse("{\"modules\":[{\"build_id\":\"aa\",\"addresses\":"
			"[1,2]},{\"build_id\":\"bb\",\"addresses\":[]},"
			"{\"build_id\":\"aa\",\"addresses\":[3]}]}", NULL,
			&req, err), 0);
	CHECK(req.nmodules == 3 && req.naddrs == 3);
	CHECK(req.modules[0].addrs == req.addrs &&
	      req.modules[0].naddrs == 2);
	CHECK(req.modules[1].addrs == NULL && req.modules[1].naddrs == 0);
	CHECK(req.modules[2].addrs == req.addrs + 2 &&
	      req.modules[2].addrs[0] == 3);
	CHECK(!strcmp(req.modules[2].build_id, "aa"));
	symd_req_release(&req);

	/* No modules, no addresses: valid, nothing allocated. */
	CHECK_ERR(parse("{\"modules\":[]}", NULL, &req, err), 0);
	CHECK(req.nmodules == 0 && !req.modules && !req.addrs);
	symd_req_release(&req);
	CHECK_ERR(parse("{\"addresses\":[]}", "abcd", &req, err), 0);
	CHECK(req.nmodules == 1 && req.naddrs == 0 && !req.addrs &&
	      !req.modules[0].addrs && !strcmp(req.modules[0].build_id,
					      "abcd"));
	symd_req_release(&req);

	/* wait_ms: clamped to the limit, however large. */
	CHECK_ERR(parse("{\"modules\":[],\"wait_ms\":99999999999999999999999}",
			NULL, &req, err), 0);
	CHECK(req.wait_ms == SYMD_REQ_DEFAULT_MAX_WAIT_MS);
	symd_req_release(&req);
	CHECK_ERR(parse("{\"modules\":[],\"wait_ms\":0}", NULL, &req, err), 0);
	CHECK(req.wait_ms == 0);
	symd_req_release(&req);

	/* 128 hex digits is the longest build ID. */
	snprintf(body, sizeof(body), "{\"modules\":[{\"build_id\":\"%s%s%s"
		 "01234567\",\"addresses\":[1]}]}", ID40, ID40, ID40);
	CHECK_ERR(parse(body, NULL, &req, err), 0);
	CHECK(req.nmodules == 1 && strlen(req.modules[0].build_id) == 128);
	symd_req_release(&req);
}

static void test_bad(void)
{
	struct symd_req req;
	char err[SYMD_REQ_ERRLEN], body[600];

	/* Not JSON, not an object, not one object. */
	BAD("", "request: empty request body at byte 0");
	BAD(" \n", "empty request body");
	BAD("[]", "request: expected a JSON object, got an array at byte 0");
	BAD("null", "expected a JSON object");
	BAD("\xef\xbb\xbf{\"modules\":[]}", "expected a JSON object");
	BAD("{", "expected a key, got end of input at byte 1");
	BAD("{\"modules\":[]", "expected ',' or '}', got end of input");
	BAD("{\"modules\":[]} x", "unexpected data after the request object "
				  "at byte 15");
	BAD("{\"modules\":[]}{}", "unexpected data after");
	BAD("{\"modules\":[],}", "expected a key, got '}'");
	BAD("{\"modules\" []}", "expected ':' after a key, got an array");
	BAD("{modules:[]}", "expected a key");
	BAD("{'modules':[]}", "expected a key");
	BAD("{\"modules\":[]\"x\":1}", "expected ',' or '}', got a string");
	BAD("{\"x\":tru,\"modules\":[]}", "invalid literal at byte 5");
	BAD("{\"x\":nul}", "invalid literal");
	BAD("{\"x\":+1}", "expected a JSON value, got an unexpected byte");
	BAD("{\"x\":.5}", "expected a JSON value");
	BAD("{\"x\":1.}", "expected a digit after '.'");
	BAD("{\"x\":1e}", "expected a digit in an exponent");
	BAD("{\"x\":-}", "expected a digit in a number");
	BAD("{\"x\":01}", "leading zero in a number");
	BAD("{\"x\":[1,]}", "expected a JSON value, got ']'");
	BAD("{\"x\":[1 2]}", "expected ',' or ']', got a number");
	BAD("{\"x\":{\"a\" 1}}", "expected ':' after a key");
	BAD("{\"x\":{\"a\":1,}}", "expected a key, got '}'");
	BAD("{\"x\":[}", "expected a JSON value, got '}'");
	BAD("{\"x\":[1}", "expected ',' or ']', got '}'");

	/* Strings. */
	BAD("{\"x\":\"a\nb\"}", "raw control character in a string at byte 7");
	BAD("{\"x\":\"\\x\"}", "invalid escape in a string at byte 6");
	BAD("{\"x\":\"\\u12\"}", "\\u must be followed by 4 hex digits");
	BAD("{\"x\":\"\\ud800\"}", "high surrogate not followed");
	BAD("{\"x\":\"\\ud800\\u0041\"}", "high surrogate not followed");
	BAD("{\"x\":\"\\udc00\"}", "lone low surrogate");
	BAD("{\"x\":\"\xff\"}", "invalid UTF-8 in a string at byte 6");
	BAD("{\"x\":\"\xc0\xaf\"}", "invalid UTF-8");
	BAD("{\"x\":\"\xed\xa0\x80\"}", "invalid UTF-8");
	BAD("{\"x\":\"\xf4\x90\x80\x80\"}", "invalid UTF-8");
	BAD("{\"x\":\"\xe2\x82\"}", "invalid UTF-8");
	BAD("{\"x\":\"abc", "unterminated string at byte 9");
	BAD("{\"x\xff\":1}", "invalid UTF-8");

	/* Missing, misplaced and duplicate keys. */
	BAD("{}", "request: missing \"modules\" at byte 1");
	BAD1("{}", "request: missing \"addresses\"");
	BAD("{\"modules\":[{\"addresses\":[]}]}",
	    "modules[0]: missing \"build_id\" at byte 27");
	BAD("{\"modules\":[{\"build_id\":\"ab\"}]}",
	    "modules[0]: missing \"addresses\"");
	BAD("{\"modules\":[{}]}", "modules[0]: missing \"build_id\"");
	BAD("{\"modules\":[],\"modules\":[]}",
	    "modules: duplicate key at byte 14");
	BAD("{\"modules\":[],\"wait_ms\":1,\"wait_\\u006ds\":2}",
	    "wait_ms: duplicate key");
	BAD("{\"modules\":[{\"build_id\":\"ab\",\"build_id\":\"ab\","
	    "\"addresses\":[]}]}", "modules[0].build_id: duplicate key");
	BAD("{\"modules\":[{\"build_id\":\"ab\",\"addresses\":[],"
	    "\"addr\\u0065sses\":[]}]}", "modules[0].addresses: duplicate key");
	BAD1("{\"addresses\":[],\"addresses\":[]}", "addresses: duplicate key");
	BAD1("{\"addresses\":[],\"modules\":[]}",
	     "modules: not allowed with a build ID in the URL");
	BAD("{\"addresses\":[1]}", "addresses: belongs inside modules[]");

	/* Wrong types. */
	BAD("{\"modules\":{}}", "modules: expected an array of modules, got "
				"an object at byte 11");
	BAD("{\"modules\":\"ab\"}", "expected an array of modules");
	BAD("{\"modules\":null}", "expected an array of modules, got null");
	BAD("{\"modules\":[5]}", "modules[0]: expected a module object, got "
				 "a number");
	BAD("{\"modules\":[[]]}", "expected a module object");
	BAD("{\"modules\":[{\"build_id\":12,\"addresses\":[]}]}",
	    "modules[0].build_id: expected a hex string, got a number");
	BAD("{\"modules\":[{\"build_id\":\"ab\",\"addresses\":\"0x1\"}]}",
	    "modules[0].addresses: expected an array of addresses, got a "
	    "string");
	BAD1("{\"addresses\":[true]}", "addresses[0]: expected a hex string "
				       "or a non-negative integer, got a "
				       "boolean at byte 14");
	BAD1("{\"addresses\":[null]}", "got null");
	BAD1("{\"addresses\":[[1]]}", "got an array");
	BAD1("{\"addresses\":[{}]}", "got an object");
	BAD1("{\"addresses\":[1,]}", "addresses[1]: expected a hex string or "
				     "a non-negative integer, got ']'");
	BAD1("{\"addresses\":[\"0x1\",\"0x2\",\"0x3\",false]}",
	     "addresses[3]: expected a hex string or a non-negative integer, "
	     "got a boolean at byte 32");
	BAD("{\"modules\":[{\"build_id\":\"ab\",\"addresses\":[1,2,3,\"q\"]}]}",
	    "modules[0].addresses[3]: expected \"0x\" and 1 to 16 hex digits "
	    "at byte 48");
	BAD("{\"modules\":[],\"wait_ms\":\"5\"}",
	    "wait_ms: expected a non-negative integer, got a string");
	BAD("{\"modules\":[],\"wait_ms\":-1}",
	    "wait_ms: expected a non-negative integer at byte 24");
	BAD("{\"modules\":[],\"wait_ms\":1.5}", "expected a non-negative");
	BAD("{\"modules\":[],\"wait_ms\":1e3}", "expected a non-negative");
	BAD("{\"modules\":[],\"wait_ms\":null}", "expected a non-negative");

	/* Addresses. */
	BAD1("{\"addresses\":[-1]}", "addresses[0]: negative address");
	BAD1("{\"addresses\":[-0]}", "negative address");
	BAD1("{\"addresses\":[1.0]}", "address with a fraction or an exponent");
	BAD1("{\"addresses\":[1e3]}", "fraction or an exponent");
	BAD1("{\"addresses\":[1E+3]}", "fraction or an exponent");
	BAD1("{\"addresses\":[18446744073709551616]}",
	     "address does not fit in 64 bits");
	BAD1("{\"addresses\":[99999999999999999999999]}", "does not fit");
	BAD1("{\"addresses\":[0123]}", "leading zero in a number at byte 14");
	BAD1("{\"addresses\":[00]}", "leading zero");
	BAD1("{\"addresses\":[\"0x\"]}", "expected \"0x\" and 1 to 16 hex");
	BAD1("{\"addresses\":[\"0x12345678901234567\"]}", "1 to 16 hex");
	BAD1("{\"addresses\":[\"0xg\"]}", "1 to 16 hex");
	BAD1("{\"addresses\":[\"6699\"]}", "1 to 16 hex");
	BAD1("{\"addresses\":[\"1a2b\"]}", "1 to 16 hex");
	BAD1("{\"addresses\":[\"-0x1\"]}", "1 to 16 hex");
	BAD1("{\"addresses\":[\" 0x1\"]}", "1 to 16 hex");
	BAD1("{\"addresses\":[\"0x1 \"]}", "1 to 16 hex");
	BAD1("{\"addresses\":[\"0x1\\u0000\"]}", "1 to 16 hex");
	BAD1("{\"addresses\":[0x10]}", "expected ',' or ']', got an unexpected"
				       " byte at byte 15");
	BAD1("{\"addresses\":[12abc]}", "expected ',' or ']'");

	/* Build IDs, in the body and in the URL. */
	BAD("{\"modules\":[{\"build_id\":\"abc\",\"addresses\":[]}]}",
	    "modules[0].build_id: an odd number of hex digits at byte 24");
	BAD("{\"modules\":[{\"build_id\":\"zz\",\"addresses\":[]}]}",
	    "build_id: not hex");
	BAD("{\"modules\":[{\"build_id\":\"../../etc/passwd\","
	    "\"addresses\":[]}]}",
	    "build_id: not hex");
	BAD("{\"modules\":[{\"build_id\":\"ab/cd\",\"addresses\":[]}]}",
	    "not hex");
	BAD("{\"modules\":[{\"build_id\":\"\",\"addresses\":[]}]}",
	    "shorter than 2 hex digits");
	BAD("{\"modules\":[{\"build_id\":\"a\",\"addresses\":[]}]}",
	    "shorter than 2");
	BAD("{\"modules\":[{\"build_id\":\"ab\\u0000\",\"addresses\":[]}]}",
	    "not hex");
	snprintf(body, sizeof(body), "{\"modules\":[{\"build_id\":"
		 "\"%s%s%sabc\","
		 "\"addresses\":[]}]}", ID40, ID40, ID40);
	BAD(body, "build_id: an odd number");
	snprintf(body, sizeof(body), "{\"modules\":[{\"build_id\":\"%s%s%s%s\","
		 "\"addresses\":[]}]}", ID40, ID40, ID40, ID40);
	BAD(body, "build_id: longer than 128 hex digits at byte 24");
	bad_lim("{\"addresses\":[]}", "../x", NULL, -EINVAL,
		"build ID in the URL: not hex");
	bad_lim("{\"addresses\":[]}", "abc", NULL, -EINVAL,
		"build ID in the URL: an odd number of hex digits");
	bad_lim("{\"addresses\":[]}", "", NULL, -EINVAL,
		"build ID in the URL: shorter than 2");
	snprintf(body, sizeof(body), "%s%s%s%s", ID40, ID40, ID40, ID40);
	bad_lim("{\"addresses\":[]}", body, NULL, -EINVAL,
		"build ID in the URL: longer than 128");

	/* Bad arguments. */
	CHECK_ERR(symd_req_parse("{}", 2, NULL, NULL, NULL, err, sizeof(err)),
		  -EINVAL);
	CHECK_ERR(symd_req_parse(NULL, 2, NULL, NULL, &req, err, sizeof(err)),
		  -EINVAL);
	CHECK(is_zero(&req) && strstr(err, "invalid arguments"));
	CHECK_ERR(symd_req_parse(NULL, 0, NULL, NULL, &req, err, sizeof(err)),
		  -EINVAL);
	CHECK(strstr(err, "empty request body"));
	/* No error buffer, and a tiny one. */
	CHECK_ERR(symd_req_parse("[", 1, NULL, NULL, &req, NULL, 0), -EINVAL);
	CHECK_ERR(symd_req_parse("[", 1, NULL, NULL, &req, err, 8), -EINVAL);
	CHECK(strlen(err) == 7 && !strncmp(err, "request", 7));
}

static void test_limits(void)
{
	struct symd_req_limits lim = SYMD_REQ_LIMITS_DEFAULT;
	struct symd_req req;
	char err[SYMD_REQ_ERRLEN];
	char deep[2 * SYMD_REQ_DEPTH_CAP + 64];
	size_t n = 0;

	lim.max_addresses = 3;
	lim.max_modules = 2;
	lim.max_depth = 6;
	CHECK_ERR(parse_l("{\"addresses\":[1,2,3]}", "ab", &lim, &req, err), 0);
	symd_req_release(&req);
	bad_lim("{\"addresses\":[1,2,3,4]}", "ab", &lim, -E2BIG,
		"addresses[3]: more than 3 addresses in the request at "
		"byte 20");
	/* The total counts, across modules. */
	bad_lim("{\"modules\":[{\"build_id\":\"ab\",\"addresses\":[1,2]},"
		"{\"build_id\":\"cd\",\"addresses\":[3,4]}]}", NULL, &lim,
		-E2BIG, "modules[1].addresses[1]: more than 3 addresses");
	bad_lim("{\"modules\":[{\"build_id\":\"ab\",\"addresses\":[]},"
		"{\"build_id\":\"ab\",\"addresses\":[]},"
		"{\"build_id\":\"ab\",\"addresses\":[]}]}", NULL, &lim, -E2BIG,
		"modules[2]: more than 2 modules");
	lim.max_modules = 0;
	bad_lim("{\"addresses\":[]}", "ab", &lim, -E2BIG,
		"more than 0 modules");
	lim.max_modules = 2;

	/* Nesting: the request needs 4 levels, unknown keys count too. */
	CHECK_ERR(parse_l("{\"x\":[[[[[]]]]],\"modules\":[]}", NULL, &lim,
			  &req, err), 0);
	bad_lim("{\"x\":[[[[[[]]]]]],\"modules\":[]}", NULL, &lim, -EINVAL,
		"request: nesting deeper than 6 at byte 10");
	bad_lim("{\"modules\":[{\"x\":{\"y\":{\"z\":{\"w\":{}}}},"
		"\"build_id\":\"ab\",\"addresses\":[]}]}", NULL, &lim, -EINVAL,
		"modules[0]: nesting deeper than 6 at byte 32");
	lim.max_depth = 3;
	bad_lim("{\"modules\":[{\"build_id\":\"ab\",\"addresses\":[]}]}", NULL,
		&lim, -EINVAL, "modules[0].addresses: nesting deeper than 3");
	lim.max_depth = 0;
	bad_lim("{}", NULL, &lim, -EINVAL, "nesting deeper than 0");
	/* A limit above the cap is lowered to it: 300 '[' fail cleanly. */
	lim.max_depth = 100000;
	n = (size_t)snprintf(deep, sizeof(deep), "{\"x\":");
	while (n < sizeof(deep) - 40)
		deep[n++] = '[';
	deep[n] = '\0';
	bad_lim(deep, NULL, &lim, -EINVAL, "nesting deeper than 256");

	/* wait_ms. */
	lim.max_wait_ms = 100;
	lim.default_wait_ms = 500;	/* lowered to the max */
	CHECK_ERR(parse_l("{\"modules\":[]}", NULL, &lim, &req, err), 0);
	CHECK(req.wait_ms == 100);
	CHECK_ERR(parse_l("{\"modules\":[],\"wait_ms\":101}", NULL, &lim,
			  &req, err), 0);
	CHECK(req.wait_ms == 100);
	CHECK_ERR(parse_l("{\"modules\":[],\"wait_ms\":99}", NULL, &lim,
			  &req, err), 0);
	CHECK(req.wait_ms == 99);

	/* The default limits: 100000 addresses pass, one more does not. */
	{
		size_t cap = 2 * (SYMD_REQ_DEFAULT_MAX_ADDRESSES + 1) + 64;
		char *big = malloc(cap);
		size_t len;

		if (!big)
			return;
		len = (size_t)snprintf(big, cap, "{\"addresses\":[0");
		for (size_t i = 1; i < SYMD_REQ_DEFAULT_MAX_ADDRESSES; i++) {
			big[len++] = ',';
			big[len++] = '7';
		}
		memcpy(big + len, "]}", 3);
		CHECK_ERR(symd_req_parse(big, len + 2, "ab", NULL, &req, err,
					 sizeof(err)), 0);
		CHECK(req.naddrs == SYMD_REQ_DEFAULT_MAX_ADDRESSES &&
		      req.addrs[req.naddrs - 1] == 7);
		symd_req_release(&req);
		memcpy(big + len, ",1]}", 5);
		CHECK_ERR(symd_req_parse(big, len + 4, "ab", NULL, &req, err,
					 sizeof(err)), -E2BIG);
		CHECK(strstr(err, "addresses[100000]: more than 100000"));
		free(big);
	}
}

/* Every prefix of a valid request fails cleanly, with a message; every
 * one-byte change does not crash and returns a documented code. */
static void test_truncation(void)
{
	static const char *const valid[] = {
		"{\"modules\": [{\"build_id\": \"ABCDef0123\", \"addresses\": "
		"[\"0x1a2b\", 6699, \"\\u0030x1\"], \"x\": {\"a\": [1.5e3, "
		"true, null, \"\\ud83d\\ude00\xc3\xa9\"]}}], "
		"\"wait_ms\": 2000}",
		"{\"addresses\":[18446744073709551615,\"0XFFFF\"],"
		"\"wait_ms\":0,\"y\":[[],{}]}",
	};
	static const char subst[] = "\"\\{}[],:0-x\x80\xff \n";
	struct symd_req req;
	char err[SYMD_REQ_ERRLEN], copy[256];
	size_t bad_prefix = 0, total = 0, odd = 0;

	for (size_t v = 0; v < sizeof(valid) / sizeof(valid[0]); v++) {
		const char *url = v ? "ab" : NULL;
		size_t len = strlen(valid[v]);

		CHECK_ERR(parse(valid[v], url, &req, err), 0);
		symd_req_release(&req);
		for (size_t k = 0; k < len; k++) {
			int rc = parse_lim(valid[v], k, url, NULL, &req, err,
					   sizeof(err));

			total++;
			if (rc != -EINVAL || !err[0] || !is_zero(&req) ||
			    !strstr(err, " at byte "))
				bad_prefix++;
		}
		for (size_t k = 0; k < len && len < sizeof(copy); k++) {
			for (size_t c = 0; c < sizeof(subst) - 1; c++) {
				int rc;

				memcpy(copy, valid[v], len);
				copy[k] = subst[c];
				rc = parse_lim(copy, len, url, NULL, &req, err,
					       sizeof(err));
				if (rc && rc != -EINVAL)
					odd++;
				if ((rc == 0) != (err[0] == '\0'))
					odd++;
				if (!rc && req.nmodules != 1)
					odd++;
				symd_req_release(&req);
			}
		}
	}
	printf("# %zu truncated requests\n", total);
	CHECK(bad_prefix == 0);
	CHECK(odd == 0);
}

static void test_build_id_norm(void)
{
	char out[SYMD_BUILD_ID_MAX + 1];
	const char *why = NULL;

	CHECK_ERR(symd_build_id_norm("0aBc", 4, out, &why), 0);
	CHECK(!strcmp(out, "0abc"));
	CHECK_ERR(symd_build_id_norm("0aBc", 3, out, &why), -EINVAL);
	CHECK(out[0] == '\0' && why && strstr(why, "odd"));
	CHECK_ERR(symd_build_id_norm("..", 2, out, NULL), -EINVAL);
	CHECK(out[0] == '\0');
	CHECK_ERR(symd_build_id_norm(NULL, 0, out, &why), -EINVAL);
	CHECK_ERR(symd_build_id_norm("ab\0d", 4, out, &why), -EINVAL);
}

static void test_str_decode(void)
{
	char out[16];
	const char *why = NULL;
	size_t n, end;
	const char *s;

	s = "\"a\\u00e9\\ud83d\\ude00\\\"\"tail";
	CHECK_ERR(symd_json_str_decode(s, strlen(s), out, sizeof(out), &n,
				       &end, &why), 0);
	CHECK(n == 1 + 2 + 4 + 1 && end == strlen(s) - 4);
	CHECK(!memcmp(out, "a\xc3\xa9\xf0\x9f\x98\x80\"", n));
	/* A short output buffer: the full length is still reported. */
	CHECK_ERR(symd_json_str_decode(s, strlen(s), out, 2, &n, &end, &why),
		  0);
	CHECK(n == 8 && out[0] == 'a' && out[1] == '\xc3');
	CHECK_ERR(symd_json_str_decode(s, strlen(s), NULL, 0, &n, &end, NULL),
		  0);
	CHECK(n == 8);
	s = "\"ab";
	CHECK_ERR(symd_json_str_decode(s, 3, out, sizeof(out), &n, &end, &why),
		  -EINVAL);
	CHECK(end == 3 && !strcmp(why, "unterminated string"));
	s = "\"ab\\";
	CHECK_ERR(symd_json_str_decode(s, 4, out, sizeof(out), &n, &end, &why),
		  -EINVAL);
	CHECK(end == 3);
	CHECK_ERR(symd_json_str_decode("x", 1, out, sizeof(out), &n, &end,
				       &why), -EINVAL);
	CHECK_ERR(symd_json_str_decode("", 0, out, sizeof(out), &n, &end,
				       &why), -EINVAL);
	s = "\"\\u0000\"";
	CHECK_ERR(symd_json_str_decode(s, strlen(s), out, sizeof(out), &n,
				       &end, &why), 0);
	CHECK(n == 1 && out[0] == '\0');
	/* The longest valid code points, and the first beyond. */
	s = "\"\xf4\x8f\xbf\xbf\\udbff\\udfff\"";
	CHECK_ERR(symd_json_str_decode(s, strlen(s), out, sizeof(out), &n,
				       &end, &why), 0);
	CHECK(n == 8 && !memcmp(out, "\xf4\x8f\xbf\xbf\xf4\x8f\xbf\xbf", 8));
	s = "\"\xf5\x80\x80\x80\"";
	CHECK_ERR(symd_json_str_decode(s, strlen(s), out, sizeof(out), &n,
				       &end, &why), -EINVAL);
	CHECK(end == 1);
}

/* The escaped form of @in, as a C string ("" on failure). */
static const char *esc(struct symi_buf *b, const char *in, size_t n)
{
	symi_buf_reset(b);
	if (symd_json_add_str(b, in, n))
		return "";
	return b->p;
}

/* A tiny deterministic PRNG (xorshift64*). */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

/* Encode code point @cp as UTF-8 into @p; returns the length. */
static size_t put_utf8(char *p, uint32_t cp)
{
	if (cp < 0x80) {
		p[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		p[0] = (char)(0xc0 | cp >> 6);
		p[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		p[0] = (char)(0xe0 | cp >> 12);
		p[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		p[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	p[0] = (char)(0xf0 | cp >> 18);
	p[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	p[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	p[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static void test_escape(void)
{
	struct symi_buf b;
	char in[1100], dec[8192];
	size_t n, end, bad = 0, badrt = 0;
	char want[16];
	const char *why;
	int ok = 1;

	symi_buf_init(&b, SYMD_REPLY_MAX);
	CHECK(b.max == SYMD_REPLY_MAX && !b.p && !b.len);
	CHECK(!strcmp(esc(&b, "", 0), "\"\""));
	CHECK(!strcmp(esc(&b, NULL, 0), "\"\""));
	CHECK(!strcmp(esc(&b, "plain text, long enough for words", 33),
		      "\"plain text, long enough for words\""));
	CHECK(!strcmp(esc(&b, "a\"b\\c/d", 7), "\"a\\\"b\\\\c/d\""));
	CHECK(!strcmp(esc(&b, "\b\f\n\r\t", 5), "\"\\b\\f\\n\\r\\t\""));
	CHECK(!strcmp(esc(&b, "x\0y", 3), "\"x\\u0000y\""));
	/* Every control byte: the five short escapes, else \u00XX. */
	for (int c = 0; c < 0x20; c++) {
		static const char shorts[] = "\bb\ff\nn\rr\tt";
		const char *sh = memchr(shorts, c, sizeof(shorts) - 1);
		char ch = (char)c;

		/* memchr() may land on a letter only for c >= 0x20. */
		if (sh)
			snprintf(want, sizeof(want), "\"\\%c\"", sh[1]);
		else
			snprintf(want, sizeof(want), "\"\\u%04x\"", c);
		if (strcmp(esc(&b, &ch, 1), want))
			ok = 0;
	}
	CHECK(ok);
	CHECK(!strcmp(esc(&b, "\x7f", 1), "\"\x7f\""));
	/* Valid UTF-8 passes through: é, €, U+2028, 😀, U+10FFFF. */
	CHECK(!strcmp(esc(&b, "\xc3\xa9\xe2\x82\xac\xe2\x80\xa8\xf0\x9f\x98"
			  "\x80\xf4\x8f\xbf\xbf", 16),
		      "\"\xc3\xa9\xe2\x82\xac\xe2\x80\xa8\xf0\x9f\x98\x80\xf4"
		      "\x8f\xbf\xbf\""));
	/* Ill-formed UTF-8: one U+FFFD per maximal subpart. */
#define FFFD "\xef\xbf\xbd"
	CHECK(!strcmp(esc(&b, "a\xff" "b", 3), "\"a" FFFD "b\""));
	CHECK(!strcmp(esc(&b, "\x80", 1), "\"" FFFD "\""));
	CHECK(!strcmp(esc(&b, "\xc0\xaf", 2), "\"" FFFD FFFD "\""));
	CHECK(!strcmp(esc(&b, "\xe2\x82", 2), "\"" FFFD "\""));
	CHECK(!strcmp(esc(&b, "\xe2\x82x", 3), "\"" FFFD "x\""));
	CHECK(!strcmp(esc(&b, "\xed\xa0\x80", 3), "\"" FFFD FFFD FFFD "\""));
	CHECK(!strcmp(esc(&b, "\xf0\x9f\x98", 3), "\"" FFFD "\""));
	CHECK(!strcmp(esc(&b, "\xf4\x90\x80\x80", 4),
		      "\"" FFFD FFFD FFFD FFFD "\""));
	CHECK(!strcmp(esc(&b, "\xf5", 1), "\"" FFFD "\""));
	/* Specials at every position of an 8-byte word. */
	for (int pos = 0; pos < 17; pos++) {
		char s[17], w[64];

		memset(s, 'a', sizeof(s));
		s[pos] = '"';
		snprintf(w, sizeof(w), "\"%.*s\\\"%.*s\"", pos, s, 16 - pos,
			 s + pos + 1);
		if (strcmp(esc(&b, s, 17), w))
			ok = 0;
	}
	CHECK(ok);
	CHECK_ERR(symd_json_add_cstr(&b, NULL), 0);
	CHECK(b.len >= 4 && !memcmp(b.p + b.len - 4, "null", 4));
	symi_buf_reset(&b);
	CHECK_ERR(symd_json_add_cstr(&b, "a\n"), 0);
	CHECK(b.len == 5 && !memcmp(b.p, "\"a\\n\"", 5));

	/* Round trips: random bytes always give a valid JSON string; valid
	 * UTF-8 (random code points, controls and quotes included) comes
	 * back byte for byte. */
	for (int iter = 0; iter < 2000; iter++) {
		size_t len = (size_t)(rnd() % 300);

		for (size_t i = 0; i < len; i++)
			in[i] = (char)rnd();
		symi_buf_reset(&b);
		if (symd_json_add_str(&b, in, len) ||
		    symd_json_str_decode(b.p, b.len, dec, sizeof(dec), &n,
					 &end, &why) || end != b.len)
			bad++;
		len = 0;
		while (len < 1000) {
			uint32_t cp, r = (uint32_t)rnd();

			/* One, two, three and four bytes equally often. */
			if (r % 4 == 0)
				cp = r >> 8 & 0x7f;
			else if (r % 4 == 1)
				cp = 0x80 + (r >> 8) % 0x780;
			else if (r % 4 == 2)
				cp = 0x800 + (r >> 8) % 0xf800;
			else
				cp = 0x10000 + (r >> 8) % 0x100000;
			if (cp >= 0xd800 && cp <= 0xdfff)
				continue;
			len += put_utf8(in + len, cp);
		}
		symi_buf_reset(&b);
		if (symd_json_add_str(&b, in, len) ||
		    symd_json_str_decode(b.p, b.len, dec, sizeof(dec), &n,
					 &end, &why) || end != b.len ||
		    n != len || memcmp(dec, in, len))
			badrt++;
	}
	CHECK(bad == 0);
	CHECK(badrt == 0);
	symi_buf_release(&b);
	CHECK(!b.p && !b.len && !b.alloc && !b.max);
	symi_buf_release(NULL);
}

static void test_numbers(void)
{
	static const uint64_t u[] = {
		0, 1, 9, 10, 99, 100, 101, 999, 1000, 65535, 4294967295ull,
		4294967296ull, 9007199254740993ull, 10000000000000000000ull,
		UINT64_MAX - 1, UINT64_MAX,
	};
	static const int64_t s[] = {
		0, -1, 1, -9, -10, 99, -100, INT64_MAX, INT64_MIN,
		INT64_MIN + 1,
	};
	struct symi_buf b;
	struct symd_req req;
	char want[32], err[SYMD_REQ_ERRLEN];
	int ok = 1;
	size_t na = 0;

	symi_buf_init(&b, SYMD_REPLY_MAX);
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		symi_buf_reset(&b);
		snprintf(want, sizeof(want), "%" PRIu64, u[i]);
		if (symi_buf_add_u64(&b, u[i]) || b.len != strlen(want) ||
		    memcmp(b.p, want, b.len))
			ok = 0;
		symi_buf_reset(&b);
		snprintf(want, sizeof(want), "0x%" PRIx64, u[i]);
		if (symi_buf_add_lit(&b, "0x") ||
		    symi_buf_add_hex(&b, u[i], 0) || b.len != strlen(want) ||
		    memcmp(b.p, want, b.len))
			ok = 0;
	}
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		symi_buf_reset(&b);
		snprintf(want, sizeof(want), "%" PRId64, s[i]);
		if (symi_buf_add_i64(&b, s[i]) || b.len != strlen(want) ||
		    memcmp(b.p, want, b.len))
			ok = 0;
	}
	for (int i = 0; i < 10000; i++) {
		uint64_t v = rnd() >> (rnd() % 64);

		symi_buf_reset(&b);
		snprintf(want, sizeof(want), "%" PRIu64, v);
		if (symi_buf_add_u64(&b, v) || b.len != strlen(want) ||
		    memcmp(b.p, want, b.len))
			ok = 0;
	}
	CHECK(ok);

	/* What the writer makes, the parser reads back. */
	symi_buf_reset(&b);
	symi_buf_add_lit(&b, "{\"addresses\":[");
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		symi_buf_add_u64(&b, u[i]);
		symi_buf_add_lit(&b, ",\"");
		symi_buf_add_lit(&b, "0x");
		symi_buf_add_hex(&b, u[i], 0);
		symi_buf_add_lit(&b, "\",");
		na += 2;
	}
	symi_buf_setlen(&b, b.len - 1);
	CHECK_ERR(symi_buf_add_lit(&b, "]}"), 0);
	CHECK_ERR(symd_req_parse(b.p, b.len, "ab", NULL, &req, err,
				 sizeof(err)), 0);
	ok = req.naddrs == na;
	for (size_t i = 0; ok && i < na; i++)
		ok = req.addrs[i] == u[i / 2];
	CHECK(ok);
	symd_req_release(&req);
	symi_buf_release(&b);
}

/* The JSON appenders are all or nothing too: an escaped string that does
 * not fit under the cap leaves no trace, even when its unescaped form
 * would.  (The buffer itself: tests/unit/t-buf.c.) */
static void test_json_cap(void)
{
	struct symi_buf b;

	symi_buf_init(&b, 16);
	CHECK_ERR(symi_buf_add_lit(&b, "ab"), 0);
	/* Room for the plain form is made first; the escapes then pass
	 * the cap midway. */
	CHECK_ERR(symd_json_add_str(&b, "\x01\x02\x03", 3), -E2BIG);
	CHECK(b.len == 2 && !strcmp(b.p, "ab"));
	CHECK_ERR(symd_json_add_str(&b, "0123456789abcd", 14), -E2BIG);
	CHECK(b.len == 2 && !strcmp(b.p, "ab"));
	CHECK_ERR(symd_json_add_str(&b, "\x01\x02", 1), 0);
	CHECK(b.len == 10 && !strcmp(b.p, "ab\"\\u0001\""));
	CHECK_ERR(symd_json_add_cstr(&b, NULL), 0);
	CHECK(b.len == 14 && !strcmp(b.p, "ab\"\\u0001\"null"));
	CHECK_ERR(symd_json_add_cstr(&b, "xy"), -E2BIG);
	CHECK(b.len == 14);
	symi_buf_release(&b);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Figures only: parse MB/s on a 1000-address request, escape MB/s. */
static void test_speed(void)
{
	struct symi_buf b, out;
	struct symd_req req;
	char err[SYMD_REQ_ERRLEN];
	size_t iters = 0, bytes = 0;
	double t0, dt;
	int rc = 0;

	symi_buf_init(&b, SYMD_REPLY_MAX);
	symi_buf_init(&out, SYMD_REPLY_MAX);
	symi_buf_add_lit(&b, "{\"modules\": [{\"build_id\": \"");
	symi_buf_add(&b, ID40, 40);
	symi_buf_add_lit(&b, "\", \"addresses\": [");
	for (int i = 0; i < 1000; i++) {
		uint64_t a = 0x7f3a00000000ull + rnd() % 0x10000000;

		if (i)
			symi_buf_add_lit(&b, ", ");
		if (i % 2) {
			symi_buf_add_u64(&b, a);
		} else {
			symi_buf_addc(&b, '"');
			symi_buf_add_lit(&b, "0x");
			symi_buf_add_hex(&b, a, 0);
			symi_buf_addc(&b, '"');
		}
	}
	symi_buf_add_lit(&b, "]}], \"wait_ms\": 2000}");
	t0 = now();
	do {
		for (int i = 0; i < 100; i++) {
			rc |= symd_req_parse(b.p, b.len, NULL, NULL, &req, err,
					     sizeof(err));
			symd_req_release(&req);
			iters++;
		}
		dt = now() - t0;
	} while (dt < 0.2);
	CHECK(rc == 0);
	printf("# parse: %.0f MB/s, %.1f M addresses/s (%zu-byte request "
	       "of 1000 addresses, %zu parses)\n",
	       (double)(iters * b.len) / dt / 1e6,
	       (double)iters * 1000 / dt / 1e6, b.len, iters);

	/* Typical frame strings: a demangled name and a path. */
	t0 = now();
	do {
		for (int i = 0; i < 1000; i++) {
			static const char name[] =
				"std::vector<int, std::allocator<int> >::"
				"_M_realloc_insert(iterator, const int&)";
			static const char path[] =
				"/usr/include/c++/12/bits/vector.tcc";

			symi_buf_reset(&out);
			symd_json_add_str(&out, name, sizeof(name) - 1);
			symd_json_add_str(&out, path, sizeof(path) - 1);
			bytes += sizeof(name) + sizeof(path) - 2;
		}
		dt = now() - t0;
	} while (dt < 0.2);
	printf("# escape: %.0f MB/s on frame-sized strings\n",
	       (double)bytes / dt / 1e6);
	symi_buf_release(&b);
	symi_buf_release(&out);
}

int main(void)
{
	test_valid();
	test_bad();
	test_limits();
	test_truncation();
	test_build_id_norm();
	test_str_decode();
	test_escape();
	test_numbers();
	test_json_cap();
	test_speed();
	return tap_done();
}
