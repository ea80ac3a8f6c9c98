package p4test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// packetPort is an AF_PACKET socket on the host end h<i> of a switch port:
// what it sends enters the switch on port i, what it receives is what the
// switch sent out of port i.
type packetPort struct {
	port int
	file *os.File // nonblocking, so Close wakes a pending read
}

// openPort opens port i's packet socket inside the namespace.
func (tb *testbed) openPort(i int) (*packetPort, error) {
	var fd int
	err := tb.do(func() error {
		ifc, err := netInterfaceIndex(hostIface(i))
		if err != nil {
			return err
		}
		// Protocol 0 receives nothing until bound to the interface.
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
		if err != nil {
			return fmt.Errorf("open packet socket: %w", err)
		}
		const ethPAll = unix.ETH_P_ALL<<8&0xff00 | unix.ETH_P_ALL>>8 // network byte order
		for _, step := range []struct {
			what string
			err  func() error
		}{
			{"bind to " + hostIface(i), func() error {
				return unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: ethPAll, Ifindex: ifc})
			}},
			// Our own transmissions are not the switch's output.
			{"ignore outgoing frames", func() error { return unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1) }},
			// The kernel takes VLAN tags out of received frames; the
			// auxiliary data gives them back.
			{"ask for auxiliary data", func() error { return unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_AUXDATA, 1) }},
		} {
			if err := step.err(); err != nil {
				unix.Close(fd)
				return fmt.Errorf("packet socket on %s: %s: %w", hostIface(i), step.what, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("port %d: %w", i, err)
	}
	return &packetPort{port: i, file: os.NewFile(uintptr(fd), hostIface(i))}, nil
}

// netInterfaceIndex looks an interface up in the calling thread's namespace.
func netInterfaceIndex(name string) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("open ioctl socket: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return 0, err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFINDEX, ifr); err != nil {
		return 0, fmt.Errorf("no interface %s: %w", name, err)
	}
	return int(ifr.Uint32()), nil
}

// send transmits one frame out of h<i>, into the switch's port i.
func (p *packetPort) send(frame []byte) error {
	if len(frame) < 14 {
		return fmt.Errorf("port %d: a %d-byte frame is shorter than an Ethernet header; a veth cannot carry it", p.port, len(frame))
	}
	rc, err := p.file.SyscallConn()
	if err != nil {
		return err
	}
	var sendErr error
	err = rc.Write(func(fd uintptr) bool {
		_, sendErr = unix.Write(int(fd), frame)
		return sendErr != unix.EAGAIN
	})
	if err == nil {
		err = sendErr
	}
	if err != nil {
		return fmt.Errorf("send %d bytes into port %d: %w", len(frame), p.port, err)
	}
	return nil
}

// receive blocks until a frame arrives and returns it, VLAN tag restored;
// after close it returns os.ErrClosed.
func (p *packetPort) receive(buf, oob []byte) ([]byte, error) {
	rc, err := p.file.SyscallConn()
	if err != nil {
		return nil, err
	}
	var n, oobn int
	var recvErr error
	err = rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, recvErr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_TRUNC)
		return recvErr != unix.EAGAIN
	})
	if err == nil {
		err = recvErr
	}
	if err != nil {
		return nil, err
	}
	if n > len(buf) {
		return nil, fmt.Errorf("port %d: a %d-byte frame does not fit the %d-byte buffer", p.port, n, len(buf))
	}
	return withVLANTag(buf[:n], oob[:oobn])
}

// tpacketAuxdata is struct tpacket_auxdata of linux/if_packet.h.
type tpacketAuxdata struct {
	Status   uint32
	Len      uint32
	Snaplen  uint32
	Mac      uint16
	Net      uint16
	VlanTCI  uint16
	VlanTPID uint16
}

// withVLANTag puts back the 802.1Q tag the kernel moved from the frame into
// its metadata, so the test sees the frame as the switch sent it.
func withVLANTag(frame, oob []byte) ([]byte, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("parse packet metadata: %w", err)
	}
	for _, m := range msgs {
		if m.Header.Level != unix.SOL_PACKET || m.Header.Type != unix.PACKET_AUXDATA || len(m.Data) < int(unsafe.Sizeof(tpacketAuxdata{})) {
			continue
		}
		aux := (*tpacketAuxdata)(unsafe.Pointer(&m.Data[0]))
		if aux.Status&unix.TP_STATUS_VLAN_VALID == 0 || len(frame) < 12 {
			return frame, nil
		}
		tpid := uint16(unix.ETH_P_8021Q)
		if aux.Status&unix.TP_STATUS_VLAN_TPID_VALID != 0 {
			tpid = aux.VlanTPID
		}
		tagged := make([]byte, 0, len(frame)+4)
		tagged = append(tagged, frame[:12]...)
		tagged = binary.BigEndian.AppendUint16(tagged, tpid)
		tagged = binary.BigEndian.AppendUint16(tagged, aux.VlanTCI)
		return append(tagged, frame[12:]...), nil
	}
	return frame, nil
}

func (p *packetPort) close() error {
	if err := p.file.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("close port %d: %w", p.port, err)
	}
	return nil
}
