package p4rt

import (
	"context"
	"fmt"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Write applies a batch of updates from the primary controller, each on
// its own (CONTINUE_ON_ERROR): when some fail, the status is UNKNOWN with
// one p4.v1.Error per update in its details.
func (s *Server) Write(_ context.Context, req *p4v1.WriteRequest) (*p4v1.WriteResponse, error) {
	if err := s.checkWriter(req); err != nil {
		return nil, err
	}
	if req.Atomicity != p4v1.WriteRequest_CONTINUE_ON_ERROR {
		return nil, status.Errorf(codes.Unimplemented, "atomicity: %s is not supported (as in simple_switch_grpc); use CONTINUE_ON_ERROR", req.Atomicity)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pl, err := s.pipelineOrError()
	if err != nil {
		return nil, err
	}
	errs := make([]*fieldError, len(req.Updates))
	failed := false
	for i, u := range req.Updates {
		if fe := pl.update(u); fe != nil {
			errs[i] = under(fmt.Sprintf("updates[%d]", i), fe)
			failed = true
		}
	}
	if failed {
		return nil, batchError(errs)
	}
	return &p4v1.WriteResponse{}, nil
}

// update applies one update; the caller holds s.mu. Error paths are
// relative to the Update.
func (pl *pipeline) update(u *p4v1.Update) *fieldError {
	switch u.Type {
	case p4v1.Update_INSERT, p4v1.Update_MODIFY, p4v1.Update_DELETE:
	default:
		return errAt(codes.InvalidArgument, "type", "%s is not INSERT, MODIFY or DELETE", u.Type)
	}
	if kind := cellKind(u.Entity); kind != "" && u.Type != p4v1.Update_MODIFY {
		return errAt(codes.InvalidArgument, "type", "%s always exist: they can only be modified, not %s", kind, u.Type)
	}
	var fe *fieldError
	switch e := u.GetEntity().GetEntity().(type) {
	case *p4v1.Entity_TableEntry:
		fe = pl.writeTableEntry(u.Type, e.TableEntry)
	case *p4v1.Entity_PacketReplicationEngineEntry:
		fe = pl.writePRE(u.Type, e.PacketReplicationEngineEntry)
	case *p4v1.Entity_CounterEntry:
		fe = pl.writeCounter(e.CounterEntry)
	case *p4v1.Entity_DirectCounterEntry:
		fe = pl.writeDirectCounter(e.DirectCounterEntry)
	case *p4v1.Entity_MeterEntry:
		fe = pl.writeMeter(e.MeterEntry)
	case *p4v1.Entity_DirectMeterEntry:
		fe = pl.writeDirectMeter(e.DirectMeterEntry)
	case *p4v1.Entity_RegisterEntry:
		fe = pl.writeRegister(e.RegisterEntry)
	case *p4v1.Entity_ActionProfileMember:
		fe = pl.writeMember(u.Type, e.ActionProfileMember)
	case *p4v1.Entity_ActionProfileGroup:
		fe = pl.writeGroup(u.Type, e.ActionProfileGroup)
	case *p4v1.Entity_ValueSetEntry:
		fe = pl.writeValueSet(u.Type, e.ValueSetEntry)
	case *p4v1.Entity_DigestEntry:
		fe = pl.writeDigestEntry(u.Type, e.DigestEntry)
	case nil:
		return errAt(codes.InvalidArgument, "entity", "missing")
	default:
		return errAt(codes.Unimplemented, "entity", "writing %s is not supported", describe(u.Entity))
	}
	if fe != nil {
		return under("entity", fe)
	}
	return nil
}

// cellKind names the entities made of cells that always exist (counters,
// meters, registers), "" for others.
func cellKind(e *p4v1.Entity) string {
	switch e.GetEntity().(type) {
	case *p4v1.Entity_CounterEntry:
		return "counter cells"
	case *p4v1.Entity_DirectCounterEntry:
		return "direct counters"
	case *p4v1.Entity_MeterEntry:
		return "meter cells"
	case *p4v1.Entity_DirectMeterEntry:
		return "direct meters"
	case *p4v1.Entity_RegisterEntry:
		return "register cells"
	}
	return ""
}

// Read streams the entities asked for; wildcards (id 0, unset index, no
// match) read all. Anyone may read, also without arbitration.
func (s *Server) Read(req *p4v1.ReadRequest, stream p4v1.P4Runtime_ReadServer) error {
	if err := s.checkDevice(req.DeviceId); err != nil {
		return err
	}
	if err := checkRole(req.Role, 0); err != nil {
		return err
	}
	pl, err := s.pipelineOrError()
	if err != nil {
		return err
	}
	var out []*p4v1.Entity
	emit := func(e *p4v1.Entity) { out = append(out, e) }
	s.mu.RLock()
	for i, e := range req.Entities {
		if fe := pl.read(e, emit); fe != nil {
			s.mu.RUnlock()
			return under(fmt.Sprintf("entities[%d]", i), fe).grpcError()
		}
	}
	s.mu.RUnlock()
	// Send in chunks so that big tables stay below gRPC's message limit.
	const chunk = 1000
	for len(out) > 0 {
		n := min(chunk, len(out))
		if err := stream.Send(&p4v1.ReadResponse{Entities: out[:n]}); err != nil {
			return err
		}
		out = out[n:]
	}
	return nil
}

// read answers one entity of a ReadRequest; the caller holds s.mu for
// reading.
func (pl *pipeline) read(e *p4v1.Entity, emit func(*p4v1.Entity)) *fieldError {
	var fe *fieldError
	switch x := e.GetEntity().(type) {
	case *p4v1.Entity_TableEntry:
		fe = pl.readTableEntries(x.TableEntry, emit)
	case *p4v1.Entity_PacketReplicationEngineEntry:
		fe = pl.readPRE(x.PacketReplicationEngineEntry, emit)
	case *p4v1.Entity_CounterEntry:
		fe = pl.readCounters(x.CounterEntry, emit)
	case *p4v1.Entity_DirectCounterEntry:
		fe = pl.readDirectCounters(x.DirectCounterEntry, emit)
	case *p4v1.Entity_MeterEntry:
		fe = pl.readMeters(x.MeterEntry, emit)
	case *p4v1.Entity_DirectMeterEntry:
		fe = pl.readDirectMeters(x.DirectMeterEntry, emit)
	case *p4v1.Entity_RegisterEntry:
		fe = pl.readRegisters(x.RegisterEntry, emit)
	case *p4v1.Entity_ActionProfileMember:
		fe = pl.readMembers(x.ActionProfileMember, emit)
	case *p4v1.Entity_ActionProfileGroup:
		fe = pl.readGroups(x.ActionProfileGroup, emit)
	case *p4v1.Entity_ValueSetEntry:
		fe = pl.readValueSets(x.ValueSetEntry, emit)
	case *p4v1.Entity_DigestEntry:
		fe = pl.readDigestEntries(x.DigestEntry, emit)
	case nil:
		return errAt(codes.InvalidArgument, "entity", "missing")
	default:
		return errAt(codes.Unimplemented, "entity", "reading %s is not supported", describe(e))
	}
	return fe
}
