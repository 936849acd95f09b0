/*
 * Soft-RoCE (rxe) queues, reached without librxe.
 *
 * librxe keeps each QP's, SRQ's and CQ's queue in memory it shares with the
 * kernel's rxe driver, laid out by the kernel's ABI (rdma/rdma_user_rxe.h:
 * struct rxe_queue_buf, struct rxe_send_wqe, struct rxe_recv_wqe; CQ entries
 * are struct ib_uverbs_wc). A post is the WQE written at the producer index,
 * the index advanced with release order and, for sends, a POST_SEND command
 * with no work requests written to the context's command fd (the doorbell);
 * a poll reads entries from the consumer index. Go does that itself
 * (cverbs/rxe.go) and saves the cgo crossing and librxe's call.
 *
 * Where the queue is, librxe keeps in its private objects (providers/rxe/
 * rxe.h): the mirrors below are their leading fields in rdma-core 44 to 64
 * (44 alone keeps a send sequence counter, ssn, and writes it into each
 * WQE; later releases leave it out); other releases take the verbs. Every
 * queue found through them is checked against the kernel's own header of
 * it (element size, slot count, mapping size, indexes in range) and against
 * the capabilities the create call returned; anything that does not match
 * leaves the object on the verbs path.
 */
#ifndef CVERBS_RXE_H
#define CVERBS_RXE_H

#include "cverbs.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

struct cverbs_rxe_wq {
	struct rxe_queue_buf *queue;
	pthread_spinlock_t lock;
	unsigned int max_sge;
	unsigned int max_inline;
};

struct cverbs_rxe_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	} vqp;
	uint32_t comp_mask;
	void *xrcd;
	struct mminfo rq_mmap_info;
	struct cverbs_rxe_wq rq;
	struct mminfo sq_mmap_info;
	struct cverbs_rxe_wq sq;
	unsigned int ssn;
};

struct cverbs_rxe_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	void *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
	struct mminfo mmap_info;
	struct cverbs_rxe_wq rq;
};

struct cverbs_rxe_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	} vcq;
	struct mminfo mmap_info;
	struct rxe_queue_buf *queue;
};

/* What Go needs of a queue, and of a send queue's QP. */
struct cverbs_rxe_queue {
	void *buf;                  /* struct rxe_queue_buf */
	unsigned int *ssn;          /* send queues: librxe's send sequence counter, if any */
	enum ibv_qp_state *state;   /* QP receive queues: the QP's state */
	struct cverbs_doorbell *doorbell; /* send queues: librxe's post_send_db, per QP */
	uint32_t max_sge;
	uint32_t max_inline;
	int fd;
};

/* Offsets Go writes at, in the kernel's layout. */
enum {
	CVERBS_RXE_HEAD = offsetof(struct rxe_queue_buf, data),
	CVERBS_RXE_PRODUCER = offsetof(struct rxe_queue_buf, producer_index),
	CVERBS_RXE_CONSUMER = offsetof(struct rxe_queue_buf, consumer_index),
	CVERBS_RXE_SEND_WR_SIZE = sizeof(struct rxe_send_wr),
	CVERBS_RXE_WR_ID = offsetof(struct rxe_send_wr, wr_id),
	CVERBS_RXE_WR_OPCODE = offsetof(struct rxe_send_wr, opcode),
	CVERBS_RXE_WR_FLAGS = offsetof(struct rxe_send_wr, send_flags),
	CVERBS_RXE_WR_IMM = offsetof(struct rxe_send_wr, ex.imm_data),
	CVERBS_RXE_RDMA_ADDR = offsetof(struct rxe_send_wr, wr.rdma.remote_addr),
	CVERBS_RXE_RDMA_RKEY = offsetof(struct rxe_send_wr, wr.rdma.rkey),
	CVERBS_RXE_ATOMIC_ADDR = offsetof(struct rxe_send_wr, wr.atomic.remote_addr),
	CVERBS_RXE_ATOMIC_COMPARE = offsetof(struct rxe_send_wr, wr.atomic.compare_add),
	CVERBS_RXE_ATOMIC_SWAP = offsetof(struct rxe_send_wr, wr.atomic.swap),
	CVERBS_RXE_ATOMIC_RKEY = offsetof(struct rxe_send_wr, wr.atomic.rkey),
	CVERBS_RXE_SEND_IOVA = offsetof(struct rxe_send_wqe, iova),
	CVERBS_RXE_SEND_STATE = offsetof(struct rxe_send_wqe, state),
	CVERBS_RXE_SEND_SSN = offsetof(struct rxe_send_wqe, ssn),
	CVERBS_RXE_SEND_DMA = offsetof(struct rxe_send_wqe, dma),
	CVERBS_RXE_SEND_SGE = offsetof(struct rxe_send_wqe, dma.sge),
	CVERBS_RXE_RECV_ID = offsetof(struct rxe_recv_wqe, wr_id),
	CVERBS_RXE_RECV_DMA = offsetof(struct rxe_recv_wqe, dma),
	CVERBS_RXE_RECV_SGE = offsetof(struct rxe_recv_wqe, dma.sge),
};

/* The rdma-core releases whose librxe objects the mirrors above match. */
enum { CVERBS_RXE_FIRST = 44, CVERBS_RXE_NO_SSN = 45, CVERBS_RXE_LAST = 64 };

/* cverbs_rdma_core_release is the rdma-core release of the libibverbs in
 * use (44 for libibverbs.so.1.14.44.0; librxe comes from the same one), 0
 * when its file name does not say. */
static inline int cverbs_rdma_core_release(void)
{
	Dl_info info;
	char path[PATH_MAX];
	const char *base;
	unsigned int major, minor, release;

	if (!dladdr((void *)ibv_open_device, &info) || !info.dli_fname || !realpath(info.dli_fname, path))
		return 0;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (sscanf(base, "libibverbs.so.%u.%u.%u", &major, &minor, &release) != 3)
		return 0;
	return (int)release;
}

/* cverbs_is_rxe reports whether ctx's verbs are librxe's. */
static inline int cverbs_is_rxe(struct ibv_context *ctx)
{
	Dl_info info;
	const char *base;

	if (!dladdr((void *)ctx->ops.post_send, &info) || !info.dli_fname)
		return 0;
	base = strrchr(info.dli_fname, '/');
	base = base ? base + 1 : info.dli_fname;
	return strncmp(base, "librxe-", 7) == 0;
}

/* cverbs_rxe_queue_ok checks q against the kernel's layout of a queue of
 * elements of at least min_elem bytes, mapped mi->size bytes long (the
 * header and the slots, rounded up to a page). */
static inline int cverbs_rxe_queue_ok(const struct rxe_queue_buf *q, const struct mminfo *mi, size_t min_elem)
{
	size_t slots, size, page = (size_t)sysconf(_SC_PAGESIZE);

	if (!q || q->log2_elem_size >= 20 || ((size_t)1 << q->log2_elem_size) < min_elem ||
	    q->index_mask >= (1u << 24) || (q->index_mask & (q->index_mask + 1)) != 0)
		return 0;
	slots = (size_t)q->index_mask + 1;
	size = sizeof(*q) + (slots << q->log2_elem_size);
	return mi->size == (size + page - 1) / page * page && q->producer_index <= q->index_mask &&
	       q->consumer_index <= q->index_mask;
}

/* cverbs_rxe_send_queue finds an RC QP's send queue; max_sge and max_inline
 * are the capabilities its create call returned, release rdma-core's
 * (cverbs_rdma_core_release). 0 if it is not one. */
static inline int cverbs_rxe_send_queue(struct ibv_qp *qp, uint32_t max_sge, uint32_t max_inline, int release,
					struct cverbs_rxe_queue *out)
{
	struct cverbs_rxe_qp *r = (struct cverbs_rxe_qp *)qp;
	struct cverbs_doorbell *db;
	size_t payload = (size_t)max_sge * sizeof(struct rxe_sge);

	if (qp->qp_type != IBV_QPT_RC || !cverbs_is_rxe(qp->context) || r->sq.max_sge != max_sge ||
	    r->sq.max_inline != max_inline ||
	    !cverbs_rxe_queue_ok(r->sq.queue, &r->sq_mmap_info,
				 sizeof(struct rxe_send_wqe) + (payload > max_inline ? payload : max_inline)))
		return 0;
	db = malloc(sizeof(*db));
	if (!db)
		return 0;
	cverbs_doorbell_init(db, qp);
	out->buf = r->sq.queue;
	out->ssn = release < CVERBS_RXE_NO_SSN ? &r->ssn : NULL;
	out->state = NULL;
	out->doorbell = db;
	out->max_sge = max_sge;
	out->max_inline = max_inline;
	out->fd = qp->context->cmd_fd;
	return 1;
}

/* cverbs_rxe_recv_queue finds a QP's own receive queue (0 if none). */
static inline int cverbs_rxe_recv_queue(struct ibv_qp *qp, uint32_t max_sge, struct cverbs_rxe_queue *out)
{
	struct cverbs_rxe_qp *r = (struct cverbs_rxe_qp *)qp;

	if (qp->qp_type != IBV_QPT_RC || qp->srq || !cverbs_is_rxe(qp->context) || r->rq.max_sge != max_sge ||
	    !cverbs_rxe_queue_ok(r->rq.queue, &r->rq_mmap_info,
				 sizeof(struct rxe_recv_wqe) + (size_t)max_sge * sizeof(struct rxe_sge)))
		return 0;
	memset(out, 0, sizeof(*out));
	out->buf = r->rq.queue;
	out->state = &qp->state;
	out->max_sge = max_sge;
	return 1;
}

/* cverbs_rxe_srq_queue finds an SRQ's queue (0 if it is not rxe's). */
static inline int cverbs_rxe_srq_queue(struct ibv_srq *srq, struct cverbs_rxe_queue *out)
{
	struct cverbs_rxe_srq *r = (struct cverbs_rxe_srq *)srq;

	if (!cverbs_is_rxe(srq->context) || r->rq.max_sge > 1024 ||
	    !cverbs_rxe_queue_ok(r->rq.queue, &r->mmap_info,
				 sizeof(struct rxe_recv_wqe) + (size_t)r->rq.max_sge * sizeof(struct rxe_sge)))
		return 0;
	memset(out, 0, sizeof(*out));
	out->buf = r->rq.queue;
	out->max_sge = r->rq.max_sge;
	return 1;
}

/* cverbs_rxe_cq_queue finds a CQ's queue (0 if it is not rxe's). */
static inline int cverbs_rxe_cq_queue(struct ibv_cq *cq, struct cverbs_rxe_queue *out)
{
	struct cverbs_rxe_cq *r = (struct cverbs_rxe_cq *)cq;

	if (!cverbs_is_rxe(cq->context) || !cverbs_rxe_queue_ok(r->queue, &r->mmap_info, sizeof(struct ib_uverbs_wc)) ||
	    (int)r->queue->index_mask < cq->cqe)
		return 0;
	memset(out, 0, sizeof(*out));
	out->buf = r->queue;
	return 1;
}

#endif /* CVERBS_RXE_H */
