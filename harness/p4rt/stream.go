package p4rt

import (
	"errors"
	"fmt"
	"io"
	"math/big"
	"sync"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// packetQueue is how many PacketIn messages wait for a slow controller
// before more are dropped; controlQueue is the same for arbitration
// updates and stream errors, which have their own queue so that a flood of
// packets does not crowd them out.
const (
	packetQueue  = 1024
	controlQueue = 64
)

// electionID is a 128-bit election id.
type electionID struct{ hi, lo uint64 }

func (a electionID) less(b electionID) bool { return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo) }

func (a electionID) String() string {
	if a.hi == 0 {
		return fmt.Sprint(a.lo)
	}
	return fmt.Sprintf("%d:%d (high:low)", a.hi, a.lo)
}

func (a electionID) proto() *p4v1.Uint128 { return &p4v1.Uint128{High: a.hi, Low: a.lo} }

// streamClient is one controller's StreamChannel.
type streamClient struct {
	packets chan *p4v1.StreamMessageResponse
	control chan *p4v1.StreamMessageResponse
	// set by arbitration, under arbitration.mu
	arbitrated  bool
	hasElection bool
	election    electionID
	deviceID    uint64
}

// arbitration tracks the controllers of the default role: the one with the
// highest election id is the primary.
type arbitration struct {
	mu      sync.Mutex
	clients map[*streamClient]bool
	primary *streamClient
}

func (a *arbitration) init() { a.clients = map[*streamClient]bool{} }

// checkPrimary accepts a request only from the primary: its election id
// must be the primary's.
func (a *arbitration) checkPrimary(id *p4v1.Uint128) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.primary == nil {
		return status.Error(codes.PermissionDenied, "election_id: there is no primary controller (open a StreamChannel and send a MasterArbitrationUpdate first)")
	}
	if id == nil {
		return status.Error(codes.PermissionDenied, "election_id: missing (only the primary controller may change the switch)")
	}
	if got := (electionID{id.High, id.Low}); got != a.primary.election {
		return status.Errorf(codes.PermissionDenied, "election_id: %s is not the primary's election id %s", got, a.primary.election)
	}
	return nil
}

// electPrimary recomputes the primary; the caller holds a.mu. It reports
// whether the primary changed.
func (a *arbitration) electPrimary() bool {
	var best *streamClient
	for c := range a.clients {
		if c.arbitrated && c.hasElection && (best == nil || best.election.less(c.election)) {
			best = c
		}
	}
	changed := best != a.primary
	a.primary = best
	return changed
}

// update is the MasterArbitrationUpdate the server sends to c; the caller
// holds a.mu.
func (a *arbitration) update(c *streamClient) *p4v1.StreamMessageResponse {
	u := &p4v1.MasterArbitrationUpdate{DeviceId: c.deviceID}
	switch {
	case a.primary == nil:
		u.Status = &spb.Status{Code: int32(codes.NotFound), Message: "there is no primary controller"}
	case a.primary == c:
		u.ElectionId = a.primary.election.proto()
		u.Status = &spb.Status{Code: int32(codes.OK), Message: "this controller is the primary"}
	default:
		u.ElectionId = a.primary.election.proto()
		u.Status = &spb.Status{Code: int32(codes.AlreadyExists), Message: "another controller is the primary"}
	}
	return &p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_Arbitration{Arbitration: u}}
}

// notify queues arbitration updates: to every controller when the primary
// changed, else to c only. The caller holds a.mu.
func (a *arbitration) notify(c *streamClient, changed bool) {
	for o := range a.clients {
		if o.arbitrated && (changed || o == c) {
			sendOrDrop(o.control, a.update(o))
		}
	}
}

func sendOrDrop(q chan *p4v1.StreamMessageResponse, m *p4v1.StreamMessageResponse) bool {
	select {
	case q <- m:
		return true
	default:
		return false
	}
}

// StreamChannel runs one controller's session: arbitration, PacketOut in,
// PacketIn and errors out.
func (s *Server) StreamChannel(stream p4v1.P4Runtime_StreamChannelServer) error {
	c := &streamClient{packets: make(chan *p4v1.StreamMessageResponse, packetQueue), control: make(chan *p4v1.StreamMessageResponse, controlQueue)}
	done := make(chan struct{})
	sendFailed := make(chan error, 1)
	go func() {
		for {
			select {
			case m := <-c.control:
				if err := stream.Send(m); err != nil {
					sendFailed <- err
					return
				}
			case m := <-c.packets:
				if err := stream.Send(m); err != nil {
					sendFailed <- err
					return
				}
			case <-done:
				return
			}
		}
	}()
	defer close(done)
	s.arb.mu.Lock()
	s.arb.clients[c] = true
	s.arb.mu.Unlock()
	defer s.dropClient(c)

	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case err := <-sendFailed:
			return err
		default:
		}
		switch u := req.Update.(type) {
		case *p4v1.StreamMessageRequest_Arbitration:
			if err := s.arbitrate(c, u.Arbitration); err != nil {
				return err
			}
		case *p4v1.StreamMessageRequest_Packet:
			s.packetOut(c, u.Packet)
		case *p4v1.StreamMessageRequest_DigestAck:
			if pl := s.pipe.Load(); pl != nil {
				pl.ackDigests(u.DigestAck)
			}
		default:
			sendOrDrop(c.control, streamError(codes.Unimplemented, fmt.Sprintf("stream message %T is not supported", req.Update), nil))
		}
	}
}

func (s *Server) dropClient(c *streamClient) {
	s.arb.mu.Lock()
	defer s.arb.mu.Unlock()
	delete(s.arb.clients, c)
	if s.arb.electPrimary() {
		s.arb.notify(nil, true)
	}
}

// arbitrate handles a MasterArbitrationUpdate; an error ends the stream.
func (s *Server) arbitrate(c *streamClient, u *p4v1.MasterArbitrationUpdate) error {
	if u.DeviceId != s.opts.DeviceID {
		return status.Errorf(codes.NotFound, "arbitration.device_id: %d is not this device (%d)", u.DeviceId, s.opts.DeviceID)
	}
	//lint:ignore SA1019 a controller of an older P4Runtime may still set role.id
	if roleID := u.GetRole().GetId(); u.GetRole().GetName() != "" || roleID != 0 {
		return status.Errorf(codes.NotFound, "arbitration.role: %q (id %d) is not a role of this device: it has only the default role", u.GetRole().GetName(), roleID)
	}
	a := &s.arb
	a.mu.Lock()
	defer a.mu.Unlock()
	id := electionID{u.GetElectionId().GetHigh(), u.GetElectionId().GetLow()}
	has := u.ElectionId != nil
	if has {
		for o := range a.clients {
			if o != c && o.arbitrated && o.hasElection && o.election == id {
				return status.Errorf(codes.InvalidArgument, "arbitration.election_id: %s is used by another controller", id)
			}
		}
	}
	c.arbitrated, c.hasElection, c.election, c.deviceID = true, has, id, u.DeviceId
	changed := a.electPrimary()
	if changed && a.primary == c {
		s.log.Info("new primary controller", "election_id_high", id.hi, "election_id_low", id.lo)
	}
	a.notify(c, changed)
	return nil
}

func streamError(code codes.Code, msg string, po *p4v1.PacketOut) *p4v1.StreamMessageResponse {
	e := &p4v1.StreamError{CanonicalCode: int32(code), Message: msg}
	if po != nil {
		e.Details = &p4v1.StreamError_PacketOut{PacketOut: &p4v1.PacketOutError{PacketOut: po}}
	}
	return &p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_Error{Error: e}}
}

// packetOut injects a controller's packet on the CPU port, behind the
// program's packet_out header built from its metadata.
func (s *Server) packetOut(c *streamClient, po *p4v1.PacketOut) {
	s.arb.mu.Lock()
	primary := s.arb.primary == c
	s.arb.mu.Unlock()
	if !primary {
		sendOrDrop(c.control, streamError(codes.PermissionDenied, "packet: only the primary controller may send PacketOut", po))
		return
	}
	pl := s.pipe.Load()
	if pl == nil {
		sendOrDrop(c.control, streamError(codes.FailedPrecondition, "packet: no forwarding pipeline config", po))
		return
	}
	if s.opts.CPUPort == 0 {
		sendOrDrop(c.control, streamError(codes.FailedPrecondition, "packet: the switch has no CPU port (start it with a CPU port to use PacketOut)", po))
		return
	}
	frame := po.Payload
	if pl.packetOut != nil {
		hdr, err := pl.packetOut.pack(po.Metadata)
		if err != nil {
			sendOrDrop(c.control, streamError(codes.InvalidArgument, "packet."+err.Error(), po))
			return
		}
		frame = append(hdr, po.Payload...)
	}
	if err := s.run(pl, s.opts.CPUPort, frame, s.opts.Transmit); err != nil {
		sendOrDrop(c.control, streamError(codes.Internal, "packet: "+err.Error(), po))
	}
}

// packetIn sends a packet the program sent to the CPU port to the primary
// controller, its packet_in header turned into metadata.
func (s *Server) packetIn(pl *pipeline, data []byte) {
	pi := &p4v1.PacketIn{}
	if h := pl.packetIn; h != nil {
		if len(data) < h.bytes {
			s.log.Warn("dropped a packet to the CPU port shorter than the packet_in header", "bytes", len(data), "header_bytes", h.bytes)
			return
		}
		pi.Metadata = h.unpack(data[:h.bytes])
		data = data[h.bytes:]
	}
	pi.Payload = append([]byte(nil), data...)
	s.toPrimary(&p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_Packet{Packet: pi}})
}

// toPrimary streams a PacketIn, DigestList or IdleTimeoutNotification to
// the primary controller (dropped, and logged, without one or when its
// stream is full).
func (s *Server) toPrimary(m *p4v1.StreamMessageResponse) {
	s.arb.mu.Lock()
	primary := s.arb.primary
	s.arb.mu.Unlock()
	kind := fmt.Sprintf("%T", m.GetUpdate())
	if primary == nil {
		s.log.Debug("dropped a stream message: no primary controller", "kind", kind)
		return
	}
	if !sendOrDrop(primary.packets, m) {
		s.log.Warn("dropped a stream message: the primary controller's stream is full", "kind", kind)
	}
}

// pack builds the header from metadata (fields left out are zero).
func (h *controllerHeader) pack(md []*p4v1.PacketMetadata) ([]byte, error) {
	values := make(map[uint32][]byte, len(md))
	for i, m := range md {
		if _, dup := values[m.MetadataId]; dup {
			return nil, fmt.Errorf("metadata[%d].metadata_id: %d given twice", i, m.MetadataId)
		}
		values[m.MetadataId] = m.Value
		found := false
		for _, f := range h.fields {
			if f.Id != m.MetadataId {
				continue
			}
			found = true
			if _, err := fitValue(m.Value, int(f.Bitwidth)); err != nil {
				return nil, fmt.Errorf("metadata[%d].value: %s: %w", i, f.Name, err)
			}
		}
		if !found {
			return nil, fmt.Errorf("metadata[%d].metadata_id: %d is not a field of packet_out", i, m.MetadataId)
		}
	}
	acc := new(big.Int)
	for _, f := range h.fields {
		acc.Lsh(acc, uint(f.Bitwidth))
		acc.Or(acc, new(big.Int).SetBytes(values[f.Id]))
	}
	acc.Lsh(acc, uint(h.pad))
	return acc.FillBytes(make([]byte, h.bytes)), nil
}

// unpack splits the header into metadata, in id order, canonical values.
func (h *controllerHeader) unpack(hdr []byte) []*p4v1.PacketMetadata {
	acc := new(big.Int).SetBytes(hdr)
	acc.Rsh(acc, uint(h.pad))
	out := make([]*p4v1.PacketMetadata, len(h.fields))
	for i := len(h.fields) - 1; i >= 0; i-- {
		f := h.fields[i]
		mask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(f.Bitwidth)), big.NewInt(1))
		v := new(big.Int).And(acc, mask)
		acc.Rsh(acc, uint(f.Bitwidth))
		out[i] = &p4v1.PacketMetadata{MetadataId: f.Id, Value: canonical(v.Bytes())}
	}
	return out
}
