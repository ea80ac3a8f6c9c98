package dataplane

import (
	"errors"
	"fmt"
	"sync"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/grid-ina/grid/harness/internal/bpf"
)

// An exclusive port's interface carries the switch's frames only (grid's
// fabric: a switch namespace holds its veths and nothing else). The kernel
// hands every frame arriving on an interface first to the packet sockets on
// it (the switch's port, a capture such as iftop or tcpdump) and then to the
// namespace's IP stack, which, with no address on the interface, looks the
// destination up, finds no route and drops it: about a tenth of a switch's
// CPU per frame, for nothing. An exclusive port ends that in between: a tc
// ingress filter (clsact, a two-instruction BPF program in direct-action
// mode) drops the frame after the packet sockets have it. Interface
// counters count it as received and not dropped, as before.

// exclusiveFilterName names the filter in `tc filter show`.
const exclusiveFilterName = "grid-switch-port"

// stackBypass is the ingress filter on a dataplane's exclusive ports.
type stackBypass struct {
	nl      *netlink.Handle // in the ports' namespace
	ifaces  []string        // the interfaces filtered so far
	filters []netlink.Filter
}

// newStackBypass opens netlink in the calling thread's network namespace
// (the ports' namespace).
func newStackBypass() (*stackBypass, error) {
	if _, err := dropProgram(); err != nil {
		return nil, fmt.Errorf("exclusive ports: %w", err)
	}
	nl, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("exclusive ports: netlink: %w", err)
	}
	return &stackBypass{nl: nl}, nil
}

// add attaches the filter to the interface with the given index.
func (b *stackBypass) add(iface string, index int) error {
	prog, err := dropProgram()
	if err != nil {
		return err
	}
	f, err := bpf.AttachIngress(b.nl, index, prog, exclusiveFilterName)
	if err != nil {
		return fmt.Errorf("interface %s: %w", iface, err)
	}
	b.ifaces, b.filters = append(b.ifaces, iface), append(b.filters, f)
	return nil
}

// close removes the filters, so the namespace's stack sees the interfaces'
// frames again, and closes netlink. A vanished interface is no error.
func (b *stackBypass) close() error {
	var errs []error
	for i, f := range b.filters {
		if err := b.nl.FilterDel(f); err != nil && !errors.Is(err, unix.ENODEV) && !errors.Is(err, unix.ENOENT) &&
			!errors.Is(err, unix.EINVAL) {
			errs = append(errs, fmt.Errorf("interface %s: remove ingress filter: %w", b.ifaces[i], err))
		}
	}
	b.nl.Close()
	return errors.Join(errs...)
}

// dropProgram is the process's one BPF program of the filters: a program
// belongs to no network namespace, so every switch of a switch host
// attaches the same one. It stays loaded while the process runs.
var dropProgram = sync.OnceValues(func() (int, error) {
	fd, err := loadDropProgram()
	if err != nil {
		return -1, fmt.Errorf("exclusive ports: %w", err)
	}
	return fd, nil
})

// loadDropProgram loads a BPF program for tc that drops every packet:
// r0 = TC_ACT_SHOT; exit.
func loadDropProgram() (int, error) {
	return bpf.Load(unix.BPF_PROG_TYPE_SCHED_CLS, []uint64{
		bpf.Insn(unix.BPF_ALU64|unix.BPF_MOV|unix.BPF_K, 0, 0, 0, 2), // TC_ACT_SHOT
		bpf.Insn(unix.BPF_JMP|unix.BPF_EXIT, 0, 0, 0, 0),
	})
}
