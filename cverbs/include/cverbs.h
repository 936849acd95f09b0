/*
 * C helpers for package cverbs.
 *
 * Everything here is static inline: the data-path verbs (ibv_post_send,
 * ibv_post_recv, ibv_poll_cq, ...) are static inline in verbs.h and cannot be
 * called from Go directly, and the unions of struct ibv_send_wr are awkward to
 * set from Go (cgo sees them as byte arrays).
 */
#ifndef CVERBS_H
#define CVERBS_H

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_cma.h>

/*
 * A send work request as Go writes it, in place, into C memory: the scalar
 * fields of struct ibv_send_wr, including those of its unions.
 * cverbs_post_send expands the descriptors into the WRs, which keeps Go's
 * side to a few plain stores per WR.
 */
struct cverbs_send_desc {
	uint64_t wr_id;
	uint64_t remote_addr;
	uint64_t compare_add;
	uint64_t swap;
	/* UD sends (ah != 0): the address handle and the remote QP. */
	uintptr_t ah;
	uint32_t rkey;
	uint32_t imm; /* host byte order */
	uint32_t remote_qpn;
	uint32_t remote_qkey;
	uint32_t opcode; /* enum ibv_wr_opcode */
	uint32_t send_flags;
	int32_t num_sge;
	uint32_t pad;
};

/* Result of a batch post: the verb's return value and the index of bad_wr. */
struct cverbs_post_result {
	int rc;
	int bad;
};

/*
 * cverbs_queued_all is how many of n WRs a failed ibv_post_send that named
 * no bad WR has queued. The verbs return a positive errno and point bad_wr
 * at the first WR not queued. libsiw (soft-iWARP) writes the WRs into the
 * send queue it shares with the kernel, then rings the kernel's doorbell
 * with a write(2); when that write fails (ENOTCONN) it returns write's -1
 * and leaves bad_wr NULL, with every WR queued: the kernel takes them the
 * next time it looks at the queue (after the WR before them, at a ring,
 * or at the flush of the QP's error state; cverbs_ring_again makes sure
 * one of these comes). A negative return without a bad WR therefore means
 * all n were posted; any other failure without one, none.
 */
static inline int cverbs_queued_all(int rc, int n)
{
	return rc < 0 ? n : 0;
}

/*
 * A send queue's doorbell where the provider shares the queue with the
 * kernel (rxe, siw): the kernel's POST_SEND command with no work requests,
 * which has the kernel look at the queue.
 */
struct cverbs_doorbell {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_post_send cmd;
	struct ib_uverbs_post_send_resp resp;
};

enum { CVERBS_DOORBELL_LEN = sizeof(struct ib_uverbs_cmd_hdr) + sizeof(struct ib_uverbs_post_send) };

static inline void cverbs_doorbell_init(struct cverbs_doorbell *db, struct ibv_qp *qp)
{
	memset(db, 0, sizeof(*db));
	db->hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	db->hdr.in_words = (sizeof(db->hdr) + sizeof(db->cmd)) / 4;
	db->hdr.out_words = sizeof(db->resp) / 4;
	db->cmd.response = (uintptr_t)&db->resp;
	db->cmd.qp_handle = qp->handle;
	db->cmd.wqe_size = sizeof(struct ibv_send_wr);
}

/*
 * cverbs_ring_again rings the send doorbell of qp again after the
 * provider's own ring failed with the WRs queued (cverbs_queued_all).
 * soft-iWARP's kernel refuses a ring with ENOTCONN not only when the QP
 * has left RTS but also, in RTS, while its state lock is taken for a
 * moment elsewhere (siw_post_send's down_read_trylock). The WRs then wait
 * for a ring that libsiw never gives: it rings only when the WR before
 * them is done. So ring until the kernel takes it, the QP is no longer in
 * RTS (its flush then completes the WRs), or a bound of tries passes.
 * Linux 6.1's soft-iWARP leaves the state out of ibv_query_qp (RESET
 * whatever it is; 6.12 reports it), so there one ring is tried again, no
 * more: its state lock is taken to change the QP's state, which then
 * leaves RTS and flushes the queue (siw_qp_llp_close), and udat settles
 * what is still outstanding when it flushes the EP.
 */
static inline void cverbs_ring_again(struct ibv_qp *qp)
{
	struct cverbs_doorbell db;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	int i;

	cverbs_doorbell_init(&db, qp);
	for (i = 0; i < 1000; i++) {
		if (write(qp->context->cmd_fd, &db, CVERBS_DOORBELL_LEN) == CVERBS_DOORBELL_LEN || errno != ENOTCONN)
			return;
		if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init) != 0 || attr.qp_state != IBV_QPS_RTS)
			return;
		sched_yield();
	}
}

/*
 * cverbs_post_send builds the first n WRs of wrs from the descriptors, with
 * the SGEs of WR i at sges[i*max_sge], links them and posts the chain with
 * one ibv_post_send.
 */
static inline struct cverbs_post_result
cverbs_post_send(uintptr_t qpp, uintptr_t wrsp, uintptr_t descp, uintptr_t sgesp, int max_sge, int n)
{
	struct ibv_qp *qp = (struct ibv_qp *)qpp;
	struct ibv_send_wr *wrs = (struct ibv_send_wr *)wrsp;
	const struct cverbs_send_desc *desc = (const struct cverbs_send_desc *)descp;
	struct ibv_sge *sges = (struct ibv_sge *)sgesp;
	struct cverbs_post_result res = {0, n};
	struct ibv_send_wr *bad = NULL;
	int i;

	for (i = 0; i < n; i++) {
		struct ibv_send_wr *wr = &wrs[i];
		const struct cverbs_send_desc *d = &desc[i];

		wr->wr_id = d->wr_id;
		wr->next = i + 1 < n ? &wrs[i + 1] : NULL;
		wr->sg_list = &sges[(size_t)i * max_sge];
		wr->num_sge = d->num_sge;
		wr->opcode = (enum ibv_wr_opcode)d->opcode;
		wr->send_flags = d->send_flags;
		wr->imm_data = htobe32(d->imm);
		switch (wr->opcode) {
		case IBV_WR_ATOMIC_CMP_AND_SWP:
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
			wr->wr.atomic.remote_addr = d->remote_addr;
			wr->wr.atomic.compare_add = d->compare_add;
			wr->wr.atomic.swap = d->swap;
			wr->wr.atomic.rkey = d->rkey;
			break;
		default:
			if (d->ah) {
				wr->wr.ud.ah = (struct ibv_ah *)d->ah;
				wr->wr.ud.remote_qpn = d->remote_qpn;
				wr->wr.ud.remote_qkey = d->remote_qkey;
				break;
			}
			wr->wr.rdma.remote_addr = d->remote_addr;
			wr->wr.rdma.rkey = d->rkey;
			break;
		}
	}
	res.rc = ibv_post_send(qp, wrs, &bad);
	if (res.rc != 0)
		res.bad = bad ? (int)(bad - wrs) : cverbs_queued_all(res.rc, n);
	if (res.rc != 0 && res.bad == n) {
		cverbs_ring_again(qp);
		res.rc = 0;
	}
	return res;
}

/*
 * A QP's work request for QP.PostSendOne: one send, RDMA write or RDMA read
 * of one SGE, with no immediate data and no address handle. Made zero with
 * wr.sg_list = &sge and wr.num_sge = 1; Go then writes only the fields that
 * change from one post to the next, in place.
 */
struct cverbs_one_wr {
	struct ibv_send_wr wr;
	struct ibv_sge sge;
};

/* wr.wr.rdma of struct ibv_send_wr, a struct without a name that cgo cannot
 * reach, under a name. */
struct cverbs_rdma {
	uint64_t remote_addr;
	uint32_t rkey;
};
_Static_assert(offsetof(struct ibv_send_wr, wr.rdma.remote_addr) == offsetof(struct ibv_send_wr, wr) &&
		       offsetof(struct ibv_send_wr, wr.rdma.rkey) - offsetof(struct ibv_send_wr, wr) ==
			       offsetof(struct cverbs_rdma, rkey),
	       "struct cverbs_rdma is wr.rdma");

/*
 * cverbs_post_send_one posts the WR Go has written into one. The provider
 * copies the WR (and inline data) before it returns.
 */
static inline int cverbs_post_send_one(uintptr_t qpp, uintptr_t one)
{
	struct ibv_send_wr *bad = NULL;
	int rc = ibv_post_send((struct ibv_qp *)qpp, &((struct cverbs_one_wr *)one)->wr, &bad);

	if (rc != 0 && !bad && cverbs_queued_all(rc, 1) == 1) {
		cverbs_ring_again((struct ibv_qp *)qpp); /* queued: see cverbs_queued_all */
		return 0;
	}
	return rc;
}

/*
 * cverbs_link_recv links the first n receive WRs of wrs, whose wr_id and
 * num_sge Go has written, with the SGEs of WR i at sges[i*max_sge].
 */
static inline void cverbs_link_recv(struct ibv_recv_wr *wrs, struct ibv_sge *sges, int max_sge, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		wrs[i].next = i + 1 < n ? &wrs[i + 1] : NULL;
		wrs[i].sg_list = &sges[(size_t)i * max_sge];
	}
}

/* cverbs_post_recv links n receive WRs and posts them to a QP. */
static inline struct cverbs_post_result
cverbs_post_recv(uintptr_t qpp, uintptr_t wrsp, uintptr_t sgesp, int max_sge, int n)
{
	struct ibv_qp *qp = (struct ibv_qp *)qpp;
	struct ibv_recv_wr *wrs = (struct ibv_recv_wr *)wrsp;
	struct cverbs_post_result res = {0, n};
	struct ibv_recv_wr *bad = NULL;

	cverbs_link_recv(wrs, (struct ibv_sge *)sgesp, max_sge, n);
	res.rc = ibv_post_recv(qp, wrs, &bad);
	if (res.rc != 0)
		res.bad = bad ? (int)(bad - wrs) : 0;
	return res;
}

/* cverbs_post_srq_recv links n receive WRs and posts them to an SRQ. */
static inline struct cverbs_post_result
cverbs_post_srq_recv(uintptr_t srqp, uintptr_t wrsp, uintptr_t sgesp, int max_sge, int n)
{
	struct ibv_srq *srq = (struct ibv_srq *)srqp;
	struct ibv_recv_wr *wrs = (struct ibv_recv_wr *)wrsp;
	struct cverbs_post_result res = {0, n};
	struct ibv_recv_wr *bad = NULL;

	cverbs_link_recv(wrs, (struct ibv_sge *)sgesp, max_sge, n);
	res.rc = ibv_post_srq_recv(srq, wrs, &bad);
	if (res.rc != 0)
		res.bad = bad ? (int)(bad - wrs) : 0;
	return res;
}

/*
 * The data path functions above and below take their verbs objects and C
 * arrays as uintptr_t: they are C memory, and a pointer argument would make
 * cgo check it for Go pointers on every call (cgoCheckPointer), a
 * noticeable part of the cost of a post or a poll.
 */
static inline int cverbs_poll_cq(uintptr_t cq, int n, uintptr_t wc)
{
	return ibv_poll_cq((struct ibv_cq *)cq, n, (struct ibv_wc *)wc);
}

static inline int cverbs_req_notify_cq(uintptr_t cq, int solicited_only)
{
	return ibv_req_notify_cq((struct ibv_cq *)cq, solicited_only);
}

/*
 * cverbs_poll_arm is a waiter's poll, arm, poll in one crossing: it polls up
 * to n completions and, when fewer than need arrive, arms the CQ and polls
 * again for the rest, so that a completion that arrives after the first poll
 * is either returned or reported on the channel. *armed is 1 when the CQ was
 * armed, *notify_rc the arm's result.
 */
static inline int cverbs_poll_arm(uintptr_t cq, int n, uintptr_t wc, int need,
				  int solicited_only, int *armed, int *notify_rc)
{
	struct ibv_cq *c = (struct ibv_cq *)cq;
	struct ibv_wc *w = (struct ibv_wc *)wc;
	int got, more;

	*armed = 0;
	*notify_rc = 0;
	got = ibv_poll_cq(c, n, w);
	if (got < 0 || got >= need)
		return got;
	*notify_rc = ibv_req_notify_cq(c, solicited_only);
	if (*notify_rc)
		return got;
	*armed = 1;
	if (got == n)
		return got;
	more = ibv_poll_cq(c, n - got, w + got);
	return more < 0 ? got : got + more; /* never lose the first poll's */
}

static inline int cverbs_query_port(struct ibv_context *ctx, uint8_t port,
				    struct ibv_port_attr *attr)
{
	return ibv_query_port(ctx, port, attr);
}

static inline int cverbs_query_gid_ex(struct ibv_context *ctx, uint32_t port,
				      uint32_t index, struct ibv_gid_entry *e)
{
	return ibv_query_gid_ex(ctx, port, index, e, 0);
}

static inline uint64_t cverbs_device_guid(struct ibv_device *dev)
{
	return be64toh(ibv_get_device_guid(dev));
}

static inline struct ibv_device *cverbs_device_at(struct ibv_device **list,
						  int i)
{
	return list[i];
}

static inline struct ibv_context *cverbs_context_at(struct ibv_context **list,
						    int i)
{
	return list[i];
}

static inline const char *cverbs_context_name(struct ibv_context *ctx)
{
	return ibv_get_device_name(ctx->device);
}

/*
 * cverbs_set_nonblock makes fd non-blocking; it returns -1 with errno set if
 * it cannot.
 */
static inline int cverbs_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	if (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -1;
	return 0;
}

/*
 * cverbs_dup_nonblock makes fd non-blocking (the flag lives in the shared
 * file description, so it also applies to the dup) and returns a close-on-exec
 * duplicate for Go's netpoller, or -1 with errno set.
 */
static inline int cverbs_dup_nonblock(int fd)
{
	if (cverbs_set_nonblock(fd) < 0)
		return -1;
	return fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

/*
 * cverbs_get_ack_cq_event reads the next event and acknowledges it in the
 * same crossing. The CQ's context (its Go wrapper's id) is read before the
 * ack, since after it the CQ may be destroyed and its address reused.
 */
static inline int cverbs_get_ack_cq_event(struct ibv_comp_channel *ch,
					  struct ibv_cq **cq, uintptr_t *id)
{
	void *ctx;

	*cq = NULL;
	*id = 0;
	if (ibv_get_cq_event(ch, cq, &ctx))
		return errno ? errno : EIO;
	*id = (uintptr_t)ctx;
	ibv_ack_cq_events(*cq, 1);
	return 0;
}

/* Flattened struct ibv_async_event (its element is a union). */
struct cverbs_async_event {
	int type;
	uint32_t qp_num;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	int port;
};

/*
 * cverbs_get_async_event reads one async event into *ev and copies it into
 * out. The caller resolves the objects and then acks ev: until the ack the
 * objects cannot be destroyed.
 */
static inline int cverbs_get_async_event(struct ibv_context *ctx,
					 struct cverbs_async_event *out,
					 struct ibv_async_event *ev)
{
	memset(out, 0, sizeof(*out));
	if (ibv_get_async_event(ctx, ev))
		return errno ? errno : EIO;
	out->type = ev->event_type;
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		out->cq = ev->element.cq;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		out->srq = ev->element.srq;
		break;
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		out->port = ev->element.port_num;
		break;
	case IBV_EVENT_DEVICE_FATAL:
	case IBV_EVENT_WQ_FATAL:
		break;
	default:
		/* QP events */
		out->qp = ev->element.qp;
		if (ev->element.qp)
			out->qp_num = ev->element.qp->qp_num;
		break;
	}
	return 0;
}

static inline struct ibv_cq *cverbs_create_cq(struct ibv_context *ctx, int cqe,
					      struct ibv_comp_channel *ch,
					      uintptr_t id)
{
	return ibv_create_cq(ctx, cqe, (void *)id, ch, 0);
}

static inline int cverbs_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
				 struct ibv_mr *mr, uint64_t addr,
				 uint64_t length, unsigned int access,
				 uint64_t wr_id, uint32_t *rkey)
{
	struct ibv_mw_bind bind;
	int rc;

	memset(&bind, 0, sizeof(bind));
	bind.wr_id = wr_id;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info.mr = mr;
	bind.bind_info.addr = addr;
	bind.bind_info.length = length;
	bind.bind_info.mw_access_flags = access;
	rc = ibv_bind_mw(qp, mw, &bind);
	*rkey = mw->rkey;
	return rc;
}

/* cverbs_modify_state moves qp to state without other attributes. */
static inline int cverbs_modify_state(struct ibv_qp *qp, int state)
{
	struct ibv_qp_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = state;
	return ibv_modify_qp(qp, &attr, IBV_QP_STATE);
}

static inline int cverbs_to_init(struct ibv_qp *qp, uint8_t port,
				 unsigned int access)
{
	struct ibv_qp_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = port;
	attr.qp_access_flags = access;
	return ibv_modify_qp(qp, &attr,
			     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				     IBV_QP_ACCESS_FLAGS);
}

static inline int cverbs_to_rtr(struct ibv_qp *qp, uint8_t port,
				uint32_t dest_qpn, uint32_t rq_psn, int mtu,
				const uint8_t *dgid, int global, int sgid_index,
				uint16_t dlid, uint8_t sl, uint8_t hop_limit,
				uint8_t max_dest_rd_atomic,
				uint8_t min_rnr_timer)
{
	struct ibv_qp_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = mtu;
	attr.dest_qp_num = dest_qpn;
	attr.rq_psn = rq_psn;
	attr.max_dest_rd_atomic = max_dest_rd_atomic;
	attr.min_rnr_timer = min_rnr_timer;
	attr.ah_attr.dlid = dlid;
	attr.ah_attr.sl = sl;
	attr.ah_attr.port_num = port;
	if (global) {
		attr.ah_attr.is_global = 1;
		memcpy(attr.ah_attr.grh.dgid.raw, dgid, 16);
		attr.ah_attr.grh.sgid_index = sgid_index;
		attr.ah_attr.grh.hop_limit = hop_limit;
	}
	return ibv_modify_qp(qp, &attr,
			     IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				     IBV_QP_MAX_DEST_RD_ATOMIC |
				     IBV_QP_MIN_RNR_TIMER);
}

static inline int cverbs_to_rts(struct ibv_qp *qp, uint32_t sq_psn,
				uint8_t timeout, uint8_t retry_cnt,
				uint8_t rnr_retry, uint8_t max_rd_atomic)
{
	struct ibv_qp_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = sq_psn;
	attr.timeout = timeout;
	attr.retry_cnt = retry_cnt;
	attr.rnr_retry = rnr_retry;
	attr.max_rd_atomic = max_rd_atomic;
	return ibv_modify_qp(qp, &attr,
			     IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				     IBV_QP_MAX_QP_RD_ATOMIC);
}

static inline int cverbs_query_qp_state(struct ibv_qp *qp, int *state)
{
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	int rc;

	memset(&attr, 0, sizeof(attr));
	rc = ibv_query_qp(qp, &attr, IBV_QP_STATE, &init);
	*state = attr.qp_state;
	return rc;
}

/*
 * cverbs_query_rts reads back the attributes cverbs_to_rts sets. On the
 * passive side of an rdma_cm connection the retry counts come from the
 * peer's request, not from the caller.
 */
static inline int cverbs_query_rts(struct ibv_qp *qp, uint32_t *sq_psn,
				   uint8_t *timeout, uint8_t *retry_cnt,
				   uint8_t *rnr_retry, uint8_t *max_rd_atomic)
{
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	int rc;

	memset(&attr, 0, sizeof(attr));
	rc = ibv_query_qp(qp, &attr,
			  IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC,
			  &init);
	*sq_psn = attr.sq_psn;
	*timeout = attr.timeout;
	*retry_cnt = attr.retry_cnt;
	*rnr_retry = attr.rnr_retry;
	*max_rd_atomic = attr.max_rd_atomic;
	return rc;
}

/* ---- rdma_cm ---- */

/*
 * cverbs_sockaddr fills ss from a raw address (4 or 16 bytes) and a port in
 * host byte order and returns the address length.
 */
static inline int cverbs_sockaddr(struct sockaddr_storage *ss,
				  const uint8_t *addr, int addrlen,
				  uint16_t port, uint32_t scope)
{
	memset(ss, 0, sizeof(*ss));
	if (addrlen == 4) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		memcpy(&sin->sin_addr, addr, 4);
		return sizeof(*sin);
	}
	if (addrlen == 16) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		sin6->sin6_scope_id = scope;
		memcpy(&sin6->sin6_addr, addr, 16);
		return sizeof(*sin6);
	}
	return 0;
}

/*
 * cverbs_sockaddr_parse copies a sockaddr into addr (16 bytes) and returns the
 * address length (4, 16 or 0 if unknown), the port in host order and the
 * IPv6 scope id.
 */
static inline int cverbs_sockaddr_parse(const struct sockaddr *sa,
					uint8_t *addr, uint16_t *port,
					uint32_t *scope)
{
	*port = 0;
	*scope = 0;
	if (!sa)
		return 0;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

		memcpy(addr, &sin->sin_addr, 4);
		*port = ntohs(sin->sin_port);
		return 4;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 =
			(const struct sockaddr_in6 *)sa;

		memcpy(addr, &sin6->sin6_addr, 16);
		*port = ntohs(sin6->sin6_port);
		*scope = sin6->sin6_scope_id;
		return 16;
	}
	return 0;
}

/*
 * Flattened struct rdma_cm_event with the private data copied, so the event
 * can be acked before Go looks at it. id_key and listen_key are the
 * ids' context: the key under which Go registered them (cverbs newCMID
 * stores it there), 0 for an id it never saw.
 */
struct cverbs_cm_event {
	int type;
	int status;
	int ack_err;
	struct rdma_cm_id *id;
	struct rdma_cm_id *listen_id;
	uintptr_t id_key;
	uintptr_t listen_key;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t private_data_len;
	uint8_t srq;
	uint32_t qp_num;
	/* RDMA_PS_UDP ids: param.ud (ud is set; qp_num is param.ud.qp_num). */
	uint8_t ud;
	uint32_t qkey;
	struct ibv_ah_attr ah_attr;
	uint8_t private_data[256];
};

/*
 * cverbs_next_cm_event fetches one event, copies it into out with its
 * ids' keys, and acks it (ack_err: the ack's errno), all in one call: Go
 * finds the ids by key, which is never reused, so an id destroyed after
 * the ack cannot be mistaken for another that took its address.
 */
static inline int cverbs_next_cm_event(struct rdma_event_channel *ch,
				       struct cverbs_cm_event *out)
{
	struct rdma_cm_event *ev;

	memset(out, 0, offsetof(struct cverbs_cm_event, private_data));
	if (rdma_get_cm_event(ch, &ev))
		return errno ? errno : EIO;
	out->type = ev->event;
	out->status = ev->status;
	out->id = ev->id;
	if (ev->id)
		out->id_key = (uintptr_t)ev->id->context;
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST && ev->listen_id) {
		out->listen_id = ev->listen_id;
		out->listen_key = (uintptr_t)ev->listen_id->context;
	}
	if (ev->id && ev->id->ps == RDMA_PS_TCP) {
		const struct rdma_conn_param *p = &ev->param.conn;

		out->responder_resources = p->responder_resources;
		out->initiator_depth = p->initiator_depth;
		out->srq = p->srq;
		out->qp_num = p->qp_num;
		if (p->private_data && p->private_data_len) {
			out->private_data_len = p->private_data_len;
			memcpy(out->private_data, p->private_data,
			       p->private_data_len);
		}
	} else if (ev->id && ev->id->ps == RDMA_PS_UDP) {
		const struct rdma_ud_param *p = &ev->param.ud;

		out->ud = 1;
		out->qp_num = p->qp_num;
		out->qkey = p->qkey;
		out->ah_attr = p->ah_attr;
		if (p->private_data && p->private_data_len) {
			out->private_data_len = p->private_data_len;
			memcpy(out->private_data, p->private_data,
			       p->private_data_len);
		}
	}
	if (rdma_ack_cm_event(ev))
		out->ack_err = errno ? errno : EIO;
	return 0;
}

static inline int cverbs_connect(struct rdma_cm_id *id, int accept,
				 const void *pd, uint8_t pd_len,
				 uint8_t responder_resources,
				 uint8_t initiator_depth, uint8_t retry_count,
				 uint8_t rnr_retry_count, int flow_control,
				 int srq, uint32_t qp_num)
{
	struct rdma_conn_param p;

	memset(&p, 0, sizeof(p));
	p.private_data = pd_len ? pd : NULL;
	p.private_data_len = pd_len;
	p.responder_resources = responder_resources;
	p.initiator_depth = initiator_depth;
	p.retry_count = retry_count;
	p.rnr_retry_count = rnr_retry_count;
	p.flow_control = flow_control;
	p.srq = srq;
	p.qp_num = qp_num;
	if (accept)
		return rdma_accept(id, &p) ? (errno ? errno : EIO) : 0;
	return rdma_connect(id, &p) ? (errno ? errno : EIO) : 0;
}

/* CVERBS_MIN_RNR_TIMER is the RNR NAK timer our RC QPs advertise: 12 is
 * 0.64 ms (the value perftest uses). rdma_cm leaves it at 0, which means
 * 655 ms, so a sender that finds no receive posted stalls for that long. */
#define CVERBS_MIN_RNR_TIMER 12

/* cverbs_cm_modify_qp applies rdma_init_qp_attr for state to qp. */
static inline int cverbs_cm_modify_qp(struct rdma_cm_id *id, struct ibv_qp *qp,
				      int state)
{
	struct ibv_qp_attr attr;
	int mask = 0;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = state;
	if (rdma_init_qp_attr(id, &attr, &mask))
		return errno ? errno : EIO;
	if (state == IBV_QPS_RTR && (mask & IBV_QP_MIN_RNR_TIMER))
		attr.min_rnr_timer = CVERBS_MIN_RNR_TIMER;
	return ibv_modify_qp(qp, &attr, mask);
}

/*
 * cverbs_cm_ready_qp brings an external QP into use for a connection in one
 * call: the ACK timeout on the id (ack_timeout >= 0), the QP through INIT,
 * RTR and RTS as cverbs_cm_modify_qp moves it, then rdma_accept with the
 * parameters (accept) or rdma_establish. *step is the step that failed
 * (0 the ACK timeout, 1-3 INIT, RTR, RTS, 4 accept or establish); rts gets
 * the RTS attributes applied, with rts_known set when rdma_cm gave the
 * timeout and retry count.
 */
struct cverbs_cm_rts {
	uint32_t sq_psn;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t max_rd_atomic;
	uint8_t known;
};

static inline int cverbs_cm_ready_qp(struct rdma_cm_id *id, struct ibv_qp *qp,
				     int ack_timeout, int accept,
				     const void *pd, uint8_t pd_len,
				     uint8_t responder_resources,
				     uint8_t initiator_depth, uint8_t retry_count,
				     uint8_t rnr_retry_count, int flow_control,
				     int srq, uint32_t qp_num,
				     struct cverbs_cm_rts *rts, int *step)
{
	static const int states[3] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS };
	struct ibv_qp_attr attr;
	int mask, i, rc;

	memset(rts, 0, sizeof(*rts));
	*step = 0;
	if (ack_timeout >= 0) {
		uint8_t t = (uint8_t)ack_timeout;

		if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
				    &t, sizeof(t)))
			return errno ? errno : EIO;
	}
	for (i = 0; i < 3; i++) {
		*step = i + 1;
		memset(&attr, 0, sizeof(attr));
		mask = 0;
		attr.qp_state = states[i];
		if (rdma_init_qp_attr(id, &attr, &mask))
			return errno ? errno : EIO;
		if (states[i] == IBV_QPS_RTR && (mask & IBV_QP_MIN_RNR_TIMER))
			attr.min_rnr_timer = CVERBS_MIN_RNR_TIMER;
		rc = ibv_modify_qp(qp, &attr, mask);
		if (rc)
			return rc;
	}
	rts->sq_psn = attr.sq_psn;
	rts->timeout = attr.timeout;
	rts->retry_cnt = attr.retry_cnt;
	rts->rnr_retry = attr.rnr_retry;
	rts->max_rd_atomic = attr.max_rd_atomic;
	rts->known = (mask & (IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT)) ==
		     (IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT);
	*step = 4;
	if (accept)
		return cverbs_connect(id, 1, pd, pd_len, responder_resources,
				      initiator_depth, retry_count,
				      rnr_retry_count, flow_control, srq,
				      qp_num);
	return rdma_establish(id) ? (errno ? errno : EIO) : 0;
}

/*
 * cverbs_cm_init_connect moves an external QP to INIT with rdma_cm's
 * attributes, then sends the connect request (rdma_connect) for it, in
 * one call: *step is 0 when the first failed, 1 when the second.
 */
static inline int cverbs_cm_init_connect(struct rdma_cm_id *id,
					 struct ibv_qp *qp, const void *pd,
					 uint8_t pd_len,
					 uint8_t responder_resources,
					 uint8_t initiator_depth,
					 uint8_t retry_count,
					 uint8_t rnr_retry_count,
					 int flow_control, int srq,
					 uint32_t qp_num, int *step)
{
	int rc;

	*step = 0;
	rc = cverbs_cm_modify_qp(id, qp, IBV_QPS_INIT);
	if (rc)
		return rc;
	*step = 1;
	return cverbs_connect(id, 0, pd, pd_len, responder_resources,
			      initiator_depth, retry_count, rnr_retry_count,
			      flow_control, srq, qp_num);
}

/*
 * cverbs_resolve_route_ack sets the id's ACK timeout, then resolves the
 * route (on RoCE the route's packet lifetime follows from the timeout):
 * *step is 0 when the first failed, 1 when the second.
 */
static inline int cverbs_resolve_route_ack(struct rdma_cm_id *id,
					   uint8_t ack_timeout, int timeout_ms,
					   int *step)
{
	*step = 0;
	if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
			    &ack_timeout, sizeof(ack_timeout)))
		return errno ? errno : EIO;
	*step = 1;
	return rdma_resolve_route(id, timeout_ms) ? (errno ? errno : EIO) : 0;
}

static inline struct ibv_context *cverbs_cm_verbs(struct rdma_cm_id *id)
{
	return id->verbs;
}

static inline struct ibv_qp *cverbs_cm_qp(struct rdma_cm_id *id)
{
	return id->qp;
}

static inline uint8_t cverbs_cm_port(struct rdma_cm_id *id)
{
	return id->port_num;
}


/* ---- memory regions and windows ---- */

static inline struct ibv_mr *cverbs_reg_mr(struct ibv_pd *pd, uintptr_t addr,
					   size_t len, int access)
{
	return ibv_reg_mr(pd, (void *)addr, len, access);
}

static inline struct ibv_mw *cverbs_alloc_mw(struct ibv_pd *pd)
{
	return ibv_alloc_mw(pd, IBV_MW_TYPE_1);
}

/* ---- shared receive queues ---- */

static inline struct ibv_srq *cverbs_create_srq(struct ibv_pd *pd, uint32_t max_wr,
						uint32_t max_sge, uint32_t limit,
						uint32_t *out_wr, uint32_t *out_sge)
{
	struct ibv_srq_init_attr a;
	struct ibv_srq *srq;

	memset(&a, 0, sizeof(a));
	a.attr.max_wr = max_wr;
	a.attr.max_sge = max_sge;
	a.attr.srq_limit = limit;
	srq = ibv_create_srq(pd, &a);
	*out_wr = a.attr.max_wr;
	*out_sge = a.attr.max_sge;
	return srq;
}

static inline int cverbs_modify_srq(struct ibv_srq *srq, uint32_t max_wr,
				    uint32_t limit, int mask)
{
	struct ibv_srq_attr a;

	memset(&a, 0, sizeof(a));
	a.max_wr = max_wr;
	a.srq_limit = limit;
	return ibv_modify_srq(srq, &a, mask);
}

static inline int cverbs_query_srq(struct ibv_srq *srq, uint32_t *max_wr,
				   uint32_t *max_sge, uint32_t *limit)
{
	struct ibv_srq_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	rc = ibv_query_srq(srq, &a);
	*max_wr = a.max_wr;
	*max_sge = a.max_sge;
	*limit = a.srq_limit;
	return rc;
}

/* ---- rdma_cm QPs ---- */

/*
 * cverbs_cm_destroy_qp is rdma_destroy_qp with the result of ibv_destroy_qp
 * surfaced (rdma_destroy_qp returns void); id->qp is cleared on success only.
 */
static inline int cverbs_cm_destroy_qp(struct rdma_cm_id *id)
{
	int rc;

	if (!id->qp)
		return 0;
	rc = ibv_destroy_qp(id->qp);
	if (rc == 0)
		id->qp = NULL;
	return rc;
}

static inline int cverbs_cm_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
				      struct ibv_qp_init_attr *attr)
{
	if (rdma_create_qp(id, pd, attr))
		return errno ? errno : EIO;
	return 0;
}

/* ---- rdma_cm ids ---- */

static inline int cverbs_create_id(struct rdma_event_channel *ch,
				   struct rdma_cm_id **id)
{
	if (rdma_create_id(ch, id, NULL, RDMA_PS_TCP))
		return errno ? errno : EIO;
	return 0;
}

/*
 * cverbs_create_id_for_qp makes the rdma_cm id an active connection of qp
 * will use, as librdmacm's rdma_create_qp readies an id and its QP: a new
 * id bound to ss (port 0 picks one), with the ACK timeout ack_timeout, and
 * qp moved to INIT with the id's attributes. *step is the step that failed
 * (0 create, 1 bind, 2 the ACK timeout, 3 INIT); on failure no id is left.
 */
static inline int cverbs_create_id_for_qp(struct rdma_event_channel *ch,
					  struct rdma_cm_id **id,
					  struct sockaddr_storage *ss,
					  uint8_t ack_timeout,
					  struct ibv_qp *qp, int *step)
{
	int rc;

	*step = 0;
	rc = cverbs_create_id(ch, id);
	if (rc)
		return rc;
	*step = 1;
	if (rdma_bind_addr(*id, (struct sockaddr *)ss))
		goto fail;
	*step = 2;
	if (rdma_set_option(*id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
			    &ack_timeout, sizeof(ack_timeout)))
		goto fail;
	*step = 3;
	rc = cverbs_cm_modify_qp(*id, qp, IBV_QPS_INIT);
	if (rc == 0)
		return 0;
	errno = rc;
fail:
	rc = errno ? errno : EIO;
	rdma_destroy_id(*id);
	*id = NULL;
	return rc;
}

/* cverbs_errno turns the -1/errno convention of librdmacm into an errno. */
static inline int cverbs_errno(int rc)
{
	if (rc == 0)
		return 0;
	return errno ? errno : EIO;
}

static inline int cverbs_bind_addr(struct rdma_cm_id *id, struct sockaddr_storage *ss)
{
	return cverbs_errno(rdma_bind_addr(id, (struct sockaddr *)ss));
}

static inline int cverbs_listen(struct rdma_cm_id *id, int backlog)
{
	return cverbs_errno(rdma_listen(id, backlog));
}

static inline int cverbs_resolve_addr(struct rdma_cm_id *id, struct sockaddr_storage *src,
				      struct sockaddr_storage *dst, int timeout_ms)
{
	return cverbs_errno(rdma_resolve_addr(id, (struct sockaddr *)src,
					      (struct sockaddr *)dst, timeout_ms));
}

static inline int cverbs_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	return cverbs_errno(rdma_resolve_route(id, timeout_ms));
}

static inline int cverbs_set_ack_timeout(struct rdma_cm_id *id, uint8_t timeout)
{
	return cverbs_errno(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
					    &timeout, sizeof(timeout)));
}

static inline int cverbs_reject(struct rdma_cm_id *id, const void *pd, uint8_t len)
{
	return cverbs_errno(rdma_reject(id, len ? pd : NULL, len));
}

static inline int cverbs_disconnect(struct rdma_cm_id *id)
{
	return cverbs_errno(rdma_disconnect(id));
}

static inline int cverbs_destroy_id(struct rdma_cm_id *id)
{
	return cverbs_errno(rdma_destroy_id(id));
}

static inline int cverbs_establish(struct rdma_cm_id *id)
{
	return cverbs_errno(rdma_establish(id));
}

static inline int cverbs_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *ch)
{
	return cverbs_errno(rdma_migrate_id(id, ch));
}

static inline int cverbs_local_addr(struct rdma_cm_id *id, uint8_t *addr,
				    uint16_t *port, uint32_t *scope)
{
	return cverbs_sockaddr_parse(rdma_get_local_addr(id), addr, port, scope);
}

static inline int cverbs_peer_addr(struct rdma_cm_id *id, uint8_t *addr,
				   uint16_t *port, uint32_t *scope)
{
	return cverbs_sockaddr_parse(rdma_get_peer_addr(id), addr, port, scope);
}

/* ---- unreliable datagram (ud.go) ---- */

static inline int cverbs_create_udp_id(struct rdma_event_channel *ch,
				       struct rdma_cm_id **id)
{
	if (rdma_create_id(ch, id, NULL, RDMA_PS_UDP))
		return errno ? errno : EIO;
	return 0;
}

/*
 * cverbs_ud_to_rts brings a UD QP from RESET to RTS as librdmacm's
 * rdma_create_qp does for an id in RDMA_PS_UDP: INIT with the pkey index,
 * port and qkey, RTR, then RTS with send PSN 0.
 */
static inline int cverbs_ud_to_rts(struct ibv_qp *qp, uint8_t port,
				   uint16_t pkey_index, uint32_t qkey)
{
	struct ibv_qp_attr attr;
	int rc;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.pkey_index = pkey_index;
	attr.port_num = port;
	attr.qkey = qkey;
	rc = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					      IBV_QP_PORT | IBV_QP_QKEY);
	if (rc)
		return rc;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	rc = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	if (rc)
		return rc;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

#endif /* CVERBS_H */
