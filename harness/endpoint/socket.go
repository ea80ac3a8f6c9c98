package endpoint

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/grid-ina/grid/harness/gradproto"
)

// Receive buffers hold what the windows allow in flight towards the
// endpoint, and no more: a PS a window's worth of fragments from every
// worker, a worker a window's worth of results and control packets. A
// deeper queue would only hide a slow CPU as growing round trips; a full
// one drops, which the workers see and answer by shrinking their windows.
// The kernel charges each datagram its buffer's true size (about a
// kilobyte for a GRID packet) and doubles what it is asked for.
const (
	bufferPerPacket  = 1024
	minReceiveBuffer = 64 << 10
	maxReceiveBuffer = 4 << 20
)

// receiveBuffer is the receive buffer for packets datagrams in flight.
func receiveBuffer(packets int) int {
	return min(max(packets*bufferPerPacket, minReceiveBuffer), maxReceiveBuffer)
}

// listen opens the endpoint's UDP socket on ip, port 18258, sending with UDP
// checksum 0 (as GRID senders do; the hosts' interfaces need no checksum
// offload then) and, for broadcast, allowed to send to 255.255.255.255.
func listen(ctx context.Context, ip netip.Addr, broadcast bool, rcvbuf int) (*net.UDPConn, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_NO_CHECK, 1)
			if serr == nil {
				// The TOS byte of each datagram comes with it: control
				// packets carry ECN CE.
				serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTOS, 1)
			}
			if serr == nil && broadcast {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_BROADCAST, 1)
			}
			if serr == nil {
				// Beyond net.core.rmem_max only with CAP_NET_ADMIN; the
				// ordinary option is the fallback.
				if unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rcvbuf) != nil {
					serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, rcvbuf)
				}
			}
		})
		return errors.Join(err, serr)
	}}
	addr := netip.AddrPortFrom(ip, gradproto.UDPPort)
	pc, err := lc.ListenPacket(ctx, "udp4", addr.String())
	if err != nil {
		return nil, fmt.Errorf("UDP socket on %s (is the address on this host's interfaces, in its network namespace?): %w", addr, err)
	}
	return pc.(*net.UDPConn), nil
}

// datagram is what a receiver read.
type datagram struct {
	n int
	// ce is whether the IPv4 header's ECN field was CE (congestion
	// experienced), as on the switches' control packets.
	ce bool
}

// receiver reads an endpoint's datagrams with their IPv4 TOS byte.
type receiver struct {
	conn     *net.UDPConn
	raw      syscall.RawConn
	buf, oob []byte
}

func newReceiver(conn *net.UDPConn) (*receiver, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &receiver{conn: conn, raw: raw, buf: make([]byte, 2048), oob: make([]byte, oobSize)}, nil
}

// wait reads one datagram into buf, waiting until wake at the latest; got
// is false when wake came first.
func (r *receiver) wait(wake time.Time) (d datagram, got bool, err error) {
	r.conn.SetReadDeadline(wake)
	n, oobn, _, _, err := r.conn.ReadMsgUDPAddrPort(r.buf, r.oob)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return d, false, nil
	case err != nil:
		return d, false, fmt.Errorf("receive: %w", err)
	}
	return r.datagram(n, oobn), true, nil
}

// poll reads one datagram into buf if one is queued, without waiting: an
// endpoint drains its socket before it judges timers, so that results a
// busy CPU left queued count before their fragments time out.
func (r *receiver) poll() (d datagram, got bool, err error) {
	r.conn.SetReadDeadline(time.Time{})
	var n, oobn int
	var rerr error
	err = r.raw.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), r.buf, r.oob, unix.MSG_DONTWAIT)
		return true
	})
	switch {
	case err != nil:
		return d, false, fmt.Errorf("receive: %w", err)
	case errors.Is(rerr, unix.EAGAIN) || errors.Is(rerr, unix.EINTR):
		return d, false, nil
	case rerr != nil:
		return d, false, fmt.Errorf("receive: %w", rerr)
	}
	return r.datagram(n, oobn), true, nil
}

func (r *receiver) datagram(n, oobn int) datagram {
	d := datagram{n: n}
	msgs, _ := unix.ParseSocketControlMessage(r.oob[:oobn])
	for _, m := range msgs {
		if m.Header.Level == unix.IPPROTO_IP && m.Header.Type == unix.IP_TOS && len(m.Data) > 0 {
			d.ce = m.Data[0]&3 == gradproto.ECNCongestion
		}
	}
	return d
}

// oobSize holds the IP_TOS control message.
var oobSize = unix.CmsgSpace(1)

// sendTo sends one datagram. A full socket or device queue (ENOBUFS,
// EAGAIN) drops it as a congested link would, which the protocol recovers
// from; it is counted in *dropped. Other errors (no route, no address) end
// the run.
func sendTo(conn *net.UDPConn, b []byte, to netip.AddrPort, dropped *int) error {
	_, err := conn.WriteToUDPAddrPort(b, to)
	if errors.Is(err, unix.ENOBUFS) || errors.Is(err, unix.EAGAIN) {
		*dropped++
		return nil
	}
	return err
}

// Listen opens the UDP socket of the spec's PS (role RolePS) or of its
// worker index, as RunPS and RunWorker do: called on a thread inside the
// host's network namespace it stays there, so a process can open every
// endpoint's socket in its own host and run them all (UseConn).
func Listen(ctx context.Context, spec *Spec, role string, index int) (*net.UDPConn, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	switch role {
	case RolePS:
		// A window's worth of fragments from every worker.
		return listen(ctx, netip.MustParseAddr(spec.Job.PSIP), spec.Results != ResultsUnicast,
			receiveBuffer(len(spec.Job.Members)*spec.Window.Max))
	case RoleWorker:
		if index < 0 || index >= len(spec.Job.Members) {
			return nil, fmt.Errorf("worker index %d: the job has members 0..%d", index, len(spec.Job.Members)-1)
		}
		// Results and control packets, a window's worth of each.
		return listen(ctx, netip.MustParseAddr(spec.Job.Members[index].IP), false, receiveBuffer(2*spec.Window.Max))
	}
	return nil, fmt.Errorf("role %q, want %q or %q", role, RoleWorker, RolePS)
}

// Option adjusts RunWorker and RunPS.
type Option func(*options)

type options struct {
	listening func(netip.AddrPort)
	start     <-chan struct{}
	conn      *net.UDPConn
	log       *slog.Logger
}

// UseConn has the endpoint run on conn, which Listen opened for it,
// instead of opening its own socket; the endpoint closes it when it ends.
func UseConn(conn *net.UDPConn) Option {
	return func(o *options) { o.conn = conn }
}

// WithLogger has the endpoint log to l instead of slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.log = l }
}

// socket is the endpoint's socket: the one UseConn gave, or a new one.
func (o *options) socket(ctx context.Context, spec *Spec, role string, index int) (*net.UDPConn, error) {
	if o.conn != nil {
		return o.conn, nil
	}
	return Listen(ctx, spec, role, index)
}

// logger is the endpoint's logger with its job and role.
func (o *options) logger(args ...any) *slog.Logger {
	if o.log != nil {
		return o.log.With(args...)
	}
	return slog.With(args...)
}

// OnListening has f called with the endpoint's address once its socket is
// bound, before anything is sent: a PS is ready for the workers then.
func OnListening(f func(netip.AddrPort)) Option {
	return func(o *options) { o.listening = f }
}

// StartOn is the start trigger of a worker whose spec says "start":
// "signal": once its socket is bound it waits until start is closed before
// it sends (or until the deadline or ctx ends the run).
func StartOn(start <-chan struct{}) Option {
	return func(o *options) { o.start = start }
}

func collectOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

func (o *options) announce(conn *net.UDPConn) {
	if o.listening != nil {
		o.listening(conn.LocalAddr().(*net.UDPAddr).AddrPort())
	}
}
