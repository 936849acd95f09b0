package crosshost

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/udapl-go/udapl/internal/devtest"
	"github.com/udapl-go/udapl/udat"
)

// The soak's peer (TestSoak, soak_test.go): a process of its own in VM B,
// so that the soak can kill it (SIGKILL) and start it again without
// rebooting B, and take B's rxe device away while nothing holds it open.
// The agent's role "soak-peer" starts this test binary again with
// soakChildEnv set; the init below then runs the peer instead of the tests
// or the agent. The peer accepts RC connections on one port and UD address
// resolutions on the next, checks every message and RDMA write with
// immediate data it receives and answers each with a send, echoes every
// datagram, and accounts for every DTO it posts. On SIGTERM it stops and
// prints its counts on one line: soakResultPrefix and JSON.

const (
	soakChildEnv     = "UDAPL_SOAK_CHILD" // the RC port; UD is the next one
	soakResultPrefix = "SOAKRESULT "
	soakMagic        = 0x50414f53 // "SOAP"

	// B's memory, per connection slot: the area A RDMA-writes and reads
	// back (soakWindow blocks), the area A writes with immediate data
	// (soakWindow blocks), a pattern A reads, soakWindow atomic words, and
	// the slot's receive buffers (unless the connection uses the SRQ).
	soakBlock     = 4096
	soakWindow    = 8  // DTOs (slots) A keeps busy per connection
	soakRecvs     = 16 // receives per connection, on both sides
	soakSlots     = 16 // connections B holds at once
	soakWriteArea = 0
	soakImmArea   = soakWriteArea + soakWindow*soakBlock
	soakReadArea  = soakImmArea + soakWindow*soakBlock
	soakReadLen   = 4 * soakBlock
	soakAtomics   = soakReadArea + soakReadLen
	soakRecvArea  = soakAtomics + soakBlock
	soakSlotSize  = soakRecvArea + soakRecvs*soakBlock
	soakSRQRecvs  = 64
	soakSRQArea   = soakSlots * soakSlotSize
	soakUDRecvs   = 64
	soakUDBuf     = 2048
	soakUDArea    = soakSRQArea + soakSRQRecvs*soakBlock
	soakPeerSize  = soakUDArea + soakUDRecvs*soakUDBuf

	// Message kinds, in the header's kind field.
	soakKindEcho  = 1 // a send (or send with immediate data) B echoes
	soakKindAck   = 2 // B's answer to an RDMA write with immediate data
	soakKindDgram = 3 // a datagram, echoed
	soakHdr       = 32
)

// soakHeader starts every message: magic, kind, the connection's key, the
// sequence number and the message's length.
type soakHeader struct {
	Kind uint32
	Key  uint64
	Seq  uint64
	Len  uint32
}

func (h soakHeader) put(b []byte) {
	binary.LittleEndian.PutUint32(b, soakMagic)
	binary.LittleEndian.PutUint32(b[4:], h.Kind)
	binary.LittleEndian.PutUint64(b[8:], h.Key)
	binary.LittleEndian.PutUint64(b[16:], h.Seq)
	binary.LittleEndian.PutUint32(b[24:], h.Len)
}

func getSoakHeader(b []byte) (soakHeader, error) {
	if len(b) < soakHdr || binary.LittleEndian.Uint32(b) != soakMagic {
		return soakHeader{}, fmt.Errorf("no soak header in %d bytes", len(b))
	}
	return soakHeader{Kind: binary.LittleEndian.Uint32(b[4:]), Key: binary.LittleEndian.Uint64(b[8:]),
		Seq: binary.LittleEndian.Uint64(b[16:]), Len: binary.LittleEndian.Uint32(b[24:])}, nil
}

// soakFill fills b with the pattern of (key, seq); soakCheck checks it.
// soakCheckAt checks b as the part of such a pattern that starts at off.
func soakFill(b []byte, key, seq uint64) {
	x := key*0x9e3779b97f4a7c15 ^ seq*0xbf58476d1ce4e5b9
	for i := range b {
		b[i] = byte(x>>(8*(i&7))) + byte(i>>3)
	}
}

func soakCheck(b []byte, key, seq uint64) error { return soakCheckAt(b, key, seq, 0) }

func soakCheckAt(b []byte, key, seq uint64, off int) error {
	x := key*0x9e3779b97f4a7c15 ^ seq*0xbf58476d1ce4e5b9
	for j, c := range b {
		i := off + j
		if want := byte(x>>(8*(i&7))) + byte(i>>3); c != want {
			return fmt.Errorf("byte %d of %d is %#02x, want %#02x (key %#x seq %d)", j, len(b), c, want, key, seq)
		}
	}
	return nil
}

// soakMessage builds a message: the header, then the pattern.
func soakMessage(b []byte, h soakHeader) {
	h.put(b)
	soakFill(b[soakHdr:h.Len], h.Key, h.Seq)
}

// checkSoakMessage checks a message of n bytes against the connection's key.
func checkSoakMessage(b []byte, n int, key uint64, kind uint32) (soakHeader, error) {
	h, err := getSoakHeader(b[:n])
	if err != nil {
		return h, err
	}
	if h.Key != key || h.Kind != kind || int(h.Len) != n {
		return h, fmt.Errorf("header %+v, want key %#x kind %d length %d", h, key, kind, n)
	}
	return h, soakCheck(b[soakHdr:n], h.Key, h.Seq)
}

// The connection request's private data: the connection's key and whether
// B is to put it on its SRQ. The accept's: B's slot for it (va, rkey).
func soakConnectPD(key uint64, srq bool) []byte {
	pd := make([]byte, 16)
	binary.LittleEndian.PutUint64(pd, key)
	if srq {
		pd[8] = 1
	}
	return pd
}

func init() {
	roles["soak-peer"] = soakPeerRole
	roles["soak-sh"] = func(ctx context.Context, req request, ready func(), rl *roleLog) error {
		ready()
		out, err := exec.CommandContext(ctx, "sh", "-c", req.Args.Cmd).CombinedOutput()
		rl.logf("%s", strings.TrimSpace(string(out)))
		if err != nil {
			return fmt.Errorf("sh -c %q: %v: %s", req.Args.Cmd, err, out)
		}
		return nil
	}
	if p := os.Getenv(soakChildEnv); p != "" {
		os.Exit(soakPeerMain(p))
	}
}

// soakPeerPIDFile is where the peer process leaves its pid (in the
// directory the pair shares); soakPeerDieFile, once it exists, makes the
// peer process SIGKILL itself: at once, where a shell started in the
// loaded, emulated VM B may take seconds to get to the kill.
func soakPeerPIDFile() string { return filepath.Join(pairDir(), "soak-peer.pid") }
func soakPeerDieFile() string { return filepath.Join(pairDir(), "soak-peer.die") }

// soakPeerRole runs the peer process until the role is cancelled (then it
// is asked to stop: SIGTERM) or the process dies; its counts become the
// role's.
func soakPeerRole(ctx context.Context, req request, ready func(), rl *roleLog) error {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), soakChildEnv+"="+strconv.Itoa(int(req.Port)))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { cmd.Process.Signal(syscall.SIGTERM) })
	defer stop()
	var resErr error
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "ready":
			ready()
		case strings.HasPrefix(line, soakResultPrefix):
			var r result
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, soakResultPrefix)), &r); err != nil {
				resErr = err
				break
			}
			for k, v := range r.Counts {
				rl.count(k, v)
			}
			rl.lines = append(rl.lines, r.Log...)
			if r.Err != "" {
				resErr = errors.New(r.Err)
			}
		default:
			fmt.Println("soak peer:", line)
		}
	}
	if err := cmd.Wait(); err != nil {
		return errors.Join(fmt.Errorf("soak peer process: %w", err), resErr)
	}
	return resErr
}

// soakPeer is the peer process's state.
type soakPeer struct {
	ia  *udat.IA
	pz  *udat.PZ
	lmr *udat.LMR
	buf []byte
	srq *udat.SRQ

	mu    sync.Mutex
	slots [soakSlots]*peerConn // nil: free
	// When B last listed its slots' holders, having no slot for a request.
	listedHolders time.Time
	srqLive       map[uint64]bool // SRQ cookies posted and not completed
	srqSeq        uint64
	counts        map[string]int
	errs          []string
	log           []string
}

func (p *soakPeer) count(k string, n int) {
	p.mu.Lock()
	p.counts[k] += n
	p.mu.Unlock()
}

func (p *soakPeer) max(k string, v int) {
	p.mu.Lock()
	p.counts[k] = max(p.counts[k], v)
	p.mu.Unlock()
}

func (p *soakPeer) fail(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.errs) < 20 {
		p.errs = append(p.errs, fmt.Sprintf(format, args...))
	}
	p.counts["errors"]++
}

func (p *soakPeer) logf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := time.Now().Format("15:04:05.000 ") + fmt.Sprintf(format, args...)
	// At once too (B's log, printed when the soak fails): a killed
	// process reports nothing at its end.
	fmt.Println(line)
	if len(p.log) < 200 {
		p.log = append(p.log, line)
	}
}

// soakStatus names a DTO's outcome for the counts.
func soakStatus(s udat.DTOStatus) string {
	if s == udat.DTOSuccess {
		return "ok"
	}
	if s == udat.DTOErrFlushed {
		return "flushed"
	}
	return s.String()
}

func soakPeerMain(portArg string) int {
	port, err := strconv.Atoi(portArg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak peer:", err)
		return 2
	}
	os.WriteFile(soakPeerPIDFile(), []byte(strconv.Itoa(os.Getpid())), 0o644)
	os.Remove(soakPeerDieFile())
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	go func() {
		if pollFile(ctx, soakPeerDieFile()) == nil {
			os.Remove(soakPeerDieFile())
			if self, err := os.FindProcess(os.Getpid()); err == nil {
				self.Kill() // SIGKILL, as a crash would end it
			}
		}
	}()
	p := &soakPeer{srqLive: map[uint64]bool{}, counts: map[string]int{}}
	var wg sync.WaitGroup
	err = p.run(ctx, uint16(port), &wg)
	cancel()
	wg.Wait()
	if p.ia != nil {
		p.sample("end")
		p.mu.Lock()
		p.counts["srq recv left posted"] = len(p.srqLive)
		p.mu.Unlock()
		p.ia.Close(udat.CloseAbruptFlag)
	}
	p.mu.Lock()
	res := result{Counts: p.counts, Log: p.log}
	if err != nil {
		p.errs = append(p.errs, err.Error())
	}
	if len(p.errs) > 0 {
		res.Err = strings.Join(p.errs, "; ")
	}
	p.mu.Unlock()
	b, _ := json.Marshal(res)
	fmt.Printf("%s%s\n", soakResultPrefix, b)
	return 0
}

func (p *soakPeer) run(ctx context.Context, port uint16, wg *sync.WaitGroup) error {
	var err error
	if p.ia, err = udat.OpenIA(devtest.Device(), 64); err != nil {
		return err
	}
	if p.pz, err = p.ia.CreatePZ(); err != nil {
		return err
	}
	if p.lmr, err = p.ia.AllocLMR(p.pz, soakPeerSize, udat.MemPrivAll|udat.MemPrivIBRemoteAtomic); err != nil {
		return err
	}
	p.buf = p.lmr.Bytes()
	if p.srq, err = p.ia.CreateSRQ(p.pz, udat.SRQAttr{MaxRecvDTOs: soakSRQRecvs, MaxRecvIOV: 1}); err != nil {
		return err
	}
	for k := range soakSRQRecvs {
		if err := p.postSRQ(k); err != nil {
			return err
		}
	}
	crEVD, err := p.ia.CreateEVD(16, udat.EVDCRFlag)
	if err != nil {
		return err
	}
	if _, err := p.ia.CreatePSP(udat.ConnQual(port), crEVD, udat.PSPConsumerFlag); err != nil {
		return err
	}
	ud, err := p.startUD(ctx, port+1, wg)
	if err != nil {
		return fmt.Errorf("UD: %w", err)
	}
	_ = ud
	p.sample("start")
	fmt.Println("ready")
	for ctx.Err() == nil {
		ev, _, err := crEVD.WaitContext(ctx, 1)
		if err != nil {
			continue
		}
		if ev.CR.CR == nil {
			p.logf("CR EVD: %v", ev.Number)
			continue
		}
		p.accept(ctx, ev.CR.CR, wg)
	}
	return nil
}

// sample records the process's resources and its device's.
func (p *soakPeer) sample(when string) {
	for k, v := range soakResources(nil) {
		p.count("res "+when+" "+k, int(v))
	}
}

func (p *soakPeer) postSRQ(k int) error {
	p.mu.Lock()
	c := uint64(1)<<62 | uint64(k)<<32 | p.srqSeq&0xffffffff
	p.srqSeq++
	p.mu.Unlock()
	if err := p.srq.PostRecv([]udat.LMRTriplet{p.lmr.Triplet(soakSRQArea+k*soakBlock, soakBlock)}, c); err != nil {
		return err
	}
	p.mu.Lock()
	p.srqLive[c] = true
	p.counts["srq recv posted"]++
	p.mu.Unlock()
	return nil
}

// peerConn is one RC connection B accepted.
type peerConn struct {
	p         *soakPeer
	slot      int
	base      int // the slot's offset in buf
	key       uint64
	srq       bool
	ep        *udat.EP
	dto, conn *udat.EVD
	posted    map[uint64]string // cookies outstanding: "recv" or "send"
	seq       uint64
	// A message can complete here before the EP leaves
	// COMPLETION_PENDING (the connection manager's ESTABLISHED comes
	// after A's first messages), when a send is refused: the answers wait
	// for the event.
	established   bool
	deferred      [][2]int // off, n
	deferredSince time.Time
	probing       bool // a probe is outstanding

	// For listHolders.
	accepted       time.Time
	establishedAt  atomic.Int64 // Unix ns; 0 before ESTABLISHED
	lastCompletion atomic.Int64 // Unix ns
	probes         atomic.Int64
}

// soakProbeIdle is how long B lets a connection go without a completion
// before it probes the peer. B only answers: when A's process or host is
// gone without a disconnect request reaching B (lost at 10 % loss, or
// never sent), nothing would end the connection and its slot would be
// held for ever. The probe is a zero-length RDMA write, which the peer's
// device acknowledges without touching memory (no rkey is needed, IB
// C9-88); it fails within DeadPeerTimeout when nobody answers.
const soakProbeIdle = 2 * time.Second

func (p *soakPeer) accept(ctx context.Context, cr *udat.CR, wg *sync.WaitGroup) {
	q, err := cr.Query()
	if err != nil || len(q.PrivateData) < 16 {
		p.fail("connection request: %v, %d bytes of private data", err, len(q.PrivateData))
		cr.Reject(nil)
		return
	}
	c := &peerConn{p: p, slot: -1, key: binary.LittleEndian.Uint64(q.PrivateData), srq: q.PrivateData[8] == 1,
		posted: map[uint64]string{}, accepted: time.Now()}
	c.lastCompletion.Store(c.accepted.UnixNano())
	p.mu.Lock()
	for i, holder := range p.slots {
		if holder == nil {
			c.slot, p.slots[i] = i, c
			break
		}
	}
	p.mu.Unlock()
	if c.slot < 0 {
		p.count("conn rejected (no slot)", 1)
		p.listHolders()
		cr.Reject(nil)
		return
	}
	c.base = c.slot * soakSlotSize
	s := p.buf[c.base : c.base+soakSlotSize]
	clear(s[:soakReadArea])
	soakFill(s[soakReadArea:soakReadArea+soakReadLen], c.key, ^uint64(0))
	clear(s[soakAtomics : soakAtomics+soakWindow*8])
	if err := c.open(); err != nil {
		p.fail("connection %#x: %v", c.key, err)
		cr.Reject(nil)
		c.release()
		return
	}
	pd := make([]byte, 16)
	binary.LittleEndian.PutUint64(pd, p.lmr.Triplet(c.base, soakSlotSize).VirtualAddress)
	binary.LittleEndian.PutUint32(pd[8:], p.lmr.RMRContext())
	if err := cr.Accept(c.ep, pd); err != nil {
		p.count("accept failed", 1)
		p.logf("accept %#x: %v", c.key, err)
		c.drain(5 * time.Second)
		c.release()
		return
	}
	p.count("conn accepted", 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.serve(ctx)
	}()
}

func (c *peerConn) open() error {
	var err error
	p := c.p
	if c.dto, err = p.ia.CreateEVD(2*soakRecvs+2*soakWindow, udat.EVDDTOFlag); err != nil {
		return err
	}
	if c.conn, err = p.ia.CreateEVD(8, udat.EVDConnectionFlag); err != nil {
		return err
	}
	attr := &udat.EPAttr{ServiceType: udat.ServiceTypeRC, MaxRecvDTOs: soakRecvs, MaxRequestDTOs: soakRecvs,
		MaxRecvIOV: 1, MaxRequestIOV: 1, MaxRDMAReadIn: soakWindow, MaxRDMAReadOut: soakWindow, ACKTimeout: soakACKTimeout}
	if c.srq {
		attr.MaxRecvDTOs = 0
		c.ep, err = p.ia.CreateEPWithSRQ(p.pz, c.dto, c.dto, c.conn, p.srq, attr)
		return err
	}
	if c.ep, err = p.ia.CreateEP(p.pz, c.dto, c.dto, c.conn, attr); err != nil {
		return err
	}
	for k := range soakRecvs {
		if err := c.postRecv(k); err != nil {
			return err
		}
	}
	return nil
}

func (c *peerConn) postRecv(k int) error {
	cookie := uint64(1)<<63 | uint64(k)<<32 | c.seq
	c.seq++
	err := c.ep.PostRecv([]udat.LMRTriplet{c.p.lmr.Triplet(c.base+soakRecvArea+k*soakBlock, soakBlock)}, cookie, udat.CompletionDefault)
	if err == nil {
		c.posted[cookie] = "recv"
		c.p.count("recv posted", 1)
	}
	return err
}

// repost gives back receive buffer off (a slot's or the SRQ's).
func (c *peerConn) repost(off int) error {
	if off >= soakSRQArea {
		return c.p.postSRQ((off - soakSRQArea) / soakBlock)
	}
	return c.postRecv((off - c.base - soakRecvArea) / soakBlock)
}

// send answers from buffer off (a receive buffer, reposted when the send
// completes).
func (c *peerConn) send(off, n int) error {
	cookie := uint64(off)<<32 | c.seq&0xffffffff
	c.seq++
	err := c.ep.PostSend([]udat.LMRTriplet{c.p.lmr.Triplet(off, n)}, cookie, udat.CompletionDefault)
	if err == nil {
		c.posted[cookie] = "send"
		c.p.count("send posted", 1)
		return nil
	}
	c.p.count(fmt.Sprintf("send refused: %v", udat.CodeOf(err)), 1)
	if !c.established && udat.CodeOf(err).Subtype() == udat.InvalidStateEPComplPending {
		if len(c.deferred) == 0 {
			c.deferredSince = time.Now()
		}
		c.deferred = append(c.deferred, [2]int{off, n})
		return nil
	}
	c.p.logf("conn %#x: post a send: %v", c.key, err)
	// The SRQ outlives the connection: its buffer goes back.
	if off >= soakSRQArea {
		c.p.postSRQ((off - soakSRQArea) / soakBlock)
	}
	return err
}

// serve handles the connection's completions until it ends, then accounts
// for the rest and frees it.
func (c *peerConn) serve(ctx context.Context) {
	defer c.release()
	p := c.p
	ending := false
	for {
		if !ending {
			ev, err := c.conn.Dequeue()
			if err == nil && ev.Number == udat.EventConnectionEstablished {
				c.established = true
				c.establishedAt.Store(time.Now().UnixNano())
				if len(c.deferred) > 0 {
					p.count("answers deferred to ESTABLISHED", len(c.deferred))
					p.max("answers deferred: longest wait ms", int(time.Since(c.deferredSince).Milliseconds()))
				}
				for _, d := range c.deferred {
					if c.send(d[0], d[1]) != nil {
						ending = true
					}
				}
				c.deferred = nil
			}
			if err == nil && ev.Number != udat.EventConnectionEstablished {
				p.count("conn "+ev.Number.String(), 1)
				if ev.Number != udat.EventConnectionDisconnected {
					p.logf("conn %#x: %v", c.key, ev.Number)
				}
				ending = true
			}
		}
		if ending || ctx.Err() != nil {
			c.drain(30 * time.Second)
			return
		}
		wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		ev, _, err := c.dto.WaitContext(wctx, 1)
		cancel()
		if err != nil {
			if c.established && !c.probing && time.Since(time.Unix(0, c.lastCompletion.Load())) > soakProbeIdle {
				ending = c.probe() != nil
			}
			continue
		}
		if !c.complete(ev) {
			if ev.DTO.Status == udat.DTOSuccess {
				p.logf("conn %#x: ends after %v of cookie %#x", c.key, ev.DTO.Op, ev.DTO.Cookie)
			}
			ending = true
		}
	}
}

// probe posts the probe of soakProbeIdle.
func (c *peerConn) probe() error {
	cookie := uint64(1)<<61 | c.seq&0xffffffff
	c.seq++
	if err := c.ep.PostRDMAWrite(nil, cookie, udat.RMRTriplet{}, udat.CompletionDefault); err != nil {
		c.p.logf("conn %#x: post a probe: %v", c.key, err)
		return err
	}
	c.posted[cookie] = "probe"
	c.probing = true
	c.probes.Add(1)
	return nil
}

// complete handles one completion; false when the connection is done for.
func (c *peerConn) complete(ev udat.Event) bool {
	p := c.p
	d := ev.DTO
	quiet := time.Since(time.Unix(0, c.lastCompletion.Swap(time.Now().UnixNano())))
	what, ok := c.posted[d.Cookie]
	if ok {
		delete(c.posted, d.Cookie)
	} else if d.Cookie>>62 == 1 {
		p.mu.Lock()
		ok = p.srqLive[d.Cookie]
		delete(p.srqLive, d.Cookie)
		p.mu.Unlock()
		what = "srq recv"
	}
	if !ok {
		p.fail("completion of cookie %#x (%v, %v), not outstanding", d.Cookie, d.Op, d.Status)
		return false
	}
	p.count(what+" "+soakStatus(d.Status), 1)
	if what == "probe" {
		c.probing = false
		if d.Status != udat.DTOSuccess && d.Status != udat.DTOErrFlushed {
			p.logf("conn %#x: probe %v after %v without a completion", c.key, d.Status, quiet.Round(time.Millisecond))
		}
		return d.Status == udat.DTOSuccess
	}
	off := c.base + soakRecvArea + int(d.Cookie>>32&0xffff)*soakBlock
	if what == "srq recv" {
		off = soakSRQArea + int(d.Cookie>>32&0xffff)*soakBlock
	} else if what == "send" {
		off = int(d.Cookie >> 32)
	}
	if d.Status != udat.DTOSuccess {
		if d.Status != udat.DTOErrFlushed {
			p.logf("conn %#x: %s %v", c.key, what, d.Status)
		}
		// The SRQ outlives the connection: its buffer goes back.
		if off >= soakSRQArea && what != "recv" {
			p.postSRQ((off - soakSRQArea) / soakBlock)
		}
		return false
	}
	if what == "send" {
		return c.repost(off) == nil
	}
	// A receive: a message to echo, or an RDMA write with immediate data
	// to check and acknowledge.
	msg := p.buf[off : off+soakBlock]
	switch d.Op {
	case udat.DTOIBRecvImmed:
		w, seq := int(ev.IB.ImmedData>>24), uint64(ev.IB.ImmedData&0xffffff)
		if w >= soakWindow {
			p.fail("conn %#x: immediate data %#x names no block", c.key, ev.IB.ImmedData)
			return false
		}
		area := p.buf[c.base+soakImmArea+w*soakBlock : c.base+soakImmArea+(w+1)*soakBlock]
		if err := soakCheck(area, c.key, seq); err != nil {
			p.fail("conn %#x: RDMA write with immediate %#x: %v", c.key, ev.IB.ImmedData, err)
			return false
		}
		p.count("write-imm verified", 1)
		p.count("bytes verified", soakBlock)
		soakHeader{Kind: soakKindAck, Key: c.key, Seq: seq | uint64(w)<<24, Len: soakHdr}.put(msg)
		return c.send(off, soakHdr) == nil
	case udat.DTOReceive, udat.DTOIBRecvMsgImmed:
		h, err := checkSoakMessage(msg, int(d.TransferredLength), c.key, soakKindEcho)
		if err == nil && d.Op == udat.DTOIBRecvMsgImmed && ev.IB.ImmedData != uint32(h.Seq) {
			err = fmt.Errorf("immediate data %#x, want %#x", ev.IB.ImmedData, uint32(h.Seq))
		}
		if err != nil {
			p.fail("conn %#x: message: %v", c.key, err)
			return false
		}
		p.count("msgs verified", 1)
		p.count("bytes verified", int(d.TransferredLength))
		return c.send(off, int(d.TransferredLength)) == nil
	}
	p.fail("conn %#x: receive completed as %v", c.key, d.Op)
	return false
}

// drain waits (at most d) until every DTO of the connection has
// completed; the SRQ keeps its receives.
func (c *peerConn) drain(d time.Duration) {
	if c.ep == nil {
		return
	}
	if len(c.deferred) > 0 {
		c.p.count("answers deferred, never sent (no ESTABLISHED)", len(c.deferred))
		c.p.logf("conn %#x: ends with %d answers waiting %v for ESTABLISHED", c.key, len(c.deferred), time.Since(c.deferredSince).Round(time.Millisecond))
	}
	for _, d := range c.deferred {
		if d[0] >= soakSRQArea {
			c.p.postSRQ((d[0] - soakSRQArea) / soakBlock)
		}
	}
	c.deferred = nil
	c.ep.Disconnect(udat.CloseAbruptFlag)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for len(c.posted) > 0 {
		ev, _, err := c.dto.WaitContext(ctx, 1)
		if err != nil {
			c.p.fail("conn %#x: %d DTOs never completed: %v", c.key, len(c.posted), err)
			return
		}
		c.complete(ev)
	}
	// SRQ receives this EP consumed may still wait in its EVD.
	for {
		ev, err := c.dto.Dequeue()
		if err != nil {
			break
		}
		c.complete(ev)
	}
}

func (c *peerConn) release() {
	if c.ep != nil {
		c.ep.Free()
	}
	for _, e := range []*udat.EVD{c.dto, c.conn} {
		if e != nil {
			e.Free()
		}
	}
	c.p.mu.Lock()
	c.p.slots[c.slot] = nil
	c.p.mu.Unlock()
}

// listHolders logs, at most every 10 s, what holds each slot: when a
// request finds none free, the reason is there.
func (p *soakPeer) listHolders() {
	p.mu.Lock()
	now := time.Now()
	if now.Sub(p.listedHolders) < 10*time.Second {
		p.mu.Unlock()
		return
	}
	p.listedHolders = now
	var lines []string
	for i, c := range p.slots {
		if c == nil {
			continue
		}
		state := "not established"
		if at := c.establishedAt.Load(); at != 0 {
			state = fmt.Sprintf("established %v ago", now.Sub(time.Unix(0, at)).Round(time.Millisecond))
		}
		lines = append(lines, fmt.Sprintf("slot %d: conn %#x accepted %v ago, %s, last completion %v ago, probes %d",
			i, c.key, now.Sub(c.accepted).Round(time.Millisecond), state,
			now.Sub(time.Unix(0, c.lastCompletion.Load())).Round(time.Millisecond), c.probes.Load()))
	}
	p.mu.Unlock()
	for _, l := range lines {
		p.logf("no slot free: %s", l)
	}
}

// peerUD is B's UD EP: it echoes every datagram to its sender.
type peerUD struct {
	p         *soakPeer
	ep        *udat.EP
	dto, conn *udat.EVD
	crEVD     *udat.EVD
	ahs       map[uint32]udat.IBAddrHandle
	posted    map[uint64]string
	seq       uint64
}

func (p *soakPeer) startUD(ctx context.Context, port uint16, wg *sync.WaitGroup) (*peerUD, error) {
	u := &peerUD{p: p, ahs: map[uint32]udat.IBAddrHandle{}, posted: map[uint64]string{}}
	var err error
	if u.dto, err = p.ia.CreateEVD(4*soakUDRecvs, udat.EVDDTOFlag); err != nil {
		return nil, err
	}
	if u.conn, err = p.ia.CreateEVD(64, udat.EVDConnectionFlag); err != nil {
		return nil, err
	}
	if u.crEVD, err = p.ia.CreateEVD(16, udat.EVDCRFlag); err != nil {
		return nil, err
	}
	attr := udat.DefaultEPAttr()
	attr.ServiceType = udat.ServiceTypeIBUD
	attr.MaxRecvDTOs, attr.MaxRequestDTOs = soakUDRecvs, soakUDRecvs
	if u.ep, err = p.ia.CreateEP(p.pz, u.dto, u.dto, u.conn, &attr); err != nil {
		return nil, err
	}
	for k := range soakUDRecvs {
		if err := u.postRecv(k); err != nil {
			return nil, err
		}
	}
	if _, err := p.ia.CreatePSP(udat.ConnQual(port), u.crEVD, udat.PSPConsumerFlag); err != nil {
		return nil, err
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		u.serve(ctx)
	}()
	return u, nil
}

func (u *peerUD) postRecv(k int) error {
	cookie := uint64(1)<<63 | uint64(k)<<32 | u.seq&0xffffffff
	u.seq++
	err := u.ep.PostRecv([]udat.LMRTriplet{u.p.lmr.Triplet(soakUDArea+k*soakUDBuf, soakUDBuf)}, cookie, udat.CompletionDefault)
	if err == nil {
		u.posted[cookie] = "ud recv"
		u.p.count("ud recv posted", 1)
	}
	return err
}

func (u *peerUD) serve(ctx context.Context) {
	p := u.p
	for ctx.Err() == nil {
		if ev, err := u.crEVD.Dequeue(); err == nil && ev.CR.CR != nil {
			if err := ev.CR.CR.Accept(u.ep, nil); err != nil {
				p.logf("UD accept: %v", err)
			}
		}
		if ev, err := u.conn.Dequeue(); err == nil {
			if ev.Number == udat.EventIBUDConnectionEstablished {
				// A resolves again with a new EP when its echoes stop
				// coming: the address handles of its earlier EPs go.
				for qpn, ah := range u.ahs {
					if ah.IAAddr == ev.IB.RemoteAH.IAAddr {
						if err := u.ep.UDAHFree(&ah); err != nil {
							p.fail("UD: free an address handle: %v", err)
						}
						delete(u.ahs, qpn)
					}
				}
				u.ahs[ev.IB.RemoteAH.QPN] = ev.IB.RemoteAH
				// The address handle is all B needs of the resolution.
				if err := u.ep.UDCMFree(ev.IB.CM); err != nil {
					p.fail("UD: free the connection state: %v", err)
				}
				p.count("ud peers resolved", 1)
			} else {
				p.logf("UD connection event %v", ev.Number)
			}
		}
		wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		ev, _, err := u.dto.WaitContext(wctx, 1)
		cancel()
		if err != nil {
			continue
		}
		d := ev.DTO
		what, ok := u.posted[d.Cookie]
		if !ok {
			p.fail("UD completion of cookie %#x, not outstanding", d.Cookie)
			continue
		}
		delete(u.posted, d.Cookie)
		p.count(what+" "+soakStatus(d.Status), 1)
		k := int(d.Cookie >> 32 & 0xffff)
		if what == "ud send" {
			u.postRecv(k)
			continue
		}
		if d.Status != udat.DTOSuccess {
			continue
		}
		off := soakUDArea + k*soakUDBuf + udat.GRHSize
		n := int(d.TransferredLength) - udat.GRHSize
		h, err := getSoakHeader(p.buf[off : off+n])
		if err == nil {
			_, err = checkSoakMessage(p.buf[off:off+n], n, h.Key, soakKindDgram)
		}
		if err != nil {
			p.fail("datagram: %v", err)
			u.postRecv(k)
			continue
		}
		p.count("dgrams verified", 1)
		p.count("bytes verified", n)
		ah, ok := u.ahs[ev.IB.RemoteAH.QPN]
		if !ok {
			p.count("dgrams from unknown QPs", 1)
			u.postRecv(k)
			continue
		}
		cookie := uint64(k)<<32 | u.seq&0xffffffff
		u.seq++
		if err := u.ep.PostSendUD([]udat.LMRTriplet{p.lmr.Triplet(off, n)}, &ah, cookie, udat.CompletionDefault); err != nil {
			p.logf("UD echo: %v", err)
			u.postRecv(k)
			continue
		}
		u.posted[cookie] = "ud send"
		p.count("ud send posted", 1)
	}
}
