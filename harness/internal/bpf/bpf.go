// Package bpf loads the small BPF programs grid writes instruction by
// instruction and attaches them at an interface's tc ingress: the drop on a
// switch's exclusive ports (package dataplane) and the fragment-hops
// benchmark's counters on its PS hosts. Nothing here needs a compiler or
// libbpf: a program is a few raw instructions.
package bpf

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Insn is one instruction: its opcode, destination and source registers,
// offset and immediate, as the kernel lays struct bpf_insn out.
func Insn(code uint8, dst, src uint8, off int16, imm int32) uint64 {
	return uint64(code) | uint64(dst&0xf)<<8 | uint64(src&0xf)<<12 | uint64(uint16(off))<<16 | uint64(uint32(imm))<<32
}

// logSize is the verifier log kept for a program the kernel refuses.
const logSize = 64 << 10

// Load loads a GPL program of the given type (unix.BPF_PROG_TYPE_*) and
// returns its descriptor (close-on-exec). A program the verifier refuses
// gives an error with the verifier's log.
func Load(progType uint32, insns []uint64) (int, error) {
	if len(insns) == 0 {
		return -1, errors.New("load BPF program: no instructions")
	}
	license := []byte("GPL\x00")
	log := make([]byte, logSize)
	// The leading fields of union bpf_attr for BPF_PROG_LOAD.
	attr := struct {
		progType, insnCount    uint32
		insns, license         uint64
		logLevel, logSize      uint32
		logBuf                 uint64
		kernVersion, progFlags uint32
	}{
		progType: progType, insnCount: uint32(len(insns)),
		insns: uint64(uintptr(unsafe.Pointer(&insns[0]))), license: uint64(uintptr(unsafe.Pointer(&license[0]))),
		logLevel: 1, logSize: uint32(len(log)), logBuf: uint64(uintptr(unsafe.Pointer(&log[0]))),
	}
	fd, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_PROG_LOAD, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	runtime.KeepAlive(insns)
	runtime.KeepAlive(license)
	runtime.KeepAlive(log)
	if errno != 0 {
		if msg := bytes.TrimRight(log, "\x00"); len(msg) > 0 {
			return -1, fmt.Errorf("load BPF program: %w: %s", errno, msg)
		}
		return -1, fmt.Errorf("load BPF program: %w", errno)
	}
	unix.CloseOnExec(int(fd))
	return int(fd), nil
}

// Ingress is a program AttachIngress put at an interface's tc ingress.
type Ingress struct {
	link int // the tcx link's descriptor, or -1 when a clsact filter holds the program
	// The clsact fallback: the filter, the handle it was added through,
	// and whether AttachIngress added the clsact qdisc too.
	h          *netlink.Handle
	ifindex    int
	filter     netlink.Filter
	addedQdisc bool
}

// ClsactOnly makes AttachIngress attach by a clsact filter without trying
// tcx first, as on a kernel before 6.6: for tests of that fallback.
var ClsactOnly atomic.Bool

// AttachIngress puts prog (a unix.BPF_PROG_TYPE_SCHED_CLS program whose
// return value is the tc verdict) at the tc ingress of the interface with
// the given index, in the calling thread's network namespace, which must
// be h's. It runs after the packet sockets on the interface (captures,
// rings) have had the frame, before the namespace's IP stack.
//
// It tries a tcx link first (BPF_LINK_CREATE, Linux 6.6 and later): the
// lighter hook, which the kernel takes off the interface when the link's
// descriptor closes, so a process that dies leaves nothing behind; `bpftool
// net show` lists it (`tc filter show` does not). On an older kernel it
// adds a clsact qdisc (if the interface has none) and a cls_bpf filter in
// direct-action mode, with the given name (as `tc filter show` lists it),
// handle and priority 1, so that attaching again replaces it; that filter
// outlives a process that dies without detaching it.
func AttachIngress(h *netlink.Handle, ifindex, prog int, name string) (*Ingress, error) {
	if !ClsactOnly.Load() && !tcxMissing.Load() {
		link, err := linkTCXIngress(ifindex, prog)
		if err == nil {
			return &Ingress{link: link}, nil
		}
		if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, errnoENOTSUPP) &&
			!errors.Is(err, unix.E2BIG) {
			return nil, fmt.Errorf("attach at tcx ingress: %w", err)
		}
		// A kernel before 6.6 knows no tcx attach type.
		tcxMissing.Store(true)
	}
	a := &Ingress{link: -1, h: h, ifindex: ifindex}
	switch err := h.QdiscAdd(clsactOf(ifindex)); {
	case err == nil:
		a.addedQdisc = true
	case !errors.Is(err, unix.EEXIST):
		return nil, fmt.Errorf("add clsact qdisc: %w", err)
	}
	a.filter = &netlink.BpfFilter{FilterAttrs: netlink.FilterAttrs{LinkIndex: ifindex,
		Parent: netlink.HANDLE_MIN_INGRESS, Handle: 1, Priority: 1, Protocol: unix.ETH_P_ALL},
		Fd: prog, Name: name, DirectAction: true}
	if err := h.FilterReplace(a.filter); err != nil {
		a.Detach()
		return nil, fmt.Errorf("add ingress filter: %w", err)
	}
	return a, nil
}

// tcxMissing is set once the kernel has refused a tcx link as unknown:
// later attachments go to clsact at once.
var tcxMissing atomic.Bool

// errnoENOTSUPP is the kernel's internal ENOTSUPP (524), which some
// BPF paths return to user space.
const errnoENOTSUPP = unix.Errno(524)

// linkTCXIngress attaches prog at the tcx ingress of the interface and
// returns the link's descriptor (close-on-exec, as the kernel makes it).
func linkTCXIngress(ifindex, prog int) (int, error) {
	// The leading fields of union bpf_attr for BPF_LINK_CREATE; the tcx
	// part (relative_fd, expected_revision) stays zero: after the others.
	attr := struct {
		progFD, targetIfindex, attachType, flags uint32
	}{uint32(prog), uint32(ifindex), unix.BPF_TCX_INGRESS, 0}
	fd, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_LINK_CREATE, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// TCX says whether a tcx link holds the program (else a clsact filter).
func (a *Ingress) TCX() bool { return a.link >= 0 }

// Detach takes the program off the interface: it closes the tcx link, or
// deletes the filter and the clsact qdisc if AttachIngress added it (and
// with it any filter added since). An interface gone meanwhile is no
// error. Detach may run in any thread.
func (a *Ingress) Detach() error {
	if a.link >= 0 {
		err := unix.Close(a.link)
		a.link = -1
		if err != nil {
			return fmt.Errorf("close tcx link: %w", err)
		}
		return nil
	}
	gone := func(err error) bool {
		return errors.Is(err, unix.ENODEV) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EINVAL)
	}
	var errs []error
	if a.filter != nil {
		if err := a.h.FilterDel(a.filter); err != nil && !gone(err) {
			errs = append(errs, fmt.Errorf("remove ingress filter: %w", err))
		}
		a.filter = nil
	}
	if a.addedQdisc {
		if err := a.h.QdiscDel(clsactOf(a.ifindex)); err != nil && !gone(err) {
			errs = append(errs, fmt.Errorf("remove clsact qdisc: %w", err))
		}
		a.addedQdisc = false
	}
	return errors.Join(errs...)
}

// clsactOf is the clsact qdisc of the interface with the given index.
func clsactOf(ifindex int) *netlink.GenericQdisc {
	return &netlink.GenericQdisc{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: ifindex,
		Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT}, QdiscType: "clsact"}
}
