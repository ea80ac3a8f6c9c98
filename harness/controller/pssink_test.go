package controller

import (
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/internal/bpf"
)

// psSink counts the fragments arriving at the PSs where they arrive: a tc
// ingress filter on each PS host's interface (a BPF program in
// direct-action mode, as the switches' exclusive ports have) counts every
// frame that is a GRID fragment of that PS's job, in a BPF array the
// generator reads as memory, and drops it. What reaches a PS then costs
// no IP stack, socket or system call, so the switches that deliver it
// (the kernel runs the delivery in the sender's thread) and the generator
// pay little for it. Other frames go on to the host's stack, where the
// PS's UDP socket (hopsLoad.openPS) reports any that reach it.
type psSink struct {
	n      int // PSs
	mapFD  int
	progs  []int
	counts []byte // the array's values, mapped: a uint64 per PS
}

// newPSSink makes the array for n PSs.
func newPSSink(n int) (*psSink, error) {
	attr := struct {
		mapType, keySize, valueSize, maxEntries, mapFlags uint32
	}{unix.BPF_MAP_TYPE_ARRAY, 4, 8, uint32(n), unix.BPF_F_MMAPABLE}
	fd, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_MAP_CREATE, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	if errno != 0 {
		return nil, fmt.Errorf("create the PSs' BPF array: %w", errno)
	}
	unix.CloseOnExec(int(fd))
	s := &psSink{n: n, mapFD: int(fd)}
	page := unix.Getpagesize()
	counts, err := unix.Mmap(s.mapFD, 0, (n*8+page-1)/page*page, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("map the PSs' BPF array: %w", err)
	}
	s.counts = counts
	return s, nil
}

// attach puts the counting filter for the PS at index i of the array, of
// job, on host's interface holding ip.
func (s *psSink) attach(st *fabric.State, host string, ip netip.Addr, i int, job uint16) error {
	node := st.Node(host)
	ifc, err := interfaceOf(node, ip)
	if err != nil {
		return err
	}
	prog, err := s.load(i, job)
	if err != nil {
		return fmt.Errorf("PS %s: %w", host, err)
	}
	return node.Do(func() error {
		// A zero handle works in the calling thread's namespace, the PS's.
		if _, err := bpf.AttachIngress(&netlink.Handle{}, ifc.Index, prog, "grid-bench-ps"); err != nil {
			return fmt.Errorf("PS %s %s: %w", host, ifc.Name, err)
		}
		return nil
	})
}

// load loads the filter of the PS at index i, of job: for a frame that is
// IPv4 (no options), UDP to the GRID port, with job in the GRID header, it
// adds one to the array's element i and drops the frame; any other frame
// goes on.
func (s *psSink) load(i int, job uint16) (int, error) {
	const (
		udpAt, gridAt  = gradproto.EthernetLen + gradproto.IPv4Len, gradproto.EthernetLen + gradproto.IPv4Len + gradproto.UDPLen
		mapLookupElem  = 1 // BPF_FUNC_map_lookup_elem
		tcActOK        = 0
		tcActShot      = 2
		r0, r1, r2, r6 = 0, 1, 2, 6
		r10            = 10
	)
	ins := bpf.Insn
	ldAbs := func(size uint8, at int) uint64 { return ins(unix.BPF_LD|unix.BPF_ABS|size, 0, 0, 0, int32(at)) }
	// jne jumps to the end (pass) from instruction at, if r0 != v.
	const pass = 21
	jne := func(at int, v int32) uint64 {
		return ins(unix.BPF_JMP|unix.BPF_JNE|unix.BPF_K, r0, 0, int16(pass-at-1), v)
	}
	insns := []uint64{
		0:    ins(unix.BPF_ALU64|unix.BPF_MOV|unix.BPF_X, r6, r1, 0, 0), // r6 = the skb, for the loads
		1:    ldAbs(unix.BPF_H, 12),                                     // EtherType
		2:    jne(2, gradproto.EtherTypeIPv4),
		3:    ldAbs(unix.BPF_B, gradproto.EthernetLen), // IPv4 version and header length
		4:    jne(4, 0x45),
		5:    ldAbs(unix.BPF_B, gradproto.EthernetLen+9), // IP protocol
		6:    jne(6, gradproto.ProtoUDP),
		7:    ldAbs(unix.BPF_H, udpAt+2), // UDP destination port
		8:    jne(8, gradproto.UDPPort),
		9:    ldAbs(unix.BPF_H, gridAt+2), // GRID job
		10:   jne(10, int32(job)),
		11:   ins(unix.BPF_ST|unix.BPF_MEM|unix.BPF_W, r10, 0, -4, int32(i)), // the key, on the stack
		12:   ins(unix.BPF_LD|unix.BPF_DW|unix.BPF_IMM, r1, unix.BPF_PSEUDO_MAP_FD, 0, int32(s.mapFD)),
		13:   0,
		14:   ins(unix.BPF_ALU64|unix.BPF_MOV|unix.BPF_X, r2, r10, 0, 0),
		15:   ins(unix.BPF_ALU64|unix.BPF_ADD|unix.BPF_K, r2, 0, 0, -4),
		16:   ins(unix.BPF_JMP|unix.BPF_CALL, 0, 0, 0, mapLookupElem),
		17:   ins(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, r0, 0, 5, 0), // no element (cannot be): drop it uncounted
		18:   ins(unix.BPF_ALU64|unix.BPF_MOV|unix.BPF_K, r1, 0, 0, 1),
		19:   ins(unix.BPF_STX|unix.BPF_ATOMIC|unix.BPF_DW, r0, r1, 0, unix.BPF_ADD), // lock *(u64 *)r0 += 1
		20:   ins(unix.BPF_JMP|unix.BPF_JA, 0, 0, 2, 0),
		pass: ins(unix.BPF_ALU64|unix.BPF_MOV|unix.BPF_K, r0, 0, 0, tcActOK),
		22:   ins(unix.BPF_JMP|unix.BPF_EXIT, 0, 0, 0, 0),
		23:   ins(unix.BPF_ALU64|unix.BPF_MOV|unix.BPF_K, r0, 0, 0, tcActShot),
		24:   ins(unix.BPF_JMP|unix.BPF_EXIT, 0, 0, 0, 0),
	}
	fd, err := bpf.Load(unix.BPF_PROG_TYPE_SCHED_CLS, insns)
	if err != nil {
		return -1, fmt.Errorf("the PS's filter: %w", err)
	}
	s.progs = append(s.progs, fd)
	return fd, nil
}

// arrived is how many fragments the PSs have counted so far, all together.
func (s *psSink) arrived() uint64 {
	var n uint64
	for i := range s.n {
		n += atomic.LoadUint64((*uint64)(unsafe.Pointer(&s.counts[8*i])))
	}
	return n
}

func (s *psSink) close() {
	if s.counts != nil {
		unix.Munmap(s.counts)
	}
	for _, fd := range s.progs {
		unix.Close(fd)
	}
	unix.Close(s.mapFD)
}

// TestPSSinkCountsAndDropsOnlyTheFragmentsOfItsJob runs the filters on
// frames in the kernel (BPF_PROG_TEST_RUN), attached nowhere.
func TestPSSinkCountsAndDropsOnlyTheFragmentsOfItsJob(t *testing.T) {
	s, err := newPSSink(2)
	if errors.Is(err, unix.EPERM) {
		t.Skip("loading BPF programs needs CAP_BPF (root):", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	progs := map[uint16]int{} // job -> the filter of the PS at index job-1
	for _, job := range []uint16{1, 2} {
		if progs[job], err = s.load(int(job)-1, job); err != nil {
			t.Fatal(err)
		}
	}
	fragment := func(job uint16, mutate func(b []byte)) []byte {
		p := &gradproto.Packet{SrcIP: netip.MustParseAddr("10.0.0.1"), DstIP: netip.MustParseAddr("10.0.0.2"), TTL: 64,
			SrcPort: gradproto.UDPPort, DstPort: gradproto.UDPPort,
			Header: gradproto.Header{Version: gradproto.Version, Job: job, Count: 1}, Values: []int32{1, 2, 3}}
		b := p.Marshal()
		if mutate != nil {
			mutate(b)
		}
		return b
	}
	const udpDstPort = gradproto.EthernetLen + gradproto.IPv4Len + 2
	for _, c := range []struct {
		name    string
		job     uint16 // whose filter
		frame   []byte
		counted bool
	}{
		{"a fragment of the job", 1, fragment(1, nil), true},
		{"a fragment of another job", 1, fragment(2, nil), false},
		{"the other job's fragment at its own PS", 2, fragment(2, nil), true},
		{"another UDP port", 1, fragment(1, func(b []byte) { b[udpDstPort] ^= 1 }), false},
		{"IPv4 with options", 1, fragment(1, func(b []byte) { b[gradproto.EthernetLen] = 0x46 }), false},
		{"not UDP", 1, fragment(1, func(b []byte) { b[gradproto.EthernetLen+9] = unix.IPPROTO_TCP }), false},
		{"not IPv4", 1, fragment(1, func(b []byte) { b[12], b[13] = 0x86, 0xdd }), false},
		{"too short to hold a GRID header", 1, fragment(1, nil)[:gradproto.EthernetLen+gradproto.IPv4Len+gradproto.UDPLen], false},
	} {
		before := s.arrived()
		ret, err := testRun(progs[c.job], c.frame)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		counted := s.arrived() - before
		if want := map[bool]uint32{true: 2, false: 0}[c.counted]; ret != want || counted != map[bool]uint64{true: 1, false: 0}[c.counted] {
			t.Errorf("%s: filter returned %d and counted %d, want %d (TC_ACT_SHOT is 2, TC_ACT_OK 0) counting it: %v", c.name, ret, counted, want, c.counted)
		}
	}
}

// testRun runs a tc program on frame once and returns its verdict.
func testRun(prog int, frame []byte) (uint32, error) {
	// The leading fields of union bpf_attr for BPF_PROG_TEST_RUN.
	attr := struct {
		progFD, retval, dataSizeIn, dataSizeOut uint32
		dataIn, dataOut                         uint64
		repeat, duration                        uint32
	}{progFD: uint32(prog), dataSizeIn: uint32(len(frame)), dataIn: uint64(uintptr(unsafe.Pointer(&frame[0]))), repeat: 1}
	_, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_PROG_TEST_RUN, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	runtime.KeepAlive(frame)
	if errno != 0 {
		return 0, fmt.Errorf("BPF_PROG_TEST_RUN: %w", errno)
	}
	return attr.retval, nil
}
