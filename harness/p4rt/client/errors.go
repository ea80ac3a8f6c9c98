package client

import (
	"fmt"
	"strings"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// WriteError is a Write the server refused in whole or in part.
type WriteError struct {
	// Status is the gRPC status of the Write call.
	Status *status.Status
	// Updates lists the updates that failed, in request order. It is empty
	// when the server gave no per-update details (a refusal of the whole
	// request, e.g. for a wrong election id).
	Updates []UpdateError
}

// UpdateError is one failed update of a Write.
type UpdateError struct {
	Index int    // position in the request
	What  string // the update, e.g. "insert table_entry MyIngress.ipv4_lpm"
	Code  codes.Code
	Msg   string
}

func (e UpdateError) Error() string {
	return fmt.Sprintf("updates[%d] (%s): %v: %s", e.Index, e.What, e.Code, e.Msg)
}

func (e *WriteError) Error() string {
	if len(e.Updates) == 0 {
		return fmt.Sprintf("write: %v: %s", e.Status.Code(), e.Status.Message())
	}
	parts := make([]string, len(e.Updates))
	for i, u := range e.Updates {
		parts[i] = u.Error()
	}
	return "write: " + strings.Join(parts, "; ")
}

// GRPCStatus is the call's status, so status.Code and status.FromError
// see through a WriteError.
func (e *WriteError) GRPCStatus() *status.Status { return e.Status }

// Code is the gRPC code of the first failed update, or of the call.
func (e *WriteError) Code() codes.Code {
	if len(e.Updates) > 0 {
		return e.Updates[0].Code
	}
	return e.Status.Code()
}

// newWriteError unpacks the p4.v1.Error details of a Write's status (one
// per update, OK for those that succeeded).
func newWriteError(s *symbols, updates []*p4v1.Update, err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("write: %w", err)
	}
	we := &WriteError{Status: st}
	for i, d := range st.Details() {
		pe, ok := d.(*p4v1.Error)
		if !ok || codes.Code(pe.GetCanonicalCode()) == codes.OK {
			continue
		}
		what := fmt.Sprintf("update %d", i)
		if i < len(updates) {
			what = describeUpdate(s, updates[i])
		}
		we.Updates = append(we.Updates, UpdateError{Index: i, What: what, Code: codes.Code(pe.GetCanonicalCode()), Msg: pe.GetMessage()})
	}
	return we
}

// describeUpdate names an update for error messages: its type, entity kind
// and the name of the object it touches.
func describeUpdate(s *symbols, u *p4v1.Update) string {
	return strings.ToLower(u.GetType().String()) + " " + describeEntity(s, u.GetEntity())
}

func describeEntities(s *symbols, es []*p4v1.Entity) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = describeEntity(s, e)
	}
	return strings.Join(parts, ", ")
}

func describeEntity(s *symbols, e *p4v1.Entity) string {
	if s == nil {
		return fmt.Sprintf("%T", e.GetEntity())
	}
	switch x := e.GetEntity().(type) {
	case *p4v1.Entity_TableEntry:
		what := "table_entry " + s.tables.nameOf(x.TableEntry.GetTableId())
		if x.TableEntry.GetIsDefaultAction() {
			what += " (default action)"
		}
		return what
	case *p4v1.Entity_CounterEntry:
		return "counter_entry " + s.counters.nameOf(x.CounterEntry.GetCounterId()) + index(x.CounterEntry.GetIndex())
	case *p4v1.Entity_DirectCounterEntry:
		return "direct_counter_entry of table " + s.tables.nameOf(x.DirectCounterEntry.GetTableEntry().GetTableId())
	case *p4v1.Entity_MeterEntry:
		return "meter_entry " + s.meters.nameOf(x.MeterEntry.GetMeterId()) + index(x.MeterEntry.GetIndex())
	case *p4v1.Entity_DirectMeterEntry:
		return "direct_meter_entry of table " + s.tables.nameOf(x.DirectMeterEntry.GetTableEntry().GetTableId())
	case *p4v1.Entity_RegisterEntry:
		return "register_entry " + s.registers.nameOf(x.RegisterEntry.GetRegisterId()) + index(x.RegisterEntry.GetIndex())
	case *p4v1.Entity_PacketReplicationEngineEntry:
		pre := x.PacketReplicationEngineEntry
		if g := pre.GetMulticastGroupEntry(); g != nil {
			return fmt.Sprintf("multicast_group_entry %d", g.GetMulticastGroupId())
		}
		if cs := pre.GetCloneSessionEntry(); cs != nil {
			return fmt.Sprintf("clone_session_entry %d", cs.GetSessionId())
		}
		return "packet_replication_engine_entry"
	}
	return fmt.Sprintf("%T", e.GetEntity())
}

func index(i *p4v1.Index) string {
	if i == nil {
		return " (all cells)"
	}
	return fmt.Sprintf("[%d]", i.GetIndex())
}
