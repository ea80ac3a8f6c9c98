package client

import (
	"context"
	"errors"
	"fmt"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Replica is one copy of a packet made by a multicast group or clone
// session: the egress port and the instance (standard_metadata.egress_rid
// on bmv2).
type Replica struct {
	Port     uint32
	Instance uint32
}

// CloneSession is a mirroring session: a clone goes to every replica.
type CloneSession struct {
	ID       uint32
	Replicas []Replica
	// ClassOfService is the clones' class of service (0 by default).
	ClassOfService uint32
	// TruncateLength, when positive, cuts clones to that many bytes.
	TruncateLength int32
}

// replicas converts replicas to P4Runtime. Ports go in the egress_port
// field, which every P4Runtime 1.x server understands: the bytes field
// "port" that deprecates it came with P4Runtime 1.4, and simple_switch_grpc
// builds of PI before July 2023 (p4lang/PI#598) do not know it.
func replicas(rs []Replica) []*p4v1.Replica {
	out := make([]*p4v1.Replica, len(rs))
	for i, r := range rs {
		//lint:ignore SA1019 egress_port is what older simple_switch_grpc builds understand (see above).
		out[i] = &p4v1.Replica{PortKind: &p4v1.Replica_EgressPort{EgressPort: r.Port}, Instance: r.Instance}
	}
	return out
}

func preEntity(pre *p4v1.PacketReplicationEngineEntry) *p4v1.Entity {
	return &p4v1.Entity{Entity: &p4v1.Entity_PacketReplicationEngineEntry{PacketReplicationEngineEntry: pre}}
}

func multicastGroupEntity(group uint32, rs []Replica) *p4v1.Entity {
	g := &p4v1.MulticastGroupEntry{MulticastGroupId: group, Replicas: replicas(rs)}
	return preEntity(&p4v1.PacketReplicationEngineEntry{Type: &p4v1.PacketReplicationEngineEntry_MulticastGroupEntry{MulticastGroupEntry: g}})
}

// MulticastGroupUpdate builds the update that inserts, modifies or deletes
// a multicast group (replicas are ignored by delete).
func MulticastGroupUpdate(typ p4v1.Update_Type, group uint32, rs []Replica) *p4v1.Update {
	if typ == p4v1.Update_DELETE {
		rs = nil
	}
	return &p4v1.Update{Type: typ, Entity: multicastGroupEntity(group, rs)}
}

// InsertMulticastGroup creates a multicast group.
func (c *Client) InsertMulticastGroup(ctx context.Context, group uint32, rs []Replica) error {
	return c.Write(ctx, MulticastGroupUpdate(p4v1.Update_INSERT, group, rs))
}

// ModifyMulticastGroup replaces the replicas of a multicast group.
func (c *Client) ModifyMulticastGroup(ctx context.Context, group uint32, rs []Replica) error {
	return c.Write(ctx, MulticastGroupUpdate(p4v1.Update_MODIFY, group, rs))
}

// DeleteMulticastGroup deletes a multicast group.
func (c *Client) DeleteMulticastGroup(ctx context.Context, group uint32) error {
	return c.Write(ctx, MulticastGroupUpdate(p4v1.Update_DELETE, group, nil))
}

// ReadMulticastGroup returns the replicas of a multicast group.
func (c *Client) ReadMulticastGroup(ctx context.Context, group uint32) ([]Replica, error) {
	if group == 0 {
		return nil, errors.New("multicast group 0 is not a group (a read of it would list them all)")
	}
	pre, err := c.readPRE(ctx, multicastGroupEntity(group, nil), "multicast group", group)
	if err != nil {
		return nil, err
	}
	return fromReplicas(pre.GetMulticastGroupEntry().GetReplicas()), nil
}

// ReadCloneSession returns a clone session.
func (c *Client) ReadCloneSession(ctx context.Context, id uint32) (CloneSession, error) {
	if id == 0 {
		return CloneSession{}, errors.New("clone session 0 is not a session (a read of it would list them all)")
	}
	pre, err := c.readPRE(ctx, cloneSessionEntity(CloneSession{ID: id}), "clone session", id)
	if err != nil {
		return CloneSession{}, err
	}
	cs := pre.GetCloneSessionEntry()
	return CloneSession{ID: id, Replicas: fromReplicas(cs.GetReplicas()), ClassOfService: cs.GetClassOfService(),
		TruncateLength: cs.GetPacketLengthBytes()}, nil
}

// readPRE reads one multicast group or clone session. A missing one is
// NOT_FOUND on simple_switch_grpc (and an empty answer on some servers):
// either is an error saying so.
func (c *Client) readPRE(ctx context.Context, e *p4v1.Entity, kind string, id uint32) (*p4v1.PacketReplicationEngineEntry, error) {
	ents, err := c.Read(ctx, e)
	if status.Code(err) == codes.NotFound || (err == nil && len(ents) == 0) {
		return nil, fmt.Errorf("read %s %d: the switch has no such %s", kind, id, kind)
	}
	if err != nil {
		return nil, err
	}
	if len(ents) != 1 {
		return nil, fmt.Errorf("read %s %d: the switch answered with %d entities, want 1", kind, id, len(ents))
	}
	return ents[0].GetPacketReplicationEngineEntry(), nil
}

func fromReplicas(rs []*p4v1.Replica) []Replica {
	out := make([]Replica, len(rs))
	for i, r := range rs {
		out[i] = Replica{Port: replicaPort(r), Instance: r.GetInstance()}
	}
	return out
}

// replicaPort reads either port field of a replica.
func replicaPort(r *p4v1.Replica) uint32 {
	if p, ok := r.GetPortKind().(*p4v1.Replica_Port); ok {
		var v uint32
		for _, b := range p.Port {
			v = v<<8 | uint32(b)
		}
		return v
	}
	//lint:ignore SA1019 servers answer with the field the replica was written with.
	return r.GetEgressPort()
}

func cloneSessionEntity(cs CloneSession) *p4v1.Entity {
	e := &p4v1.CloneSessionEntry{SessionId: cs.ID, Replicas: replicas(cs.Replicas), ClassOfService: cs.ClassOfService,
		PacketLengthBytes: cs.TruncateLength}
	return preEntity(&p4v1.PacketReplicationEngineEntry{Type: &p4v1.PacketReplicationEngineEntry_CloneSessionEntry{CloneSessionEntry: e}})
}

// CloneSessionUpdate builds the update that inserts, modifies or deletes a
// clone session (only cs.ID matters to delete).
func CloneSessionUpdate(typ p4v1.Update_Type, cs CloneSession) *p4v1.Update {
	if typ == p4v1.Update_DELETE {
		cs = CloneSession{ID: cs.ID}
	}
	return &p4v1.Update{Type: typ, Entity: cloneSessionEntity(cs)}
}

// InsertCloneSession creates a clone session.
func (c *Client) InsertCloneSession(ctx context.Context, cs CloneSession) error {
	return c.Write(ctx, CloneSessionUpdate(p4v1.Update_INSERT, cs))
}

// ModifyCloneSession replaces a clone session.
func (c *Client) ModifyCloneSession(ctx context.Context, cs CloneSession) error {
	return c.Write(ctx, CloneSessionUpdate(p4v1.Update_MODIFY, cs))
}

// DeleteCloneSession deletes a clone session.
func (c *Client) DeleteCloneSession(ctx context.Context, id uint32) error {
	return c.Write(ctx, CloneSessionUpdate(p4v1.Update_DELETE, CloneSession{ID: id}))
}
