package p4rt

import (
	"encoding/binary"
	"fmt"
	"sort"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/grid-ina/grid/harness/engine"
)

// replicas validates the replicas of a multicast group or clone session.
func replicas(path string, rs []*p4v1.Replica) ([]engine.Replica, []*p4v1.Replica, *fieldError) {
	out := make([]engine.Replica, 0, len(rs))
	canon := make([]*p4v1.Replica, 0, len(rs))
	seen := map[engine.Replica]bool{}
	for i, r := range rs {
		rpath := fmt.Sprintf("%s.replicas[%d]", path, i)
		var port uint32
		// Read-back keeps the form the controller used: egress_port (what
		// simple_switch_grpc understands) or the newer port bytes.
		canonRep := &p4v1.Replica{Instance: r.Instance}
		switch p := r.PortKind.(type) {
		case *p4v1.Replica_EgressPort:
			//lint:ignore SA1019 egress_port is what simple_switch_grpc's controllers send
			port = p.EgressPort
			canonRep.PortKind = p
		case *p4v1.Replica_Port:
			if len(p.Port) == 0 || len(p.Port) > 4 {
				return nil, nil, errAt(codes.InvalidArgument, rpath+".port", "%d bytes: a port is 1 to 4 bytes", len(p.Port))
			}
			var b [4]byte
			copy(b[4-len(p.Port):], p.Port)
			port = binary.BigEndian.Uint32(b[:])
			canonRep.PortKind = &p4v1.Replica_Port{Port: canonical(p.Port)}
		default:
			return nil, nil, errAt(codes.InvalidArgument, rpath, "no port")
		}
		if port > engine.DefaultDropPort {
			return nil, nil, errAt(codes.InvalidArgument, rpath+".egress_port", "%d does not fit v1model's 9-bit ports", port)
		}
		if r.Instance > 0xffff {
			return nil, nil, errAt(codes.InvalidArgument, rpath+".instance", "%d does not fit v1model's 16-bit egress_rid", r.Instance)
		}
		if len(r.BackupReplicas) > 0 {
			return nil, nil, errAt(codes.Unimplemented, rpath+".backup_replicas", "backup replicas are not supported")
		}
		er := engine.Replica{Port: port, Rid: uint16(r.Instance)}
		if seen[er] {
			return nil, nil, errAt(codes.InvalidArgument, rpath, "port %d instance %d is listed twice", port, r.Instance)
		}
		seen[er] = true
		out = append(out, er)
		canon = append(canon, canonRep)
	}
	return out, canon, nil
}

func (pl *pipeline) writePRE(typ p4v1.Update_Type, pre *p4v1.PacketReplicationEngineEntry) *fieldError {
	switch x := pre.Type.(type) {
	case *p4v1.PacketReplicationEngineEntry_MulticastGroupEntry:
		return pl.writeMulticastGroup(typ, x.MulticastGroupEntry)
	case *p4v1.PacketReplicationEngineEntry_CloneSessionEntry:
		return pl.writeCloneSession(typ, x.CloneSessionEntry)
	}
	return errAt(codes.InvalidArgument, "packet_replication_engine_entry", "neither a multicast group nor a clone session")
}

// writeByID applies INSERT (ALREADY_EXISTS if the id exists), MODIFY and
// DELETE (NOT_FOUND if it does not) of an entry known by its id, as
// multicast groups and clone sessions are.
func writeByID(typ p4v1.Update_Type, idPath, what string, id uint32, exists bool, set func() *fieldError, del func() error) *fieldError {
	switch {
	case typ == p4v1.Update_INSERT && exists:
		return errAt(codes.AlreadyExists, idPath, "%s %d exists", what, id)
	case typ != p4v1.Update_INSERT && !exists:
		return errAt(codes.NotFound, idPath, "no %s %d", what, id)
	case typ == p4v1.Update_DELETE:
		if err := del(); err != nil {
			return errAt(codes.Internal, idPath, "%v", err)
		}
		return nil
	}
	return set()
}

func (pl *pipeline) writeMulticastGroup(typ p4v1.Update_Type, g *p4v1.MulticastGroupEntry) *fieldError {
	const path = "packet_replication_engine_entry.multicast_group_entry"
	id := g.MulticastGroupId
	if id == 0 || id > 0xffff {
		return errAt(codes.InvalidArgument, path+".multicast_group_id", "%d outside 1..65535 (v1model's mcast_grp is 16 bits and 0 means none)", id)
	}
	_, exists := pl.groups[id]
	set := func() *fieldError {
		rs, canon, fe := replicas(path, g.Replicas)
		if fe != nil {
			return fe
		}
		if err := pl.sw.SetMulticastGroup(uint16(id), rs); err != nil {
			return errAt(codes.InvalidArgument, path, "%v", err)
		}
		pl.groups[id] = &p4v1.MulticastGroupEntry{MulticastGroupId: id, Replicas: canon, Metadata: g.Metadata}
		return nil
	}
	del := func() error {
		delete(pl.groups, id)
		return pl.sw.DeleteMulticastGroup(uint16(id))
	}
	return writeByID(typ, path+".multicast_group_id", "multicast group", id, exists, set, del)
}

func (pl *pipeline) writeCloneSession(typ p4v1.Update_Type, c *p4v1.CloneSessionEntry) *fieldError {
	const path = "packet_replication_engine_entry.clone_session_entry"
	id := c.SessionId
	if id == 0 {
		return errAt(codes.InvalidArgument, path+".session_id", "0 is not a session id")
	}
	_, exists := pl.clones[id]
	set := func() *fieldError {
		rs, canon, fe := replicas(path, c.Replicas)
		if fe != nil {
			return fe
		}
		if len(rs) != 1 || rs[0].Rid != 0 {
			return errAt(codes.Unimplemented, path+".replicas", "%d replicas: clone sessions with exactly one replica of instance 0 are supported", len(rs))
		}
		if c.PacketLengthBytes < 0 {
			return errAt(codes.InvalidArgument, path+".packet_length_bytes", "%d is negative", c.PacketLengthBytes)
		}
		if err := pl.sw.SetCloneSession(id, engine.CloneSession{Port: rs[0].Port, Truncate: int(c.PacketLengthBytes)}); err != nil {
			return errAt(codes.InvalidArgument, path, "%v", err)
		}
		pl.clones[id] = &p4v1.CloneSessionEntry{SessionId: id, Replicas: canon, ClassOfService: c.ClassOfService, PacketLengthBytes: c.PacketLengthBytes}
		return nil
	}
	del := func() error {
		delete(pl.clones, id)
		return pl.sw.DeleteCloneSession(id)
	}
	return writeByID(typ, path+".session_id", "clone session", id, exists, set, del)
}

// readPRE answers multicast group and clone session reads; id 0 reads all.
func (pl *pipeline) readPRE(pre *p4v1.PacketReplicationEngineEntry, emit func(*p4v1.Entity)) *fieldError {
	wrap := func(e *p4v1.PacketReplicationEngineEntry) {
		emit(&p4v1.Entity{Entity: &p4v1.Entity_PacketReplicationEngineEntry{PacketReplicationEngineEntry: e}})
	}
	switch x := pre.Type.(type) {
	case *p4v1.PacketReplicationEngineEntry_MulticastGroupEntry:
		for _, id := range sortedIDs(pl.groups) {
			if x.MulticastGroupEntry.MulticastGroupId == 0 || x.MulticastGroupEntry.MulticastGroupId == id {
				wrap(&p4v1.PacketReplicationEngineEntry{Type: &p4v1.PacketReplicationEngineEntry_MulticastGroupEntry{
					MulticastGroupEntry: proto.Clone(pl.groups[id]).(*p4v1.MulticastGroupEntry)}})
			}
		}
		return nil
	case *p4v1.PacketReplicationEngineEntry_CloneSessionEntry:
		for _, id := range sortedIDs(pl.clones) {
			if x.CloneSessionEntry.SessionId == 0 || x.CloneSessionEntry.SessionId == id {
				wrap(&p4v1.PacketReplicationEngineEntry{Type: &p4v1.PacketReplicationEngineEntry_CloneSessionEntry{
					CloneSessionEntry: proto.Clone(pl.clones[id]).(*p4v1.CloneSessionEntry)}})
			}
		}
		return nil
	}
	return errAt(codes.InvalidArgument, "packet_replication_engine_entry", "neither a multicast group nor a clone session")
}

func sortedIDs[V any](m map[uint32]V) []uint32 {
	ids := make([]uint32, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}
