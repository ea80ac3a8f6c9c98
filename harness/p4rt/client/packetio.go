package client

import (
	"errors"
	"fmt"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
)

// PacketIn is a packet the switch sent to the controller.
type PacketIn struct {
	Payload []byte
	// Metadata holds the packet_in header's fields by name, big-endian in
	// the field's width rounded up to bytes.
	Metadata map[string][]byte
}

// Metadata is one field of the packet_out header.
type Metadata struct {
	Name  string
	Value []byte
}

// PacketIns delivers the PacketIn messages of the stream, in order. The
// channel is closed when the stream ends (Close, or the server going away:
// see Err).
func (c *Client) PacketIns() <-chan PacketIn { return c.packetIns }

// SendPacket sends a PacketOut: payload with the packet_out header's
// fields given by name (every field of the header must be given).
func (c *Client) SendPacket(payload []byte, metadata ...Metadata) error {
	s, err := c.symbols()
	if err != nil {
		return err
	}
	out := &p4v1.PacketOut{Payload: payload}
	hdr, hasHeader := s.packetMeta.byName["packet_out"]
	if !hasHeader && len(metadata) > 0 {
		_, err := s.packetMeta.find("packet_out")
		return err
	}
	if hasHeader {
		byName := map[string]Metadata{}
		for _, m := range metadata {
			if _, dup := byName[m.Name]; dup {
				return fmt.Errorf("packet_out metadata %s given twice", m.Name)
			}
			byName[m.Name] = m
		}
		for _, f := range hdr.GetMetadata() {
			m, ok := byName[f.GetName()]
			if !ok {
				return fmt.Errorf("packet_out metadata %s (%d bits) is missing", f.GetName(), f.GetBitwidth())
			}
			delete(byName, f.GetName())
			v, err := encode("packet_out metadata "+f.GetName(), m.Value, f.GetBitwidth())
			if err != nil {
				return err
			}
			out.Metadata = append(out.Metadata, &p4v1.PacketMetadata{MetadataId: f.GetId(), Value: v})
		}
		for name := range byName {
			return fmt.Errorf("the packet_out header has no field %q", name)
		}
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if err := c.stream.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Packet{Packet: out}}); err != nil {
		return fmt.Errorf("send PacketOut: %w", err)
	}
	return nil
}

// packetIn names the metadata of a received packet.
func (c *Client) packetIn(p *p4v1.PacketIn) (PacketIn, error) {
	in := PacketIn{Payload: p.GetPayload(), Metadata: map[string][]byte{}}
	if len(p.GetMetadata()) == 0 {
		return in, nil
	}
	s, err := c.symbols()
	if err != nil {
		return in, errors.New("a PacketIn carries metadata but the client has no P4Info to name it")
	}
	hdr, err := s.packetMeta.find("packet_in")
	if err != nil {
		return in, err
	}
	for _, m := range p.GetMetadata() {
		found := false
		for _, f := range hdr.GetMetadata() {
			if f.GetId() == m.GetMetadataId() {
				in.Metadata[f.GetName()] = pad(m.GetValue(), f.GetBitwidth())
				found = true
			}
		}
		if !found {
			return in, fmt.Errorf("PacketIn metadata id %d is not a field of the packet_in header", m.GetMetadataId())
		}
	}
	return in, nil
}
