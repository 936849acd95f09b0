//go:build linux && cgo

package cverbs

/*
#include "cverbs.h"
*/
import "C"

// The C side of consts_cgo_test.go: the *_types.go files write the C
// constants as Go literals and the C enums' names as Go tables, shared with
// the build without cgo; the tests compare them with these.

// cConstants returns the C value of every constant that the *_types.go
// files mirror, keyed by its C name.
func cConstants() map[string]int64 {
	return map[string]int64{
		"IBV_PORT_NOP":                   C.IBV_PORT_NOP,
		"RDMA_UDP_QKEY":                  C.RDMA_UDP_QKEY,
		"sizeof(struct ibv_grh)":         C.sizeof_struct_ibv_grh,
		"IBV_PORT_DOWN":                  C.IBV_PORT_DOWN,
		"IBV_PORT_INIT":                  C.IBV_PORT_INIT,
		"IBV_PORT_ARMED":                 C.IBV_PORT_ARMED,
		"IBV_PORT_ACTIVE":                C.IBV_PORT_ACTIVE,
		"IBV_PORT_ACTIVE_DEFER":          C.IBV_PORT_ACTIVE_DEFER,
		"IBV_LINK_LAYER_UNSPECIFIED":     C.IBV_LINK_LAYER_UNSPECIFIED,
		"IBV_LINK_LAYER_INFINIBAND":      C.IBV_LINK_LAYER_INFINIBAND,
		"IBV_LINK_LAYER_ETHERNET":        C.IBV_LINK_LAYER_ETHERNET,
		"IBV_GID_TYPE_IB":                C.IBV_GID_TYPE_IB,
		"IBV_GID_TYPE_ROCE_V1":           C.IBV_GID_TYPE_ROCE_V1,
		"IBV_GID_TYPE_ROCE_V2":           C.IBV_GID_TYPE_ROCE_V2,
		"IBV_TRANSPORT_UNKNOWN":          C.IBV_TRANSPORT_UNKNOWN,
		"IBV_TRANSPORT_IB":               C.IBV_TRANSPORT_IB,
		"IBV_TRANSPORT_IWARP":            C.IBV_TRANSPORT_IWARP,
		"IBV_TRANSPORT_USNIC":            C.IBV_TRANSPORT_USNIC,
		"IBV_TRANSPORT_USNIC_UDP":        C.IBV_TRANSPORT_USNIC_UDP,
		"IBV_TRANSPORT_UNSPECIFIED":      C.IBV_TRANSPORT_UNSPECIFIED,
		"IBV_EVENT_CQ_ERR":               C.IBV_EVENT_CQ_ERR,
		"IBV_EVENT_QP_FATAL":             C.IBV_EVENT_QP_FATAL,
		"IBV_EVENT_QP_REQ_ERR":           C.IBV_EVENT_QP_REQ_ERR,
		"IBV_EVENT_QP_ACCESS_ERR":        C.IBV_EVENT_QP_ACCESS_ERR,
		"IBV_EVENT_COMM_EST":             C.IBV_EVENT_COMM_EST,
		"IBV_EVENT_SQ_DRAINED":           C.IBV_EVENT_SQ_DRAINED,
		"IBV_EVENT_PATH_MIG":             C.IBV_EVENT_PATH_MIG,
		"IBV_EVENT_PATH_MIG_ERR":         C.IBV_EVENT_PATH_MIG_ERR,
		"IBV_EVENT_DEVICE_FATAL":         C.IBV_EVENT_DEVICE_FATAL,
		"IBV_EVENT_PORT_ACTIVE":          C.IBV_EVENT_PORT_ACTIVE,
		"IBV_EVENT_PORT_ERR":             C.IBV_EVENT_PORT_ERR,
		"IBV_EVENT_LID_CHANGE":           C.IBV_EVENT_LID_CHANGE,
		"IBV_EVENT_PKEY_CHANGE":          C.IBV_EVENT_PKEY_CHANGE,
		"IBV_EVENT_SM_CHANGE":            C.IBV_EVENT_SM_CHANGE,
		"IBV_EVENT_SRQ_ERR":              C.IBV_EVENT_SRQ_ERR,
		"IBV_EVENT_SRQ_LIMIT_REACHED":    C.IBV_EVENT_SRQ_LIMIT_REACHED,
		"IBV_EVENT_QP_LAST_WQE_REACHED":  C.IBV_EVENT_QP_LAST_WQE_REACHED,
		"IBV_EVENT_CLIENT_REREGISTER":    C.IBV_EVENT_CLIENT_REREGISTER,
		"IBV_EVENT_GID_CHANGE":           C.IBV_EVENT_GID_CHANGE,
		"IBV_EVENT_WQ_FATAL":             C.IBV_EVENT_WQ_FATAL,
		"IBV_ACCESS_LOCAL_WRITE":         C.IBV_ACCESS_LOCAL_WRITE,
		"IBV_ACCESS_REMOTE_WRITE":        C.IBV_ACCESS_REMOTE_WRITE,
		"IBV_ACCESS_REMOTE_READ":         C.IBV_ACCESS_REMOTE_READ,
		"IBV_ACCESS_REMOTE_ATOMIC":       C.IBV_ACCESS_REMOTE_ATOMIC,
		"IBV_ACCESS_MW_BIND":             C.IBV_ACCESS_MW_BIND,
		"IBV_WC_SUCCESS":                 C.IBV_WC_SUCCESS,
		"IBV_WC_LOC_LEN_ERR":             C.IBV_WC_LOC_LEN_ERR,
		"IBV_WC_LOC_QP_OP_ERR":           C.IBV_WC_LOC_QP_OP_ERR,
		"IBV_WC_LOC_EEC_OP_ERR":          C.IBV_WC_LOC_EEC_OP_ERR,
		"IBV_WC_LOC_PROT_ERR":            C.IBV_WC_LOC_PROT_ERR,
		"IBV_WC_WR_FLUSH_ERR":            C.IBV_WC_WR_FLUSH_ERR,
		"IBV_WC_MW_BIND_ERR":             C.IBV_WC_MW_BIND_ERR,
		"IBV_WC_BAD_RESP_ERR":            C.IBV_WC_BAD_RESP_ERR,
		"IBV_WC_LOC_ACCESS_ERR":          C.IBV_WC_LOC_ACCESS_ERR,
		"IBV_WC_REM_INV_REQ_ERR":         C.IBV_WC_REM_INV_REQ_ERR,
		"IBV_WC_REM_ACCESS_ERR":          C.IBV_WC_REM_ACCESS_ERR,
		"IBV_WC_REM_OP_ERR":              C.IBV_WC_REM_OP_ERR,
		"IBV_WC_RETRY_EXC_ERR":           C.IBV_WC_RETRY_EXC_ERR,
		"IBV_WC_RNR_RETRY_EXC_ERR":       C.IBV_WC_RNR_RETRY_EXC_ERR,
		"IBV_WC_LOC_RDD_VIOL_ERR":        C.IBV_WC_LOC_RDD_VIOL_ERR,
		"IBV_WC_REM_INV_RD_REQ_ERR":      C.IBV_WC_REM_INV_RD_REQ_ERR,
		"IBV_WC_REM_ABORT_ERR":           C.IBV_WC_REM_ABORT_ERR,
		"IBV_WC_INV_EECN_ERR":            C.IBV_WC_INV_EECN_ERR,
		"IBV_WC_INV_EEC_STATE_ERR":       C.IBV_WC_INV_EEC_STATE_ERR,
		"IBV_WC_FATAL_ERR":               C.IBV_WC_FATAL_ERR,
		"IBV_WC_RESP_TIMEOUT_ERR":        C.IBV_WC_RESP_TIMEOUT_ERR,
		"IBV_WC_GENERAL_ERR":             C.IBV_WC_GENERAL_ERR,
		"IBV_WC_TM_ERR":                  C.IBV_WC_TM_ERR,
		"IBV_WC_TM_RNDV_INCOMPLETE":      C.IBV_WC_TM_RNDV_INCOMPLETE,
		"IBV_WC_SEND":                    C.IBV_WC_SEND,
		"IBV_WC_RDMA_WRITE":              C.IBV_WC_RDMA_WRITE,
		"IBV_WC_RDMA_READ":               C.IBV_WC_RDMA_READ,
		"IBV_WC_COMP_SWAP":               C.IBV_WC_COMP_SWAP,
		"IBV_WC_FETCH_ADD":               C.IBV_WC_FETCH_ADD,
		"IBV_WC_BIND_MW":                 C.IBV_WC_BIND_MW,
		"IBV_WC_LOCAL_INV":               C.IBV_WC_LOCAL_INV,
		"IBV_WC_RECV":                    C.IBV_WC_RECV,
		"IBV_WC_RECV_RDMA_WITH_IMM":      C.IBV_WC_RECV_RDMA_WITH_IMM,
		"IBV_WC_GRH":                     C.IBV_WC_GRH,
		"IBV_WC_WITH_IMM":                C.IBV_WC_WITH_IMM,
		"IBV_WC_IP_CSUM_OK":              C.IBV_WC_IP_CSUM_OK,
		"IBV_WC_WITH_INV":                C.IBV_WC_WITH_INV,
		"IBV_SEND_FENCE":                 C.IBV_SEND_FENCE,
		"IBV_SEND_SIGNALED":              C.IBV_SEND_SIGNALED,
		"IBV_SEND_SOLICITED":             C.IBV_SEND_SOLICITED,
		"IBV_SEND_INLINE":                C.IBV_SEND_INLINE,
		"IBV_QPS_RESET":                  C.IBV_QPS_RESET,
		"IBV_QPS_INIT":                   C.IBV_QPS_INIT,
		"IBV_QPS_RTR":                    C.IBV_QPS_RTR,
		"IBV_QPS_RTS":                    C.IBV_QPS_RTS,
		"IBV_QPS_SQD":                    C.IBV_QPS_SQD,
		"IBV_QPS_SQE":                    C.IBV_QPS_SQE,
		"IBV_QPS_ERR":                    C.IBV_QPS_ERR,
		"IBV_QPS_UNKNOWN":                C.IBV_QPS_UNKNOWN,
		"RDMA_CM_EVENT_ADDR_RESOLVED":    C.RDMA_CM_EVENT_ADDR_RESOLVED,
		"RDMA_CM_EVENT_ADDR_ERROR":       C.RDMA_CM_EVENT_ADDR_ERROR,
		"RDMA_CM_EVENT_ROUTE_RESOLVED":   C.RDMA_CM_EVENT_ROUTE_RESOLVED,
		"RDMA_CM_EVENT_ROUTE_ERROR":      C.RDMA_CM_EVENT_ROUTE_ERROR,
		"RDMA_CM_EVENT_CONNECT_REQUEST":  C.RDMA_CM_EVENT_CONNECT_REQUEST,
		"RDMA_CM_EVENT_CONNECT_RESPONSE": C.RDMA_CM_EVENT_CONNECT_RESPONSE,
		"RDMA_CM_EVENT_CONNECT_ERROR":    C.RDMA_CM_EVENT_CONNECT_ERROR,
		"RDMA_CM_EVENT_UNREACHABLE":      C.RDMA_CM_EVENT_UNREACHABLE,
		"RDMA_CM_EVENT_REJECTED":         C.RDMA_CM_EVENT_REJECTED,
		"RDMA_CM_EVENT_ESTABLISHED":      C.RDMA_CM_EVENT_ESTABLISHED,
		"RDMA_CM_EVENT_DISCONNECTED":     C.RDMA_CM_EVENT_DISCONNECTED,
		"RDMA_CM_EVENT_DEVICE_REMOVAL":   C.RDMA_CM_EVENT_DEVICE_REMOVAL,
		"RDMA_CM_EVENT_MULTICAST_JOIN":   C.RDMA_CM_EVENT_MULTICAST_JOIN,
		"RDMA_CM_EVENT_MULTICAST_ERROR":  C.RDMA_CM_EVENT_MULTICAST_ERROR,
		"RDMA_CM_EVENT_ADDR_CHANGE":      C.RDMA_CM_EVENT_ADDR_CHANGE,
		"RDMA_CM_EVENT_TIMEWAIT_EXIT":    C.RDMA_CM_EVENT_TIMEWAIT_EXIT,
	}
}

// cEnumStrings are the libibverbs and librdmacm functions that name the
// values of the C enums, by the Go type that mirrors each enum.
var cEnumStrings = map[string]func(v int) string{
	"PortState": func(v int) string {
		return C.GoString(C.ibv_port_state_str(C.enum_ibv_port_state(v)))
	},
	"AsyncEventType": func(v int) string {
		return C.GoString(C.ibv_event_type_str(C.enum_ibv_event_type(v)))
	},
	"WCStatus": func(v int) string {
		return C.GoString(C.ibv_wc_status_str(C.enum_ibv_wc_status(v)))
	},
	"CMEventType": func(v int) string {
		return C.GoString(C.rdma_event_str(C.enum_rdma_cm_event_type(v)))
	},
}
