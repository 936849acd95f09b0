package cverbs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cConst pairs a constant of the *_types.go files with the C constant it
// mirrors; consts_cgo_test.go compares the values with the C headers.
type cConst struct {
	goName string
	value  int64
	cName  string
}

// cConsts lists every constant of the *_types.go files that mirrors a C
// constant. TestCConstsComplete keeps it complete.
var cConsts = []cConst{
	{"PortNop", int64(PortNop), "IBV_PORT_NOP"},
	{"UDPQKey", int64(UDPQKey), "RDMA_UDP_QKEY"},
	{"GRHSize", int64(GRHSize), "sizeof(struct ibv_grh)"},
	{"PortDown", int64(PortDown), "IBV_PORT_DOWN"},
	{"PortInit", int64(PortInit), "IBV_PORT_INIT"},
	{"PortArmed", int64(PortArmed), "IBV_PORT_ARMED"},
	{"PortActive", int64(PortActive), "IBV_PORT_ACTIVE"},
	{"PortActiveDefer", int64(PortActiveDefer), "IBV_PORT_ACTIVE_DEFER"},
	{"LinkLayerUnspecified", int64(LinkLayerUnspecified), "IBV_LINK_LAYER_UNSPECIFIED"},
	{"LinkLayerInfiniBand", int64(LinkLayerInfiniBand), "IBV_LINK_LAYER_INFINIBAND"},
	{"LinkLayerEthernet", int64(LinkLayerEthernet), "IBV_LINK_LAYER_ETHERNET"},
	{"GIDTypeIB", int64(GIDTypeIB), "IBV_GID_TYPE_IB"},
	{"GIDTypeRoCEv1", int64(GIDTypeRoCEv1), "IBV_GID_TYPE_ROCE_V1"},
	{"GIDTypeRoCEv2", int64(GIDTypeRoCEv2), "IBV_GID_TYPE_ROCE_V2"},
	{"TransportUnknown", int64(TransportUnknown), "IBV_TRANSPORT_UNKNOWN"},
	{"TransportIB", int64(TransportIB), "IBV_TRANSPORT_IB"},
	{"TransportIWARP", int64(TransportIWARP), "IBV_TRANSPORT_IWARP"},
	{"TransportUSNIC", int64(TransportUSNIC), "IBV_TRANSPORT_USNIC"},
	{"TransportUSNICUDP", int64(TransportUSNICUDP), "IBV_TRANSPORT_USNIC_UDP"},
	{"TransportUnspecified", int64(TransportUnspecified), "IBV_TRANSPORT_UNSPECIFIED"},
	{"EventCQErr", int64(EventCQErr), "IBV_EVENT_CQ_ERR"},
	{"EventQPFatal", int64(EventQPFatal), "IBV_EVENT_QP_FATAL"},
	{"EventQPReqErr", int64(EventQPReqErr), "IBV_EVENT_QP_REQ_ERR"},
	{"EventQPAccessErr", int64(EventQPAccessErr), "IBV_EVENT_QP_ACCESS_ERR"},
	{"EventCommEst", int64(EventCommEst), "IBV_EVENT_COMM_EST"},
	{"EventSQDrained", int64(EventSQDrained), "IBV_EVENT_SQ_DRAINED"},
	{"EventPathMig", int64(EventPathMig), "IBV_EVENT_PATH_MIG"},
	{"EventPathMigErr", int64(EventPathMigErr), "IBV_EVENT_PATH_MIG_ERR"},
	{"EventDeviceFatal", int64(EventDeviceFatal), "IBV_EVENT_DEVICE_FATAL"},
	{"EventPortActive", int64(EventPortActive), "IBV_EVENT_PORT_ACTIVE"},
	{"EventPortErr", int64(EventPortErr), "IBV_EVENT_PORT_ERR"},
	{"EventLIDChange", int64(EventLIDChange), "IBV_EVENT_LID_CHANGE"},
	{"EventPKeyChange", int64(EventPKeyChange), "IBV_EVENT_PKEY_CHANGE"},
	{"EventSMChange", int64(EventSMChange), "IBV_EVENT_SM_CHANGE"},
	{"EventSRQErr", int64(EventSRQErr), "IBV_EVENT_SRQ_ERR"},
	{"EventSRQLimitReached", int64(EventSRQLimitReached), "IBV_EVENT_SRQ_LIMIT_REACHED"},
	{"EventQPLastWQEReached", int64(EventQPLastWQEReached), "IBV_EVENT_QP_LAST_WQE_REACHED"},
	{"EventClientReregister", int64(EventClientReregister), "IBV_EVENT_CLIENT_REREGISTER"},
	{"EventGIDChange", int64(EventGIDChange), "IBV_EVENT_GID_CHANGE"},
	{"EventWQFatal", int64(EventWQFatal), "IBV_EVENT_WQ_FATAL"},
	{"AccessLocalWrite", int64(AccessLocalWrite), "IBV_ACCESS_LOCAL_WRITE"},
	{"AccessRemoteWrite", int64(AccessRemoteWrite), "IBV_ACCESS_REMOTE_WRITE"},
	{"AccessRemoteRead", int64(AccessRemoteRead), "IBV_ACCESS_REMOTE_READ"},
	{"AccessRemoteAtomic", int64(AccessRemoteAtomic), "IBV_ACCESS_REMOTE_ATOMIC"},
	{"AccessMWBind", int64(AccessMWBind), "IBV_ACCESS_MW_BIND"},
	{"WCSuccess", int64(WCSuccess), "IBV_WC_SUCCESS"},
	{"WCLocLenErr", int64(WCLocLenErr), "IBV_WC_LOC_LEN_ERR"},
	{"WCLocQPOpErr", int64(WCLocQPOpErr), "IBV_WC_LOC_QP_OP_ERR"},
	{"WCLocEECOpErr", int64(WCLocEECOpErr), "IBV_WC_LOC_EEC_OP_ERR"},
	{"WCLocProtErr", int64(WCLocProtErr), "IBV_WC_LOC_PROT_ERR"},
	{"WCWRFlushErr", int64(WCWRFlushErr), "IBV_WC_WR_FLUSH_ERR"},
	{"WCMWBindErr", int64(WCMWBindErr), "IBV_WC_MW_BIND_ERR"},
	{"WCBadRespErr", int64(WCBadRespErr), "IBV_WC_BAD_RESP_ERR"},
	{"WCLocAccessErr", int64(WCLocAccessErr), "IBV_WC_LOC_ACCESS_ERR"},
	{"WCRemInvReqErr", int64(WCRemInvReqErr), "IBV_WC_REM_INV_REQ_ERR"},
	{"WCRemAccessErr", int64(WCRemAccessErr), "IBV_WC_REM_ACCESS_ERR"},
	{"WCRemOpErr", int64(WCRemOpErr), "IBV_WC_REM_OP_ERR"},
	{"WCRetryExcErr", int64(WCRetryExcErr), "IBV_WC_RETRY_EXC_ERR"},
	{"WCRNRRetryExcErr", int64(WCRNRRetryExcErr), "IBV_WC_RNR_RETRY_EXC_ERR"},
	{"WCLocRDDViolErr", int64(WCLocRDDViolErr), "IBV_WC_LOC_RDD_VIOL_ERR"},
	{"WCRemInvRDReqErr", int64(WCRemInvRDReqErr), "IBV_WC_REM_INV_RD_REQ_ERR"},
	{"WCRemAbortErr", int64(WCRemAbortErr), "IBV_WC_REM_ABORT_ERR"},
	{"WCInvEECNErr", int64(WCInvEECNErr), "IBV_WC_INV_EECN_ERR"},
	{"WCInvEECStateErr", int64(WCInvEECStateErr), "IBV_WC_INV_EEC_STATE_ERR"},
	{"WCFatalErr", int64(WCFatalErr), "IBV_WC_FATAL_ERR"},
	{"WCRespTimeoutErr", int64(WCRespTimeoutErr), "IBV_WC_RESP_TIMEOUT_ERR"},
	{"WCGeneralErr", int64(WCGeneralErr), "IBV_WC_GENERAL_ERR"},
	{"WCTMErr", int64(WCTMErr), "IBV_WC_TM_ERR"},
	{"WCTMRndvIncomplete", int64(WCTMRndvIncomplete), "IBV_WC_TM_RNDV_INCOMPLETE"},
	{"WCSend", int64(WCSend), "IBV_WC_SEND"},
	{"WCRDMAWrite", int64(WCRDMAWrite), "IBV_WC_RDMA_WRITE"},
	{"WCRDMARead", int64(WCRDMARead), "IBV_WC_RDMA_READ"},
	{"WCCompSwap", int64(WCCompSwap), "IBV_WC_COMP_SWAP"},
	{"WCFetchAdd", int64(WCFetchAdd), "IBV_WC_FETCH_ADD"},
	{"WCBindMW", int64(WCBindMW), "IBV_WC_BIND_MW"},
	{"WCLocalInv", int64(WCLocalInv), "IBV_WC_LOCAL_INV"},
	{"WCRecv", int64(WCRecv), "IBV_WC_RECV"},
	{"WCRecvRDMAWithImm", int64(WCRecvRDMAWithImm), "IBV_WC_RECV_RDMA_WITH_IMM"},
	{"WCFlagGRH", int64(WCFlagGRH), "IBV_WC_GRH"},
	{"WCFlagWithImm", int64(WCFlagWithImm), "IBV_WC_WITH_IMM"},
	{"WCFlagIPCsum", int64(WCFlagIPCsum), "IBV_WC_IP_CSUM_OK"},
	{"WCFlagWithInv", int64(WCFlagWithInv), "IBV_WC_WITH_INV"},
	{"SendFence", int64(SendFence), "IBV_SEND_FENCE"},
	{"SendSignaled", int64(SendSignaled), "IBV_SEND_SIGNALED"},
	{"SendSolicited", int64(SendSolicited), "IBV_SEND_SOLICITED"},
	{"SendInline", int64(SendInline), "IBV_SEND_INLINE"},
	{"QPReset", int64(QPReset), "IBV_QPS_RESET"},
	{"QPInit", int64(QPInit), "IBV_QPS_INIT"},
	{"QPRTR", int64(QPRTR), "IBV_QPS_RTR"},
	{"QPRTS", int64(QPRTS), "IBV_QPS_RTS"},
	{"QPSQD", int64(QPSQD), "IBV_QPS_SQD"},
	{"QPSQE", int64(QPSQE), "IBV_QPS_SQE"},
	{"QPErr", int64(QPErr), "IBV_QPS_ERR"},
	{"QPUnknown", int64(QPUnknown), "IBV_QPS_UNKNOWN"},
	{"CMEventAddrResolved", int64(CMEventAddrResolved), "RDMA_CM_EVENT_ADDR_RESOLVED"},
	{"CMEventAddrError", int64(CMEventAddrError), "RDMA_CM_EVENT_ADDR_ERROR"},
	{"CMEventRouteResolved", int64(CMEventRouteResolved), "RDMA_CM_EVENT_ROUTE_RESOLVED"},
	{"CMEventRouteError", int64(CMEventRouteError), "RDMA_CM_EVENT_ROUTE_ERROR"},
	{"CMEventConnectRequest", int64(CMEventConnectRequest), "RDMA_CM_EVENT_CONNECT_REQUEST"},
	{"CMEventConnectResponse", int64(CMEventConnectResponse), "RDMA_CM_EVENT_CONNECT_RESPONSE"},
	{"CMEventConnectError", int64(CMEventConnectError), "RDMA_CM_EVENT_CONNECT_ERROR"},
	{"CMEventUnreachable", int64(CMEventUnreachable), "RDMA_CM_EVENT_UNREACHABLE"},
	{"CMEventRejected", int64(CMEventRejected), "RDMA_CM_EVENT_REJECTED"},
	{"CMEventEstablished", int64(CMEventEstablished), "RDMA_CM_EVENT_ESTABLISHED"},
	{"CMEventDisconnected", int64(CMEventDisconnected), "RDMA_CM_EVENT_DISCONNECTED"},
	{"CMEventDeviceRemoval", int64(CMEventDeviceRemoval), "RDMA_CM_EVENT_DEVICE_REMOVAL"},
	{"CMEventMulticastJoin", int64(CMEventMulticastJoin), "RDMA_CM_EVENT_MULTICAST_JOIN"},
	{"CMEventMulticastError", int64(CMEventMulticastError), "RDMA_CM_EVENT_MULTICAST_ERROR"},
	{"CMEventAddrChange", int64(CMEventAddrChange), "RDMA_CM_EVENT_ADDR_CHANGE"},
	{"CMEventTimeWaitExit", int64(CMEventTimeWaitExit), "RDMA_CM_EVENT_TIMEWAIT_EXIT"},
}

// Every exported constant of the *_types.go files is in cConsts, except the
// iota groups, which are Go's own numbering (SendOp, mapped to C by post.go).
func TestCConstsComplete(t *testing.T) {
	listed := map[string]bool{}
	for _, c := range cConsts {
		listed[c.goName] = true
	}
	files, err := filepath.Glob("*_types.go")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		for _, d := range af.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST || isIotaGroup(gd) {
				continue
			}
			for _, s := range gd.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					if n.IsExported() {
						assert.True(t, listed[n.Name], "%s: constant %s is not in cConsts", f, n.Name)
					}
				}
			}
		}
	}
}

func isIotaGroup(gd *ast.GenDecl) bool {
	vs := gd.Specs[0].(*ast.ValueSpec)
	if len(vs.Values) == 0 {
		return false
	}
	id, ok := vs.Values[0].(*ast.Ident)
	return ok && id.Name == "iota"
}

func TestStrings(t *testing.T) {
	assert.Equal(t, "success", WCSuccess.String())
	assert.Contains(t, WCWRFlushErr.String(), "Flush")
	assert.Equal(t, "unknown", WCStatus(1<<31).String())
	assert.Equal(t, "RECV", WCRecv.String())
	assert.Equal(t, "RDMA_READ", WCRDMARead.String())
	assert.Equal(t, "WCOpcode(77)", WCOpcode(77).String())
	assert.Equal(t, "RTS", QPRTS.String())
	assert.Equal(t, "QPState(99)", QPState(99).String())
	assert.Equal(t, "active", PortActive.String())
	assert.Equal(t, "unknown", PortState(42).String())
	assert.Equal(t, "RDMA_CM_EVENT_ESTABLISHED", CMEventEstablished.String())
	assert.Equal(t, "RDMA_CM_EVENT_CONNECT_REQUEST", CMEventConnectRequest.String())
	assert.Equal(t, "UNKNOWN EVENT", CMEventType(99).String())
	assert.Contains(t, EventSRQLimitReached.String(), "limit")
	assert.Equal(t, "unknown", AsyncEventType(-3).String())
	assert.Equal(t, "RDMA_WRITE", OpRDMAWrite.String())
	assert.Equal(t, "SEND", SendOp(0).String())
}
