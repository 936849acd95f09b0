/*
 * datpeer: a small C uDAPL (DAT 2.0) peer, used to prove that the Go binding
 * in this module is wire compatible with the OFA DAPL "cma" provider
 * (libdaplofa.so.2, rdma_cm). It runs either role against either another
 * datpeer or a Go implementation of the protocol below.
 *
 * Build (the binary is never committed; build into /tmp or bin/):
 *   cc -O2 -Wall -o $OUT testdata/datpeer/datpeer.c -ldat2
 * Run (the caller sets DAT_OVERRIDE; testdata/datpeer/dat.conf has the
 * ofa-v2-cma-roe-d0 entry for the Soft-RoCE VM of scripts/vmtest.sh):
 *   DAT_OVERRIDE=testdata/datpeer/dat.conf datpeer -s [-P provider] [-p conn_qual]
 *   DAT_OVERRIDE=testdata/datpeer/dat.conf datpeer -c -h 192.0.2.1 [-P provider] [-p conn_qual] [-r]
 * Defaults: provider ofa-v2-cma-roe-d0, conn_qual 9000 (the cma provider uses
 * a conn_qual <= 0xffff as the rdma_cm port directly). The program prints one
 * line per step and ends with "PASSED" (exit 0) or "FAILED: reason" (exit 1).
 * The server prints "listening on conn_qual N" once its PSP exists, so a
 * script can wait for that line before it starts the client.
 * Every wait has a timeout: 10 s, and 30 s for the server's connection request.
 *
 * ============================== PROTOCOL ==============================
 * Roles: server 'S' (0x53), client 'C' (0x43). All integers little-endian.
 *
 * Memory. Each side allocates ONE buffer of 12288 bytes (3 regions of 4096),
 * registers it as one LMR with all privileges (local read/write, remote
 * read/write), DAT_VA_TYPE_VA, and exposes it with the LMR's rmr_context:
 *   region [0] (offset 0)     message area:
 *                               send buffer  = offset 0, 64 bytes;
 *                               recv slot k  = offset 256*(k+1), 256 bytes, k = 0..7
 *   region [1] (offset 4096)  target of the peer's RDMA write; all zero at start
 *   region [2] (offset 8192)  source the peer RDMA-reads; byte i (0..4095) is
 *                               P(role)[i] = (i*7 + role) & 0xff
 * The address of region r of a peer is peer_va + 4096*r, where peer_va is the
 * virtual address in the peer's triplet (below); all remote accesses use the
 * peer's rmr_context.
 *
 * Triplet (16 bytes): u64 virtual_address of the buffer start (the LMR's
 * registered address), u32 segment_length = 12288, u32 rmr_context.
 *
 * Private data.
 *   connect (client):  triplet(16) + ASCII tag "udapl-c"   = 23 bytes
 *                      (tag "reject-me" instead = 25 bytes asks for a reject)
 *   accept (server):   triplet(16) + ASCII tag "udapl-s"   = 23 bytes
 *   reject (server):   ASCII "rejected-by-c" = 13 bytes, passed to dat_cr_reject
 *                      (the cma provider prepends a 4-byte header 02 00 02 00
 *                      on the wire and strips it again on the active side)
 * The tag has no terminator. The receiver sees the field zero-padded to the
 * transport's size (56 bytes for a connect, 196 for an accept on IB/RoCE), so
 * it reads the tag as the bytes from offset 16 up to the first NUL or the end
 * of the data, and compares it exactly. The triplet's length must be 12288.
 *
 * Messages. Every message is a SEND of exactly 64 bytes: an ASCII keyword
 * ("ping", "pong", "wrote", "read", "done", "bye", "over") followed by zero bytes up
 * to 64. A receiver checks the completion's transferred length is 64 and all
 * 64 bytes. Each side posts 8 receives (slots 0..7 above, cookie = k) BEFORE
 * connecting / accepting and posts no more; a side receives 4 messages, which
 * land in slots 0..3 in order. A Go peer needs at least 4 receives of >= 64
 * bytes posted before the connection is established.
 *
 * RDMA. Every RDMA transfer is 4096 bytes:
 *   X writes P(X) to Y:  RDMA WRITE local X[2] -> remote Y[1]
 *   X reads Y's source:  RDMA READ  remote Y[2] -> local X[1]
 * EP attributes: RC, max_rdma_read_in = max_rdma_read_out = 4.
 *
 * Sequence (-> is a SEND; each side waits for each of its own DTOs to
 * complete successfully before its next step):
 *  1. server: post recvs, dat_psp_create(conn_qual), wait for the CR,
 *     dat_cr_query, check the private data (tag "udapl-c", or "reject-me":
 *     then dat_cr_reject("rejected-by-c"), PASSED, exit without teardown).
 *     client: post recvs, dat_ep_connect(private data), wait.
 *     server: dat_cr_accept(triplet + "udapl-s"); wait ESTABLISHED.
 *     client: ESTABLISHED; check the event's private data (tag "udapl-s").
 *     (-r: client sends tag "reject-me", expects PEER_REJECTED, prints the
 *     event's private data if the provider passes it (must then start with
 *     "rejected-by-"), PASSED, exit without teardown.)
 *  2. C -> S "ping";  S checks it;  S -> C "pong";  C checks it.
 *  3. C: RDMA WRITE C[2] -> S[1];  C -> S "wrote";
 *     S: checks S[1] == P('C'), then zeroes S[1].
 *  4. C: RDMA READ S[2] -> C[1]; checks C[1] == P('S'), then zeroes C[1];
 *     C -> S "read".                    (S waits for it before step 5)
 *  5. S: RDMA WRITE S[2] -> C[1];  S -> C "wrote";
 *     C: checks C[1] == P('S').
 *  6. S: RDMA READ C[2] -> S[1]; checks S[1] == P('C');  S -> C "read".
 *  X. Only with -x on both sides (the IB extensions, dat_ib_extensions.h);
 *     the LMR then also has DAT_IB_MEM_PRIV_REMOTE_ATOMIC. A message may
 *     arrive as a send with immediate data (a Go peer sends its -x messages
 *     so): the receiver accepts DAT_IB_DTO_EVENT / DAT_IB_DTO_RECV_MSG_IMMED
 *     for it (extension type RECV_IMMED_DATA, or RDMA_WRITE_IMMED_DATA,
 *     which OFA DAPL reports) and prints the immediate data. W = the first 8 bytes of S[1],
 *     a host-order u64.
 *     X1. C: RDMA WRITE IMMED C[2] -> S[1], immediate 0xC0DE0000 | 'C';
 *         S (which zeroed S[1] before its "read" of step 6): its receive
 *         completes as DAT_IB_DTO_RECV_IMMED with the immediate data and
 *         4096 bytes; checks S[1] == P('C'), zeroes S[1], sets W = 1000;
 *         S -> C "atomic".
 *     X2. C: FETCH_AND_ADD(5) on W into C[0]+128: old value 1000;
 *         CMP_AND_SWAP(1005, 7): old 1005; CMP_AND_SWAP(1, 9): old 7 (no
 *         swap); zeroes C[1];  C -> S "swapped";  S: checks W == 7.
 *     X3. S: RDMA WRITE IMMED S[2] -> C[1], immediate 0xC0DE0000 | 'S';
 *         C: receive as in X1; checks C[1] == P('S').
 *     Each side then has received 6 messages.
 *  7. C -> S "done";  S -> C "bye";  C -> S "over". The side that
 *     disconnects sends last, and only once its send has completed: a
 *     send whose completion the peer's disconnect overtakes fails (on
 *     iWARP it does, though the peer received it).
 *  8. C: dat_ep_disconnect(DAT_CLOSE_GRACEFUL_FLAG); both sides wait for
 *     DAT_CONNECTION_EVENT_DISCONNECTED, then free everything.
 * The server accepts exactly one connection request per run.
 * ======================================================================
 *
 * Seen with libdaplofa.so.2 (DAPL 2.1.10) on rxe0, C against C: the CR's
 * private_data_size is 56 (the 23 bytes sent, zero-padded); the ESTABLISHED
 * event's is 196; the PEER_REJECTED event's is 148 with "rejected-by-c" at
 * offset 0 (header already stripped); dat_cr_query's remote_port_qual is 0.
 * So a peer must not compare private data sizes, only the contents.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dat2/udat.h>
#include <dat2/dat_ib_extensions.h>

#define REGION 4096
#define BUF_SIZE (3 * REGION)
#define MSG_SIZE 64
#define RECV_SLOT 256
#define NUM_RECV 8
#define TRIPLET_SIZE 16
#define WAIT_US (10 * 1000000)
#define CR_WAIT_US (30 * 1000000)
#define TAG_CLIENT "udapl-c"
#define TAG_SERVER "udapl-s"
#define TAG_REJECT "reject-me"
#define REJECT_DATA "rejected-by-c"
#define REJECT_PREFIX "rejected-by-"
#define IMMED_BASE 0xC0DE0000u
#define ATOMIC_SLOT 128		/* offset in region [0] of the atomics' result */

static int ext;			/* -x: the IB extensions phase */

static const char *role_name = "?";
static int role;		/* 'S' or 'C' */

static DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
static DAT_EVD_HANDLE async_evd = DAT_HANDLE_NULL;
static DAT_PZ_HANDLE pz = DAT_HANDLE_NULL;
static DAT_LMR_HANDLE lmr = DAT_HANDLE_NULL;
static DAT_EVD_HANDLE cr_evd = DAT_HANDLE_NULL, conn_evd = DAT_HANDLE_NULL;
static DAT_EVD_HANDLE req_evd = DAT_HANDLE_NULL, rcv_evd = DAT_HANDLE_NULL;
static DAT_EP_HANDLE ep = DAT_HANDLE_NULL;
static DAT_PSP_HANDLE psp = DAT_HANDLE_NULL;

static unsigned char *buf;
static DAT_LMR_CONTEXT lmr_ctx;
static DAT_RMR_CONTEXT rmr_ctx;
static DAT_VADDR buf_va;

static DAT_VADDR peer_va;
static DAT_RMR_CONTEXT peer_rmr;
static int next_recv;		/* next receive slot expected to complete */
static DAT_UINT64 next_cookie = 100;	/* cookies of requests */

static void step(const char *fmt, ...)
{
	va_list ap;

	printf("datpeer[%s]: ", role_name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static void fail(const char *fmt, ...)
{
	va_list ap;

	printf("datpeer[%s]: FAILED: ", role_name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(1);
}

/* check fails with dat_strerror's text unless r is DAT_SUCCESS. */
static void check(DAT_RETURN r, const char *what)
{
	const char *major = "?", *minor = "?";

	if (r == DAT_SUCCESS)
		return;
	if (dat_strerror(r, &major, &minor) != DAT_SUCCESS)
		major = minor = "?";
	fail("%s: %s %s (0x%08x)", what, major, minor, (unsigned)r);
}

static const char *event_name(DAT_EVENT_NUMBER n)
{
	switch (n) {
	case DAT_DTO_COMPLETION_EVENT: return "DTO_COMPLETION";
	case DAT_CONNECTION_REQUEST_EVENT: return "CONNECTION_REQUEST";
	case DAT_CONNECTION_EVENT_ESTABLISHED: return "ESTABLISHED";
	case DAT_CONNECTION_EVENT_PEER_REJECTED: return "PEER_REJECTED";
	case DAT_CONNECTION_EVENT_NON_PEER_REJECTED: return "NON_PEER_REJECTED";
	case DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR: return "ACCEPT_COMPLETION_ERROR";
	case DAT_CONNECTION_EVENT_DISCONNECTED: return "DISCONNECTED";
	case DAT_CONNECTION_EVENT_BROKEN: return "BROKEN";
	case DAT_CONNECTION_EVENT_TIMED_OUT: return "TIMED_OUT";
	case DAT_CONNECTION_EVENT_UNREACHABLE: return "UNREACHABLE";
	default: return "other";
	}
}

/* wait_event waits for one event on evd; a timeout or an error fails. */
static void wait_event(DAT_EVD_HANDLE evd, DAT_TIMEOUT us, DAT_EVENT *ev, const char *what)
{
	DAT_COUNT nmore = 0;
	DAT_RETURN r;
	char msg[160];

	memset(ev, 0, sizeof(*ev));
	r = dat_evd_wait(evd, us, 1, ev, &nmore);
	if (DAT_GET_TYPE(r) == DAT_TIMEOUT_EXPIRED)
		fail("timeout (%u s) waiting for %s", (unsigned)(us / 1000000), what);
	snprintf(msg, sizeof(msg), "dat_evd_wait for %s", what);
	check(r, msg);
}

static void expect_conn_event(DAT_EVENT *ev, DAT_EVENT_NUMBER want, const char *what)
{
	if (ev->event_number != want)
		fail("%s: got event 0x%x (%s), want 0x%x (%s)", what,
		     (unsigned)ev->event_number, event_name(ev->event_number),
		     (unsigned)want, event_name(want));
}

static unsigned char pattern(int r, int i)
{
	return (unsigned char)((i * 7 + r) & 0xff);
}

static void fill_pattern(unsigned char *p, int r)
{
	for (int i = 0; i < REGION; i++)
		p[i] = pattern(r, i);
}

static void check_pattern(const unsigned char *p, int r, const char *what)
{
	for (int i = 0; i < REGION; i++)
		if (p[i] != pattern(r, i))
			fail("%s: byte %d is 0x%02x, want 0x%02x (pattern of '%c')",
			     what, i, p[i], pattern(r, i), r);
}

/* put/get little-endian integers */
static void put_le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* make_pdata writes triplet + tag into out and returns its length. */
static int make_pdata(unsigned char *out, const char *tag)
{
	put_le(out, buf_va, 8);
	put_le(out + 8, BUF_SIZE, 4);
	put_le(out + 12, rmr_ctx, 4);
	memcpy(out + TRIPLET_SIZE, tag, strlen(tag));
	return TRIPLET_SIZE + (int)strlen(tag);
}

/*
 * parse_pdata reads a peer's triplet and tag (up to the first NUL or the end)
 * from private data; it fails unless the data holds a triplet and the length
 * is BUF_SIZE. It returns the tag in tag (NUL-terminated).
 */
static void parse_pdata(const void *pdata, DAT_COUNT size, char *tag, size_t tagcap, const char *what)
{
	const unsigned char *p = pdata;
	uint64_t len;
	size_t n = 0;

	if (p == NULL || size < TRIPLET_SIZE)
		fail("%s: private data too short (%d bytes, ptr %p)", what, (int)size, pdata);
	peer_va = get_le(p, 8);
	len = get_le(p + 8, 4);
	peer_rmr = (DAT_RMR_CONTEXT)get_le(p + 12, 4);
	while (TRIPLET_SIZE + (DAT_COUNT)n < size && p[TRIPLET_SIZE + n] != 0 && n + 1 < tagcap) {
		tag[n] = (char)p[TRIPLET_SIZE + n];
		n++;
	}
	tag[n] = 0;
	step("%s: private data %d bytes: peer va 0x%llx len %llu rmr_context 0x%x tag \"%s\"",
	     what, (int)size, (unsigned long long)peer_va, (unsigned long long)len,
	     (unsigned)peer_rmr, tag);
	if (len != BUF_SIZE)
		fail("%s: peer triplet length %llu, want %d", what, (unsigned long long)len, BUF_SIZE);
}

static DAT_LMR_TRIPLET local_iov(size_t off, size_t len)
{
	DAT_LMR_TRIPLET t;

	t.virtual_address = buf_va + off;
	t.segment_length = (DAT_SEG_LENGTH)len;
	t.lmr_context = lmr_ctx;
	return t;
}

/* wait_request waits for the completion of the request with the given cookie. */
static void wait_request(DAT_UINT64 cookie, DAT_SEG_LENGTH want_len, const char *what)
{
	DAT_EVENT ev;
	DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;

	wait_event(req_evd, WAIT_US, &ev, what);
	if (ev.event_number != DAT_DTO_COMPLETION_EVENT)
		fail("%s: got event 0x%x, want a DTO completion", what, (unsigned)ev.event_number);
	if (d->status != DAT_DTO_SUCCESS)
		fail("%s: completion status %d", what, (int)d->status);
	if (d->user_cookie.as_64 != cookie)
		fail("%s: completion cookie %llu, want %llu", what,
		     (unsigned long long)d->user_cookie.as_64, (unsigned long long)cookie);
	if (d->transfered_length != want_len)
		fail("%s: transferred length %u, want %u", what,
		     (unsigned)d->transfered_length, (unsigned)want_len);
}

static void send_msg(const char *word)
{
	DAT_LMR_TRIPLET iov = local_iov(0, MSG_SIZE);
	DAT_DTO_COOKIE cookie;
	char what[64];

	memset(buf, 0, MSG_SIZE);
	memcpy(buf, word, strlen(word));
	cookie.as_64 = next_cookie++;
	snprintf(what, sizeof(what), "send \"%s\"", word);
	check(dat_ep_post_send(ep, 1, &iov, cookie, DAT_COMPLETION_DEFAULT_FLAG), what);
	wait_request(cookie.as_64, MSG_SIZE, what);
	step("sent \"%s\" (64 bytes)", word);
}

static void recv_msg(const char *word)
{
	DAT_EVENT ev;
	DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;
	unsigned char want[MSG_SIZE];
	unsigned char *got;
	char what[64], immed[48] = "";
	int k = next_recv++;

	if (k >= NUM_RECV)
		fail("out of receive slots");
	snprintf(what, sizeof(what), "receive \"%s\"", word);
	wait_event(rcv_evd, WAIT_US, &ev, what);
	if (d->status != DAT_DTO_SUCCESS)
		fail("%s: completion status %d (event 0x%x)", what, (int)d->status, (unsigned)ev.event_number);
	if ((int)ev.event_number == DAT_IB_DTO_EVENT) {
		DAT_IB_EXTENSION_EVENT_DATA *x = (void *)ev.event_extension_data;

		/* OFA DAPL reports such a message with type RDMA_WRITE_IMMED_DATA;
		 * dat_ib_extensions.h names RECV_IMMED_DATA for it. */
		if ((int)d->operation != DAT_IB_DTO_RECV_MSG_IMMED ||
		    (x->type != DAT_IB_RECV_IMMED_DATA && x->type != DAT_IB_RDMA_WRITE_IMMED_DATA))
			fail("%s: extended event with operation %d, type %d; want RECV_MSG_IMMED (%d)",
			     what, (int)d->operation, (int)x->type, DAT_IB_DTO_RECV_MSG_IMMED);
		snprintf(immed, sizeof(immed), ", immediate data 0x%08x", (unsigned)x->val.immed.data);
	} else if (ev.event_number != DAT_DTO_COMPLETION_EVENT)
		fail("%s: got event 0x%x, want a DTO completion", what, (unsigned)ev.event_number);
	if (d->status != DAT_DTO_SUCCESS)
		fail("%s: completion status %d", what, (int)d->status);
	if (d->user_cookie.as_64 != (DAT_UINT64)k)
		fail("%s: completion cookie %llu, want slot %d", what,
		     (unsigned long long)d->user_cookie.as_64, k);
	if (d->transfered_length != MSG_SIZE)
		fail("%s: message length %u, want %d", what, (unsigned)d->transfered_length, MSG_SIZE);
	got = buf + RECV_SLOT * (k + 1);
	memset(want, 0, sizeof(want));
	memcpy(want, word, strlen(word));
	if (memcmp(got, want, MSG_SIZE) != 0)
		fail("%s: slot %d holds \"%.*s\" (or non-zero padding)", what, k, MSG_SIZE, (char *)got);
	step("received \"%s\" (64 bytes, slot %d%s)", word, k, immed);
}

/* wait_ib_request waits for the extended completion of the request cookie. */
static void wait_ib_request(DAT_UINT64 cookie, int op, DAT_IB_EXT_TYPE type, DAT_SEG_LENGTH want_len,
			    const char *what)
{
	DAT_EVENT ev;
	DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;
	DAT_IB_EXTENSION_EVENT_DATA *x = (void *)ev.event_extension_data;

	wait_event(req_evd, WAIT_US, &ev, what);
	if ((int)ev.event_number != DAT_IB_DTO_EVENT)
		fail("%s: got event 0x%x, want DAT_IB_DTO_EVENT", what, (unsigned)ev.event_number);
	if (d->status != DAT_DTO_SUCCESS || x->status != DAT_OP_SUCCESS)
		fail("%s: completion status %d, extension status %d", what, (int)d->status, (int)x->status);
	if (d->user_cookie.as_64 != cookie)
		fail("%s: completion cookie %llu, want %llu", what,
		     (unsigned long long)d->user_cookie.as_64, (unsigned long long)cookie);
	if (x->type != type)
		fail("%s: extension type %d, want %d", what, (int)x->type, (int)type);
	if ((int)d->operation != op)
		step("note: %s: operation %d, not %d", what, (int)d->operation, (int)op);
	if (d->transfered_length != want_len)
		fail("%s: transferred length %u, want %u", what,
		     (unsigned)d->transfered_length, (unsigned)want_len);
}

/* write_immed writes region [2] to the peer's region [1] with immediate data. */
static void write_immed(void)
{
	DAT_LMR_TRIPLET liov = local_iov(2 * REGION, REGION);
	DAT_RMR_TRIPLET riov;
	DAT_DTO_COOKIE cookie;

	cookie.as_64 = next_cookie++;
	riov.virtual_address = peer_va + REGION;
	riov.segment_length = REGION;
	riov.rmr_context = peer_rmr;
	check(dat_ib_post_rdma_write_immed(ep, 1, &liov, cookie, &riov, IMMED_BASE | role,
					   DAT_COMPLETION_DEFAULT_FLAG), "dat_ib_post_rdma_write_immed");
	wait_ib_request(cookie.as_64, DAT_IB_DTO_RDMA_WRITE_IMMED, DAT_IB_RDMA_WRITE_IMMED, REGION,
			"RDMA write with immediate data");
	step("RDMA write with immediate data 0x%08x of 4096 bytes complete", IMMED_BASE | role);
}

/* recv_write_immed waits for the receive the peer's write_immed consumes. */
static void recv_write_immed(int peer)
{
	DAT_EVENT ev;
	DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;
	DAT_IB_EXTENSION_EVENT_DATA *x = (void *)ev.event_extension_data;
	const char *what = "receive of the peer's RDMA write with immediate data";
	int k = next_recv++;

	wait_event(rcv_evd, WAIT_US, &ev, what);
	if ((int)ev.event_number != DAT_IB_DTO_EVENT)
		fail("%s: got event 0x%x, want DAT_IB_DTO_EVENT", what, (unsigned)ev.event_number);
	if (d->status != DAT_DTO_SUCCESS)
		fail("%s: completion status %d", what, (int)d->status);
	if (d->user_cookie.as_64 != (DAT_UINT64)k)
		fail("%s: completion cookie %llu, want slot %d", what, (unsigned long long)d->user_cookie.as_64, k);
	if ((int)d->operation != DAT_IB_DTO_RECV_IMMED || x->type != DAT_IB_RDMA_WRITE_IMMED_DATA)
		fail("%s: operation %d, type %d; want RECV_IMMED (%d), RDMA_WRITE_IMMED_DATA (%d)", what,
		     (int)d->operation, (int)x->type, DAT_IB_DTO_RECV_IMMED, DAT_IB_RDMA_WRITE_IMMED_DATA);
	if (x->val.immed.data != (IMMED_BASE | peer))
		fail("%s: immediate data 0x%08x, want 0x%08x", what, (unsigned)x->val.immed.data, IMMED_BASE | peer);
	if (d->transfered_length != REGION)
		fail("%s: transferred length %u, want %d", what, (unsigned)d->transfered_length, REGION);
	check_pattern(buf + REGION, peer, "region [1] after the peer's RDMA write with immediate data");
	step("received RDMA write with immediate data 0x%08x (4096 bytes, slot %d, data checked)",
	     (unsigned)x->val.immed.data, k);
}

/* atomic posts fetch-and-add (swap_val unused) or compare-and-swap on W. */
static void atomic(int cas, uint64_t v1, uint64_t swap_val, uint64_t want_old)
{
	DAT_LMR_TRIPLET liov = local_iov(ATOMIC_SLOT, 8);
	DAT_RMR_TRIPLET riov;
	DAT_DTO_COOKIE cookie;
	uint64_t old;

	cookie.as_64 = next_cookie++;
	riov.virtual_address = peer_va + REGION;
	riov.segment_length = 8;
	riov.rmr_context = peer_rmr;
	memset(buf + ATOMIC_SLOT, 0xff, 8);
	if (cas) {
		check(dat_ib_post_cmp_and_swap(ep, v1, swap_val, &liov, cookie, &riov, DAT_COMPLETION_DEFAULT_FLAG),
		      "dat_ib_post_cmp_and_swap");
		wait_ib_request(cookie.as_64, DAT_IB_DTO_CMP_SWAP, DAT_IB_CMP_AND_SWAP, 8, "compare-and-swap");
	} else {
		check(dat_ib_post_fetch_and_add(ep, v1, &liov, cookie, &riov, DAT_COMPLETION_DEFAULT_FLAG),
		      "dat_ib_post_fetch_and_add");
		wait_ib_request(cookie.as_64, DAT_IB_DTO_FETCH_ADD, DAT_IB_FETCH_AND_ADD, 8, "fetch-and-add");
	}
	memcpy(&old, buf + ATOMIC_SLOT, 8);
	if (old != want_old)
		fail("%s: old value %llu, want %llu", cas ? "compare-and-swap" : "fetch-and-add",
		     (unsigned long long)old, (unsigned long long)want_old);
	step("%s(%llu%s) complete, old value %llu", cas ? "compare-and-swap" : "fetch-and-add",
	     (unsigned long long)v1, cas ? ", swap" : "", (unsigned long long)old);
}

static void rdma(int write)
{
	DAT_LMR_TRIPLET liov;
	DAT_RMR_TRIPLET riov;
	DAT_DTO_COOKIE cookie;
	const char *what = write ? "RDMA write" : "RDMA read";

	cookie.as_64 = next_cookie++;
	if (write) {		/* local [2] -> remote [1] */
		liov = local_iov(2 * REGION, REGION);
		riov.virtual_address = peer_va + REGION;
	} else {		/* remote [2] -> local [1] */
		liov = local_iov(REGION, REGION);
		riov.virtual_address = peer_va + 2 * REGION;
	}
	riov.segment_length = REGION;
	riov.rmr_context = peer_rmr;
	if (write)
		check(dat_ep_post_rdma_write(ep, 1, &liov, cookie, &riov, DAT_COMPLETION_DEFAULT_FLAG),
		      "dat_ep_post_rdma_write");
	else
		check(dat_ep_post_rdma_read(ep, 1, &liov, cookie, &riov, DAT_COMPLETION_DEFAULT_FLAG),
		      "dat_ep_post_rdma_read");
	wait_request(cookie.as_64, REGION, what);
	step("%s of 4096 bytes: local 0x%llx <-> remote 0x%llx complete", what,
	     (unsigned long long)liov.virtual_address, (unsigned long long)riov.virtual_address);
}

static void setup(char *provider)
{
	DAT_MEM_PRIV_FLAGS priv = DAT_MEM_PRIV_ALL_FLAG | (ext ? DAT_IB_MEM_PRIV_REMOTE_ATOMIC : 0);
	DAT_REGION_DESCRIPTION region;
	DAT_VLEN reg_len = 0;
	DAT_EP_ATTR attr;

	if (getenv("DAT_OVERRIDE") == NULL)
		step("warning: DAT_OVERRIDE is not set; /etc/dat.conf is used");
	check(dat_ia_open(provider, 8, &async_evd, &ia), "dat_ia_open");
	step("opened IA %s", provider);
	check(dat_pz_create(ia, &pz), "dat_pz_create");

	if (posix_memalign((void **)&buf, 4096, BUF_SIZE) != 0)
		fail("posix_memalign");
	memset(buf, 0, BUF_SIZE);
	fill_pattern(buf + 2 * REGION, role);
	region.for_va = buf;
	check(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, region, BUF_SIZE, pz, priv,
			     DAT_VA_TYPE_VA, &lmr, &lmr_ctx, &rmr_ctx, &reg_len, &buf_va),
	      "dat_lmr_create");
	step("registered %d bytes at 0x%llx: lmr_context 0x%x rmr_context 0x%x (registered 0x%llx, %llu bytes)",
	     BUF_SIZE, (unsigned long long)(uintptr_t)buf, (unsigned)lmr_ctx, (unsigned)rmr_ctx,
	     (unsigned long long)buf_va, (unsigned long long)reg_len);
	/* the triplet carries the address the peer uses; with VA it is the buffer's */
	if (buf_va != (DAT_VADDR)(uintptr_t)buf)
		step("note: registered address differs from the buffer address; using the buffer address");
	buf_va = (DAT_VADDR)(uintptr_t)buf;

	check(dat_evd_create(ia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &req_evd), "dat_evd_create(request)");
	check(dat_evd_create(ia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &rcv_evd), "dat_evd_create(recv)");
	check(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &conn_evd),
	      "dat_evd_create(connection)");
	if (role == 'S')
		check(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr_evd), "dat_evd_create(cr)");

	memset(&attr, 0, sizeof(attr));
	attr.service_type = DAT_SERVICE_TYPE_RC;
	attr.max_message_size = BUF_SIZE;
	attr.max_rdma_size = BUF_SIZE;
	attr.qos = DAT_QOS_BEST_EFFORT;
	attr.recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	attr.request_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	attr.max_recv_dtos = NUM_RECV;
	attr.max_request_dtos = 8;
	attr.max_recv_iov = 1;
	attr.max_request_iov = 1;
	attr.max_rdma_read_in = 4;
	attr.max_rdma_read_out = 4;
	check(dat_ep_create(ia, pz, rcv_evd, req_evd, conn_evd, &attr, &ep), "dat_ep_create");
	step("created EVDs and EP (RC, rdma_read in/out 4)");

	for (int k = 0; k < NUM_RECV; k++) {
		DAT_LMR_TRIPLET iov = local_iov(RECV_SLOT * (k + 1), RECV_SLOT);
		DAT_DTO_COOKIE cookie;

		cookie.as_64 = (DAT_UINT64)k;
		check(dat_ep_post_recv(ep, 1, &iov, cookie, DAT_COMPLETION_DEFAULT_FLAG), "dat_ep_post_recv");
	}
	step("posted %d receives of %d bytes", NUM_RECV, RECV_SLOT);
}

static void drain(DAT_EVD_HANDLE evd)
{
	DAT_EVENT ev;

	if (evd == DAT_HANDLE_NULL)
		return;
	while (dat_evd_dequeue(evd, &ev) == DAT_SUCCESS)
		;
}

static void teardown(void)
{
	if (ep != DAT_HANDLE_NULL)
		check(dat_ep_free(ep), "dat_ep_free");
	if (psp != DAT_HANDLE_NULL)
		check(dat_psp_free(psp), "dat_psp_free");
	/* flushed receives and any late connection events */
	drain(rcv_evd);
	drain(req_evd);
	drain(conn_evd);
	drain(cr_evd);
	check(dat_lmr_free(lmr), "dat_lmr_free");
	check(dat_evd_free(req_evd), "dat_evd_free(request)");
	check(dat_evd_free(rcv_evd), "dat_evd_free(recv)");
	check(dat_evd_free(conn_evd), "dat_evd_free(connection)");
	if (cr_evd != DAT_HANDLE_NULL)
		check(dat_evd_free(cr_evd), "dat_evd_free(cr)");
	check(dat_pz_free(pz), "dat_pz_free");
	check(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG), "dat_ia_close");
	free(buf);
	step("freed everything");
}

static void wait_disconnected(void)
{
	DAT_EVENT ev;

	wait_event(conn_evd, WAIT_US, &ev, "DISCONNECTED");
	expect_conn_event(&ev, DAT_CONNECTION_EVENT_DISCONNECTED, "disconnect");
	step("connection event DISCONNECTED");
}

static int server(DAT_CONN_QUAL cq)
{
	DAT_EVENT ev;
	DAT_CR_HANDLE cr;
	DAT_CR_PARAM crp;
	unsigned char pdata[64];
	char tag[48];
	int n;

	check(dat_psp_create(ia, cq, cr_evd, DAT_PSP_CONSUMER_FLAG, &psp), "dat_psp_create");
	step("listening on conn_qual %llu", (unsigned long long)cq);

	wait_event(cr_evd, CR_WAIT_US, &ev, "a connection request");
	expect_conn_event(&ev, DAT_CONNECTION_REQUEST_EVENT, "connection request");
	cr = ev.event_data.cr_arrival_event_data.cr_handle;
	memset(&crp, 0, sizeof(crp));
	check(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp), "dat_cr_query");
	step("connection request arrived (remote port qual %llu)",
	     (unsigned long long)crp.remote_port_qual);
	parse_pdata(crp.private_data, crp.private_data_size, tag, sizeof(tag), "connection request");

	if (strcmp(tag, TAG_REJECT) == 0) {
		check(dat_cr_reject(cr, (DAT_COUNT)strlen(REJECT_DATA), REJECT_DATA), "dat_cr_reject");
		step("rejected the request with private data \"%s\"", REJECT_DATA);
		/*
		 * OFA DAPL's cma provider destroys the rejected request's rdma_cm
		 * id while its CM thread may still handle it, and tearing down
		 * after a reject crashes the process now and then (in CI: once
		 * after "freed everything" with the IA closed right away, once
		 * in teardown 200 ms later). What this run checks is the reject
		 * on the wire, so it leaves its objects to the process's exit.
		 */
		step("PASSED (reject)");
		_exit(0);
	}
	if (strcmp(tag, TAG_CLIENT) != 0) {
		dat_cr_reject(cr, 7, "bad-tag");
		fail("connection request tag \"%s\", want \"%s\" or \"%s\"", tag, TAG_CLIENT, TAG_REJECT);
	}

	n = make_pdata(pdata, TAG_SERVER);
	check(dat_cr_accept(cr, ep, n, pdata), "dat_cr_accept");
	step("accepted with %d bytes of private data (tag \"%s\")", n, TAG_SERVER);
	wait_event(conn_evd, WAIT_US, &ev, "ESTABLISHED");
	expect_conn_event(&ev, DAT_CONNECTION_EVENT_ESTABLISHED, "accept");
	step("connection event ESTABLISHED");

	recv_msg("ping");
	send_msg("pong");

	recv_msg("wrote");
	check_pattern(buf + REGION, 'C', "region [1] after the client's RDMA write");
	step("region [1] holds the client's pattern");
	memset(buf + REGION, 0, REGION);

	recv_msg("read");

	rdma(1);
	send_msg("wrote");

	rdma(0);
	check_pattern(buf + REGION, 'C', "region [1] after RDMA read of the client's region [2]");
	step("RDMA read data matches the client's pattern");
	if (ext)		/* X1's write must fill it anew */
		memset(buf + REGION, 0, REGION);
	send_msg("read");

	if (ext) {
		uint64_t w = 1000;

		recv_write_immed('C');
		memset(buf + REGION, 0, REGION);
		memcpy(buf + REGION, &w, 8);
		send_msg("atomic");
		recv_msg("swapped");
		memcpy(&w, buf + REGION, 8);
		if (w != 7)
			fail("the word after the client's atomics is %llu, want 7", (unsigned long long)w);
		step("the client's atomics left 7");
		write_immed();
	}

	recv_msg("done");
	send_msg("bye");
	recv_msg("over");
	wait_disconnected();
	teardown();
	step("PASSED");
	return 0;
}

static int client(const char *host, DAT_CONN_QUAL cq, int reject)
{
	struct addrinfo hints, *ai;
	unsigned char pdata[64];
	DAT_CONNECTION_EVENT_DATA *cd;
	DAT_EVENT ev;
	char tag[48];
	int n, rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	rc = getaddrinfo(host, NULL, &hints, &ai);
	if (rc != 0)
		fail("getaddrinfo %s: %s", host, gai_strerror(rc));

	n = make_pdata(pdata, reject ? TAG_REJECT : TAG_CLIENT);
	check(dat_ep_connect(ep, (DAT_IA_ADDRESS_PTR)ai->ai_addr, cq, WAIT_US, n, pdata,
			     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG), "dat_ep_connect");
	freeaddrinfo(ai);
	step("connecting to %s conn_qual %llu with %d bytes of private data (tag \"%s\")",
	     host, (unsigned long long)cq, n, reject ? TAG_REJECT : TAG_CLIENT);

	wait_event(conn_evd, WAIT_US, &ev, "the connection event");
	cd = &ev.event_data.connect_event_data;
	if (reject) {
		expect_conn_event(&ev, DAT_CONNECTION_EVENT_PEER_REJECTED, "connect");
		if (cd->private_data != NULL && cd->private_data_size > 0) {
			const char *p = cd->private_data;
			int len = 0;

			while (len < cd->private_data_size && p[len] != 0)
				len++;
			step("connection event PEER_REJECTED, private data %d bytes: \"%.*s\"",
			     (int)cd->private_data_size, len, p);
			if (strncmp(p, REJECT_PREFIX, strlen(REJECT_PREFIX)) != 0)
				fail("reject private data does not start with \"%s\"", REJECT_PREFIX);
		} else {
			step("connection event PEER_REJECTED, no private data passed by the provider");
		}
		/*
		 * As on the server's side of a reject (above): the provider's
		 * teardown after a reject crashed the rejected client too, once
		 * in CI, on its way out after "freed everything" (Linux 6.12).
		 */
		step("PASSED (reject)");
		_exit(0);
	}
	expect_conn_event(&ev, DAT_CONNECTION_EVENT_ESTABLISHED, "connect");
	step("connection event ESTABLISHED");
	parse_pdata(cd->private_data, cd->private_data_size, tag, sizeof(tag), "accept");
	if (strcmp(tag, TAG_SERVER) != 0)
		fail("accept tag \"%s\", want \"%s\"", tag, TAG_SERVER);

	send_msg("ping");
	recv_msg("pong");

	rdma(1);
	send_msg("wrote");

	rdma(0);
	check_pattern(buf + REGION, 'S', "region [1] after RDMA read of the server's region [2]");
	step("RDMA read data matches the server's pattern");
	memset(buf + REGION, 0, REGION);
	send_msg("read");

	recv_msg("wrote");
	check_pattern(buf + REGION, 'S', "region [1] after the server's RDMA write");
	step("region [1] holds the server's pattern");
	recv_msg("read");

	if (ext) {
		write_immed();
		recv_msg("atomic");
		atomic(0, 5, 0, 1000);
		atomic(1, 1005, 7, 1005);
		atomic(1, 1, 9, 7);
		memset(buf + REGION, 0, REGION);
		send_msg("swapped");
		recv_write_immed('S');
	}

	send_msg("done");
	recv_msg("bye");
	send_msg("over");

	check(dat_ep_disconnect(ep, DAT_CLOSE_GRACEFUL_FLAG), "dat_ep_disconnect");
	step("disconnecting (graceful)");
	wait_disconnected();
	teardown();
	step("PASSED");
	return 0;
}

/*
 * query (-q) opens the IA and prints what dat_ia_query says that a Go test
 * compares with udat's IA.Query: "ia NAME=VALUE" lines for some IA
 * attributes, then one "attr NAME=VALUE" line per provider-specific
 * attribute, in order.
 */
static int query(char *provider)
{
	DAT_IA_ATTR a;
	DAT_PROVIDER_ATTR p;

	check(dat_ia_open(provider, 8, &async_evd, &ia), "dat_ia_open");
	check(dat_ia_query(ia, &async_evd, DAT_IA_FIELD_ALL, &a, DAT_PROVIDER_FIELD_ALL, &p), "dat_ia_query");
	printf("ia extension_supported=%d\n", (int)a.extension_supported);
	printf("ia extension_version=%d\n", (int)a.extension_version);
	printf("ia max_message_size=%llu\n", (unsigned long long)a.max_message_size);
	printf("ia optimal_buffer_alignment=%d\n", (int)p.optimal_buffer_alignment);
	for (int i = 0; i < p.num_provider_specific_attr; i++)
		printf("attr %s=%s\n", p.provider_specific_attr[i].name, p.provider_specific_attr[i].value);
	check(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG), "dat_ia_close");
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: datpeer -s [-x] [-P provider] [-p conn_qual]\n"
		"       datpeer -c -h host [-x] [-P provider] [-p conn_qual] [-r]\n"
		"       datpeer -q [-P provider]   (print dat_ia_query's attributes)\n"
		"defaults: -P ofa-v2-cma-roe-d0 -p 9000; set DAT_OVERRIDE to a dat.conf\n");
	exit(2);
}

int main(int argc, char **argv)
{
	char *provider = "ofa-v2-cma-roe-d0";
	const char *host = NULL;
	DAT_CONN_QUAL cq = 9000;
	int opt, reject = 0, q = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "scqrxh:P:p:")) != -1) {
		switch (opt) {
		case 's': role = 'S'; role_name = "server"; break;
		case 'c': role = 'C'; role_name = "client"; break;
		case 'r': reject = 1; break;
		case 'x': ext = 1; break;
		case 'q': q = 1; break;
		case 'h': host = optarg; break;
		case 'P': provider = optarg; break;
		case 'p': cq = strtoull(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (q)
		return query(provider);
	if (role == 0 || optind != argc || (role == 'C' && host == NULL) ||
	    (role == 'S' && (host != NULL || reject)))
		usage();

	setup(provider);
	return role == 'S' ? server(cq) : client(host, cq, reject);
}
