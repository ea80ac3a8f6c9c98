package monitor

import (
	"encoding/binary"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/grid-ina/grid/harness/fabric"
)

// reader reads one namespace's interface counters over an rtnetlink socket
// opened inside it and kept open. Each read is one RTM_GETSTATS dump asking
// for rtnl_link_stats64 only: a few hundred bytes per interface, where an
// RTM_GETLINK dump would carry every attribute of every interface.
type reader struct {
	node  string
	fd    int
	slots map[int]int // ifindex -> index in Monitor.ifaces
	seq   uint32
	buf   []byte
}

const (
	sizeofIfStatsMsg = 12 // struct if_stats_msg
	// statsFilterLink64 is IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64).
	statsFilterLink64 = 1 << (unix.IFLA_STATS_LINK_64 - 1)
)

// openReader opens the netlink socket inside node's namespace.
func openReader(n *fabric.Node, slots map[int]int) (*reader, error) {
	r := &reader{node: n.Name, fd: -1, slots: slots, buf: make([]byte, 64<<10)}
	err := n.Do(func() (err error) {
		r.fd, err = unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("netlink socket in %s: %w", n.Namespace, err)
	}
	// The kernel always answers a dump; the timeout only bounds a wedged read.
	tv := unix.Timeval{Sec: 5}
	if err := unix.SetsockoptTimeval(r.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		r.close()
		return nil, fmt.Errorf("netlink socket in %s: receive timeout: %w", n.Namespace, err)
	}
	if err := unix.Bind(r.fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		r.close()
		return nil, fmt.Errorf("bind netlink socket in %s: %w", n.Namespace, err)
	}
	return r, nil
}

func (r *reader) close() {
	if r.fd >= 0 {
		unix.Close(r.fd)
		r.fd = -1
	}
}

// read fills the counters of the reader's interfaces into c.
func (r *reader) read(c []Counters) error {
	r.seq++
	var req [unix.NLMSG_HDRLEN + sizeofIfStatsMsg]byte
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], unix.RTM_GETSTATS)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(req[8:], r.seq)
	// if_stats_msg: family AF_UNSPEC, every ifindex, only the 64-bit link stats.
	ne.PutUint32(req[unix.NLMSG_HDRLEN+8:], statsFilterLink64)
	if err := unix.Sendto(r.fd, req[:], 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("node %s: request interface counters: %w", r.node, err)
	}
	found := 0
	for {
		n, _, err := unix.Recvfrom(r.fd, r.buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("node %s: read interface counters: %w", r.node, err)
		}
		done, got, err := r.parse(r.buf[:n], c)
		if err != nil {
			return fmt.Errorf("node %s: %w", r.node, err)
		}
		found += got
		if done {
			break
		}
	}
	if found != len(r.slots) {
		return fmt.Errorf("node %s: %d of its %d interfaces are gone (was the run taken down?)", r.node, len(r.slots)-found, len(r.slots))
	}
	return nil
}

// parse reads the netlink messages in b, filling the counters of the
// reader's interfaces; done is true at the end of the dump.
func (r *reader) parse(b []byte, c []Counters) (done bool, found int, err error) {
	ne := binary.NativeEndian
	for len(b) >= unix.NLMSG_HDRLEN {
		size := int(ne.Uint32(b[0:]))
		typ, seq := ne.Uint16(b[4:]), ne.Uint32(b[8:])
		if size < unix.NLMSG_HDRLEN || size > len(b) {
			return false, found, fmt.Errorf("netlink message of %d bytes in %d", size, len(b))
		}
		body := b[unix.NLMSG_HDRLEN:size]
		b = b[min(len(b), nlmAlign(size)):]
		if seq != r.seq {
			continue // the rest of a dump an earlier failed read abandoned
		}
		switch typ {
		case unix.NLMSG_DONE:
			return true, found, nil
		case unix.NLMSG_ERROR:
			if len(body) >= 4 {
				if errno := -int32(ne.Uint32(body)); errno != 0 {
					return false, found, fmt.Errorf("RTM_GETSTATS: %w", syscall.Errno(errno))
				}
			}
			return true, found, nil
		case unix.RTM_NEWSTATS:
			if len(body) < sizeofIfStatsMsg {
				continue
			}
			slot, ok := r.slots[int(ne.Uint32(body[4:]))]
			if !ok {
				continue // lo, or an interface that is not the run's
			}
			if stats := linkStats64(body[sizeofIfStatsMsg:]); stats != nil {
				c[slot] = Counters{
					RxPackets: ne.Uint64(stats[0:]), TxPackets: ne.Uint64(stats[8:]),
					RxBytes: ne.Uint64(stats[16:]), TxBytes: ne.Uint64(stats[24:]),
					RxDropped: ne.Uint64(stats[48:]), TxDropped: ne.Uint64(stats[56:]),
				}
				found++
			}
		}
	}
	return false, found, nil
}

// linkStats64 returns the IFLA_STATS_LINK_64 attribute's payload (struct
// rtnl_link_stats64: rx/tx packets, rx/tx bytes, rx/tx errors, rx/tx
// dropped, ...), or nil.
func linkStats64(attrs []byte) []byte {
	ne := binary.NativeEndian
	for len(attrs) >= unix.SizeofRtAttr {
		size := int(ne.Uint16(attrs[0:]))
		typ := ne.Uint16(attrs[2:]) &^ (unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER)
		if size < unix.SizeofRtAttr || size > len(attrs) {
			return nil
		}
		if typ == unix.IFLA_STATS_LINK_64 && size >= unix.SizeofRtAttr+64 {
			return attrs[unix.SizeofRtAttr:size]
		}
		attrs = attrs[min(len(attrs), nlmAlign(size)):]
	}
	return nil
}

func nlmAlign(n int) int { return (n + unix.NLMSG_ALIGNTO - 1) &^ (unix.NLMSG_ALIGNTO - 1) }
