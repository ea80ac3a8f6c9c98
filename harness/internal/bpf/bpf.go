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

// AttachIngress puts prog (a unix.BPF_PROG_TYPE_SCHED_CLS program in
// direct-action mode: its return value is the tc verdict) at the tc ingress
// of the interface with the given index, through h (in the interface's
// namespace), adding the clsact qdisc it hangs from if the interface has
// none. The filter has the given name (as `tc filter show` lists it) and
// handle and priority 1, so that attaching again replaces it. Deleting the
// returned filter through h takes it off.
func AttachIngress(h *netlink.Handle, ifindex, prog int, name string) (netlink.Filter, error) {
	clsact := &netlink.GenericQdisc{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: ifindex,
		Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT}, QdiscType: "clsact"}
	if err := h.QdiscAdd(clsact); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, fmt.Errorf("add clsact qdisc: %w", err)
	}
	f := &netlink.BpfFilter{FilterAttrs: netlink.FilterAttrs{LinkIndex: ifindex,
		Parent: netlink.HANDLE_MIN_INGRESS, Handle: 1, Priority: 1, Protocol: unix.ETH_P_ALL},
		Fd: prog, Name: name, DirectAction: true}
	if err := h.FilterReplace(f); err != nil {
		return nil, fmt.Errorf("add ingress filter: %w", err)
	}
	return f, nil
}
