package dataplane

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A port's socket receives into a ring of frame slots it shares with the
// kernel (PACKET_RX_RING, TPACKET_V2): the kernel copies each arriving frame
// into the next free slot and marks it the receiver's; the receiver reads it
// there and hands the slot back, with no system call per frame, and the
// kernel keeps no copy of the frame (as it does for a socket's receive
// queue: a clone per frame, freed by the receive call). A frame that
// arrives with every slot taken is dropped and counted (Drops), as one
// arriving at a full receive buffer was.
//
// Slots are sized by the interface's MTU when the socket opens: a longer
// frame (the MTU raised later, or receive offload merging frames) arrives
// cut short, and is counted as an oversized frame and dropped.

// A port's ring has ringSlots(ports) slots, the frames that may wait for
// the receiver at once: a switch's ports share ringSwitchSlots, within
// bounds. Its memory is the kernel's from the start (about 1.6 kB a slot
// at MTU 1500: 416 kB for 256), so a switch of many ports (a spine of
// fifty) keeps fewer per port, and one of two (a lab's) more.
const (
	ringSwitchSlots = 2048
	ringMinSlots    = 128
	ringMaxSlots    = 1024
)

// ringSlots is how many slots each of a switch's ports has in its ring.
func ringSlots(ports int) int {
	return min(max(ringSwitchSlots/max(ports, 1), ringMinSlots), ringMaxSlots)
}

// ringBlock is the size of the ring's blocks, each holding whole slots.
const ringBlock = 16 << 10

// ringHeader is the space a slot keeps before its frame: the kernel's
// header, the sender's address and room for a VLAN tag put back (see
// rxRing.frame).
const ringHeader = 96

// rxRing is the receive ring of a port's socket.
type rxRing struct {
	mem      []byte
	slotSize int
	headers  []*unix.Tpacket2Hdr // each slot's kernel header, in the ring's order
	next     int                 // the slot the next frame arrives in
	cur      *unix.Tpacket2Hdr   // its header
}

// setUpRxRing gives the packet socket fd, not yet bound, a receive ring of
// at least the given number of slots, which hold frames of an interface
// with the given MTU.
func setUpRxRing(fd, mtu, slots int) (*rxRing, error) {
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VERSION, unix.TPACKET_V2); err != nil {
		return nil, fmt.Errorf("ring version: %w", err)
	}
	slot, block, perBlock, blocks := ringLayout(mtu, slots)
	req := unix.TpacketReq{Block_size: uint32(block), Block_nr: uint32(blocks), Frame_size: uint32(slot), Frame_nr: uint32(blocks * perBlock)}
	if err := unix.SetsockoptTpacketReq(fd, unix.SOL_PACKET, unix.PACKET_RX_RING, &req); err != nil {
		return nil, fmt.Errorf("receive ring of %d %d-byte slots: %w", req.Frame_nr, slot, err)
	}
	mem, err := unix.Mmap(fd, 0, block*blocks, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("map receive ring: %w", err)
	}
	r := &rxRing{mem: mem, slotSize: slot, headers: make([]*unix.Tpacket2Hdr, blocks*perBlock)}
	for i := range r.headers {
		r.headers[i] = (*unix.Tpacket2Hdr)(unsafe.Pointer(&mem[i/perBlock*block+i%perBlock*slot]))
	}
	r.cur = r.headers[0]
	return r, nil
}

// ringLayout is the shape of a ring of at least slots slots for an MTU:
// the size of a slot (which holds a frame with its VLAN tag put back) and
// of a block, how many slots a block holds and how many blocks there are.
func ringLayout(mtu, slots int) (slot, block, perBlock, blocks int) {
	slot = (ringHeader + 14 + vlanTagLen + mtu + unix.TPACKET_ALIGNMENT - 1) &^ (unix.TPACKET_ALIGNMENT - 1)
	block = max(ringBlock, (slot+pageSize-1)&^(pageSize-1))
	perBlock = block / slot
	blocks = (slots + perBlock - 1) / perBlock
	return slot, block, perBlock, blocks
}

// RingMemory is the memory the kernel gives the receive rings of a
// switch's ports (when it opens them) for the given MTU: memory a switch
// holds however little it receives.
func RingMemory(ports, mtu int) int {
	_, block, _, blocks := ringLayout(mtu, ringSlots(ports))
	return ports * block * blocks
}

// pageSize is the size of the memory pages a ring's blocks are made of.
var pageSize = unix.Getpagesize()

// ready is how many slots from the next one on, at most max, hold
// frames, which frame then returns one by one. It reads their headers
// (and the first line of their frames) together, so that the cache misses
// on what the kernel just wrote (on another CPU, often) overlap rather
// than come one after the other, a frame at a time.
func (r *rxRing) ready(max int) int {
	n, i, h := 0, r.next, r.cur
	for n < max {
		if atomic.LoadUint32(&h.Status)&unix.TP_STATUS_USER == 0 { // acquire: the frame before it is written
			break
		}
		// The frame starts in the slot's second cache line (ringHeader).
		atomic.LoadUint32((*uint32)(unsafe.Add(unsafe.Pointer(h), 64)))
		n++
		if i++; i == len(r.headers) {
			i = 0
		}
		h = r.headers[i]
	}
	return n
}

// waiting says whether the next slot holds a frame.
func (r *rxRing) waiting() bool {
	return atomic.LoadUint32(&r.cur.Status)&unix.TP_STATUS_USER != 0
}

// frame returns the frame in the next slot, which ready counted, with the
// VLAN tag the kernel stripped put back in front of its EtherType (as a
// socket's Recv does); err is ErrOversized for a frame cut short. The
// frame stays valid until release.
func (r *rxRing) frame() (frame []byte, err error) {
	h := r.cur
	if h.Snaplen < h.Len {
		return nil, fmt.Errorf("%d-byte frame: %w", h.Len, ErrOversized)
	}
	slot := unsafe.Slice((*byte)(unsafe.Pointer(h)), r.slotSize)
	if tag, ok := vlanTag(h.Status, h.Vlan_tci, h.Vlan_tpid); ok {
		// The addresses move into the free space the kernel leaves
		// between the sender's address (at most 52 bytes into the slot)
		// and an Ethernet frame (at least 66 bytes in).
		return retag(slot, int(h.Mac), int(h.Snaplen), tag), nil
	}
	return slot[h.Mac : int(h.Mac)+int(h.Snaplen)], nil
}

// release hands the slot of the frame last returned back to the kernel.
func (r *rxRing) release() {
	atomic.StoreUint32(&r.cur.Status, unix.TP_STATUS_KERNEL) // release: done with the frame
	if r.next++; r.next == len(r.headers) {
		r.next = 0
	}
	r.cur = r.headers[r.next]
}

// close unmaps the ring (its socket closes it in the kernel).
func (r *rxRing) close() error {
	if err := unix.Munmap(r.mem); err != nil {
		return fmt.Errorf("unmap receive ring: %w", err)
	}
	return nil
}
