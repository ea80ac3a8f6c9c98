package fabric

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

func closeFD(fd int) { unix.Close(fd) }

// ifreqData is struct ifreq with its union holding a pointer (ifr_data), the
// form SIOCETHTOOL takes.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

// ethtoolValue is struct ethtool_value.
type ethtoolValue struct {
	cmd  uint32
	data uint32
}

// ethtool issues a get/set ethtool_value command on ifname through sock,
// a socket in the interface's namespace (ioctls resolve names there).
func ethtool(sock int, ifname string, cmd, data uint32) (uint32, error) {
	v := ethtoolValue{cmd: cmd, data: data}
	var ifr ifreqData
	copy(ifr.name[:], ifname)
	ifr.data = unsafe.Pointer(&v)
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(sock), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr))); errno != 0 {
		return 0, errno
	}
	return v.data, nil
}

// setTxChecksum switches transmit checksum offload of ifname on or off (what
// `ethtool -K IF tx off` does). With it off, the kernel writes full checksums
// into packets instead of leaving them to a NIC that a veth does not have, so
// a switch reading the frames raw sees valid checksums.
func setTxChecksum(sock int, ifname string, on bool) error {
	var v uint32
	if on {
		v = 1
	}
	if _, err := ethtool(sock, ifname, unix.ETHTOOL_STXCSUM, v); err != nil {
		return fmt.Errorf("set tx checksumming of %s to %v: %w", ifname, on, err)
	}
	return nil
}

// txChecksum reports whether transmit checksum offload of ifname is on.
func txChecksum(sock int, ifname string) (bool, error) {
	v, err := ethtool(sock, ifname, unix.ETHTOOL_GTXCSUM, 0)
	if err != nil {
		return false, fmt.Errorf("get tx checksumming of %s: %w", ifname, err)
	}
	return v != 0, nil
}

// probeNetem tries to add a netem qdisc to a scratch veth pair in an anonymous
// namespace. It returns why the qdisc could not be added, or nil when netem
// works.
func probeNetem() error {
	return inScratchNamespace(func() error {
		h, err := netlink.NewHandleAt(netns.None(), unix.NETLINK_ROUTE)
		if err != nil {
			return fmt.Errorf("open rtnetlink socket: %w", err)
		}
		defer h.Close()
		veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "probe0", Index: 10}, PeerName: "probe1"}
		if err := h.LinkAdd(veth); err != nil {
			return fmt.Errorf("create scratch veth: %w", err)
		}
		q := netlink.NewNetem(
			netlink.QdiscAttrs{LinkIndex: 10, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
			netlink.NetemQdiscAttrs{Latency: 1000})
		if err := h.QdiscAdd(q); err != nil {
			if errors.Is(err, unix.ENOENT) {
				// The kernel's answer to a qdisc kind it does not know.
				return fmt.Errorf("this kernel has no netem qdisc (sch_netem is neither built in nor loadable): %w", err)
			}
			return fmt.Errorf("add netem qdisc: %w", err)
		}
		return nil
	})
}
