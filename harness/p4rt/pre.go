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
func writeByID(typ p4v1.Update_Type, idPath, what string, id uint32, exists bool, set, del func() *fieldError) *fieldError {
	switch {
	case typ == p4v1.Update_INSERT && exists:
		return errAt(codes.AlreadyExists, idPath, "%s %d exists", what, id)
	case typ != p4v1.Update_INSERT && !exists:
		return errAt(codes.NotFound, idPath, "no %s %d", what, id)
	case typ == p4v1.Update_DELETE:
		return del()
	}
	return set()
}

// firstCloneGroup is the first multicast group of clone sessions: as in
// simple_switch_grpc, a clone session replicates through the group
// firstCloneGroup+session id, so controllers have groups 1..32767 and
// sessions 1..32767.
const firstCloneGroup = 1 << 15

func (pl *pipeline) writeMulticastGroup(typ p4v1.Update_Type, g *p4v1.MulticastGroupEntry) *fieldError {
	const path = "packet_replication_engine_entry.multicast_group_entry"
	id := g.MulticastGroupId
	if id == 0 {
		return errAt(codes.InvalidArgument, path+".multicast_group_id", "0 means no multicast in v1model")
	}
	if id >= firstCloneGroup {
		return errAt(codes.OutOfRange, path+".multicast_group_id", "%d: groups from %d up are reserved for clone sessions (as in simple_switch_grpc)", id, firstCloneGroup)
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
	del := func() *fieldError {
		delete(pl.groups, id)
		if err := pl.sw.DeleteMulticastGroup(uint16(id)); err != nil {
			return errAt(codes.Internal, path, "%v", err)
		}
		return nil
	}
	return writeByID(typ, path+".multicast_group_id", "multicast group", id, exists, set, del)
}

func (pl *pipeline) writeCloneSession(typ p4v1.Update_Type, c *p4v1.CloneSessionEntry) *fieldError {
	const path = "packet_replication_engine_entry.clone_session_entry"
	id := c.SessionId
	if id == 0 || id >= firstCloneGroup {
		return errAt(codes.InvalidArgument, path+".session_id", "%d outside 1..%d", id, firstCloneGroup-1)
	}
	group := uint16(firstCloneGroup + id)
	_, exists := pl.clones[id]
	set := func() *fieldError {
		rs, canon, fe := replicas(path, c.Replicas)
		if fe != nil {
			return fe
		}
		if c.ClassOfService != 0 {
			return errAt(codes.Unimplemented, path+".class_of_service", "%d: there are no queues to choose from (as in simple_switch_grpc)", c.ClassOfService)
		}
		if c.PacketLengthBytes < 0 {
			return errAt(codes.InvalidArgument, path+".packet_length_bytes", "%d is negative", c.PacketLengthBytes)
		}
		if err := pl.sw.SetMulticastGroup(group, rs); err != nil {
			return errAt(codes.Internal, path, "%v", err)
		}
		if err := pl.sw.SetCloneSession(id, engine.CloneSession{Group: group, Truncate: int(c.PacketLengthBytes)}); err != nil {
			return errAt(codes.InvalidArgument, path, "%v", err)
		}
		pl.clones[id] = &p4v1.CloneSessionEntry{SessionId: id, Replicas: canon, ClassOfService: c.ClassOfService, PacketLengthBytes: c.PacketLengthBytes}
		return nil
	}
	del := func() *fieldError {
		delete(pl.clones, id)
		err := pl.sw.DeleteCloneSession(id)
		if err == nil {
			err = pl.sw.DeleteMulticastGroup(group)
		}
		if err != nil {
			return errAt(codes.Internal, path, "%v", err)
		}
		return nil
	}
	return writeByID(typ, path+".session_id", "clone session", id, exists, set, del)
}

// readPRE answers multicast group and clone session reads: id 0 reads
// all, a missing id is NOT_FOUND (as in simple_switch_grpc).
func (pl *pipeline) readPRE(pre *p4v1.PacketReplicationEngineEntry, emit func(*p4v1.Entity)) *fieldError {
	emitPRE := func(e *p4v1.PacketReplicationEngineEntry) {
		emit(&p4v1.Entity{Entity: &p4v1.Entity_PacketReplicationEngineEntry{PacketReplicationEngineEntry: e}})
	}
	switch x := pre.Type.(type) {
	case *p4v1.PacketReplicationEngineEntry_MulticastGroupEntry:
		return readByID(pl.groups, x.MulticastGroupEntry.MulticastGroupId, "packet_replication_engine_entry.multicast_group_entry.multicast_group_id", "multicast group",
			func(g *p4v1.MulticastGroupEntry) {
				emitPRE(&p4v1.PacketReplicationEngineEntry{Type: &p4v1.PacketReplicationEngineEntry_MulticastGroupEntry{MulticastGroupEntry: g}})
			})
	case *p4v1.PacketReplicationEngineEntry_CloneSessionEntry:
		return readByID(pl.clones, x.CloneSessionEntry.SessionId, "packet_replication_engine_entry.clone_session_entry.session_id", "clone session",
			func(c *p4v1.CloneSessionEntry) {
				emitPRE(&p4v1.PacketReplicationEngineEntry{Type: &p4v1.PacketReplicationEngineEntry_CloneSessionEntry{CloneSessionEntry: c}})
			})
	}
	return errAt(codes.InvalidArgument, "packet_replication_engine_entry", "neither a multicast group nor a clone session")
}

// readByID emits copies of the entry with the id, or of all entries for id
// 0, in id order; a missing id is NOT_FOUND.
func readByID[M proto.Message](m map[uint32]M, id uint32, path, what string, emit func(M)) *fieldError {
	if id != 0 {
		e, ok := m[id]
		if !ok {
			return errAt(codes.NotFound, path, "no %s %d", what, id)
		}
		emit(proto.Clone(e).(M))
		return nil
	}
	for _, id := range sortedIDs(m) {
		emit(proto.Clone(m[id]).(M))
	}
	return nil
}

func sortedIDs[V any](m map[uint32]V) []uint32 {
	ids := make([]uint32, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}
