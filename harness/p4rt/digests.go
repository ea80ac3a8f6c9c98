package p4rt

import (
	"fmt"
	"sync"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/grid-ina/grid/harness/engine"
)

// digestDef is a digest of the P4Info bound to the bmv2 learn list that
// carries it. As in simple_switch_grpc, the server streams a digest's
// DigestLists only once the controller has inserted its DigestEntry (the
// batching config); data sent and not yet acknowledged is not sent again
// until the entry's ack_timeout_ns passes.
type digestDef struct {
	id     uint32
	name   string
	list   int  // bmv2 learn list id
	tuple  bool // the type is a tuple, else a struct
	isBool []bool

	mu       sync.Mutex
	config   *p4v1.DigestEntry_Config // nil until the DigestEntry is inserted
	pending  []*p4v1.P4Data
	keys     []string // of pending
	timer    *time.Timer
	nextList uint64
	sent     map[string]time.Time // data waiting for its ack -> when it may be sent again
	unacked  map[uint64][]string  // list id -> its data
}

// resolveDigests binds the P4Info's digests to the JSON's learn lists: by
// name (p4c names both after the struct), else in order.
func (pl *pipeline) resolveDigests(prog *engine.Program) error {
	pl.digests = map[uint32]*digestDef{}
	pl.digestByList = map[int]*digestDef{}
	lists := prog.Digests()
	used := map[int]bool{}
	for i, d := range pl.info.Digests {
		path := fmt.Sprintf("config.p4info.digests[%d]", i)
		if err := checkID(path, d.GetPreamble(), pl.digests); err != nil {
			return err
		}
		def := &digestDef{id: d.Preamble.Id, name: d.Preamble.GetName(), list: -1, sent: map[string]time.Time{}, unacked: map[uint64][]string{}}
		for _, ll := range lists {
			if ll.Name == def.name && !used[ll.ID] {
				def.list = ll.ID
			}
		}
		for _, ll := range lists {
			if def.list < 0 && !used[ll.ID] {
				def.list = ll.ID
			}
		}
		if def.list < 0 {
			return fmt.Errorf("%s: digest %q has no learn list in the bmv2 JSON", path, def.name)
		}
		used[def.list] = true
		var members []*p4configv1.P4DataTypeSpec
		switch ts := d.GetTypeSpec().GetTypeSpec().(type) {
		case *p4configv1.P4DataTypeSpec_Tuple:
			def.tuple, members = true, ts.Tuple.GetMembers()
		case *p4configv1.P4DataTypeSpec_Struct:
			for _, m := range pl.info.GetTypeInfo().GetStructs()[ts.Struct.GetName()].GetMembers() {
				members = append(members, m.GetTypeSpec())
			}
		}
		for _, m := range members {
			_, b := m.GetTypeSpec().(*p4configv1.P4DataTypeSpec_Bool)
			def.isBool = append(def.isBool, b)
		}
		pl.digests[def.id] = def
		pl.digestByList[def.list] = def
	}
	return nil
}

// digest takes a digest the engine generated and queues it for the
// primary controller.
func (pl *pipeline) digest(d engine.Digest) {
	def := pl.digestByList[d.ID]
	if def == nil {
		return
	}
	data := &p4v1.P4Data{}
	var members []*p4v1.P4Data
	key := ""
	for i, v := range d.Values {
		m := &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: canonical(v)}}
		if i < len(def.isBool) && def.isBool[i] {
			m.Data = &p4v1.P4Data_Bool{Bool: canonical(v)[0] != 0}
		}
		members = append(members, m)
		key += fmt.Sprintf("%x/", v)
	}
	if def.tuple {
		data.Data = &p4v1.P4Data_Tuple{Tuple: &p4v1.P4StructLike{Members: members}}
	} else {
		data.Data = &p4v1.P4Data_Struct{Struct: &p4v1.P4StructLike{Members: members}}
	}
	def.mu.Lock()
	defer def.mu.Unlock()
	cfg := def.config
	if cfg == nil {
		return // no DigestEntry: the controller does not want this digest
	}
	if until, ok := def.sent[key]; ok && pl.now().Before(until) {
		return // sent and not yet acknowledged
	}
	def.pending = append(def.pending, data)
	def.keys = append(def.keys, key)
	if cfg.MaxTimeoutNs <= 0 || cfg.MaxListSize > 0 && len(def.pending) >= int(cfg.MaxListSize) {
		pl.flushDigests(def)
		return
	}
	if def.timer == nil {
		def.timer = time.AfterFunc(time.Duration(cfg.MaxTimeoutNs), func() {
			def.mu.Lock()
			defer def.mu.Unlock()
			pl.flushDigests(def)
		})
	}
}

// flushDigests sends the pending digests as one DigestList; the caller
// holds def.mu.
func (pl *pipeline) flushDigests(def *digestDef) {
	if def.timer != nil {
		def.timer.Stop()
		def.timer = nil
	}
	if len(def.pending) == 0 || def.config == nil {
		return
	}
	now := pl.now()
	def.nextList++
	list := &p4v1.DigestList{DigestId: def.id, ListId: def.nextList, Data: def.pending, Timestamp: now.UnixNano()}
	if ack := def.config.AckTimeoutNs; ack > 0 {
		for _, k := range def.keys {
			def.sent[k] = now.Add(time.Duration(ack))
		}
		def.unacked[list.ListId] = def.keys
	}
	def.pending, def.keys = nil, nil
	if pl.send != nil {
		pl.send(&p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_Digest{Digest: list}})
	}
}

// ackDigests handles a DigestListAck: its data may be sent again.
func (pl *pipeline) ackDigests(a *p4v1.DigestListAck) {
	def := pl.digests[a.DigestId]
	if def == nil {
		return
	}
	def.mu.Lock()
	defer def.mu.Unlock()
	for _, k := range def.unacked[a.ListId] {
		delete(def.sent, k)
	}
	delete(def.unacked, a.ListId)
}

// writeDigestEntry configures (INSERT, MODIFY) or stops (DELETE) a
// digest's stream.
func (pl *pipeline) writeDigestEntry(typ p4v1.Update_Type, e *p4v1.DigestEntry) *fieldError {
	def := pl.digests[e.DigestId]
	if def == nil {
		return errAt(codes.NotFound, "digest_entry.digest_id", "%d is not a digest of the P4Info", e.DigestId)
	}
	if typ != p4v1.Update_DELETE {
		cfg := e.GetConfig()
		switch {
		case cfg == nil:
			return errAt(codes.InvalidArgument, "digest_entry.config", "missing")
		case cfg.MaxTimeoutNs < 0 || cfg.AckTimeoutNs < 0 || cfg.MaxListSize < 0:
			return errAt(codes.InvalidArgument, "digest_entry.config", "timeouts and the list size must not be negative")
		}
	}
	def.mu.Lock()
	defer def.mu.Unlock()
	set := func() *fieldError {
		def.config = proto.Clone(e.GetConfig()).(*p4v1.DigestEntry_Config)
		return nil
	}
	del := func() *fieldError {
		def.config = nil
		if def.timer != nil {
			def.timer.Stop()
			def.timer = nil
		}
		def.pending, def.keys = nil, nil
		return nil
	}
	return writeByID(typ, "digest_entry.digest_id", "digest entry", e.DigestId, def.config != nil, set, del)
}

// readDigestEntries returns the configured digest entries (id 0: all).
func (pl *pipeline) readDigestEntries(e *p4v1.DigestEntry, emit func(*p4v1.Entity)) *fieldError {
	if e.DigestId != 0 && pl.digests[e.DigestId] == nil {
		return errAt(codes.NotFound, "digest_entry.digest_id", "%d is not a digest of the P4Info", e.DigestId)
	}
	for _, d := range pl.info.Digests {
		def := pl.digests[d.Preamble.Id]
		if e.DigestId != 0 && def.id != e.DigestId {
			continue
		}
		def.mu.Lock()
		cfg := def.config
		def.mu.Unlock()
		if cfg == nil {
			continue
		}
		emit(&p4v1.Entity{Entity: &p4v1.Entity_DigestEntry{DigestEntry: &p4v1.DigestEntry{DigestId: def.id, Config: proto.Clone(cfg).(*p4v1.DigestEntry_Config)}}})
	}
	return nil
}
