package engine

import (
	"fmt"
	"sync/atomic"
	"time"
)

// Idle timeouts (bmv2 JSON "support_timeout", P4Runtime idle_timeout_ns):
// an entry of such a table remembers when a packet last hit it; the
// control plane gives it a time to live and asks which entries have been
// idle that long, each reported once until it is hit again, as
// simple_switch's ageing monitor does.

// idleState is an entry's ageing state.
type idleState struct {
	lastHit  atomic.Int64 // unix nanoseconds
	ttl      atomic.Int64 // nanoseconds; 0: never ages
	notified atomic.Bool
}

// hit records a packet hitting the entry.
func (st *idleState) hit(now time.Time) {
	st.lastHit.Store(now.UnixNano())
	if st.notified.Load() {
		st.notified.Store(false)
	}
}

// SupportsTimeout reports whether a table's entries age.
func (p *Program) SupportsTimeout(tableName string) (bool, error) {
	i, err := resolveName("table", tableName, p.tableByName)
	if err != nil {
		return false, err
	}
	return p.tables[i].supportTimeout, nil
}

// idleEntry finds an entry of a table whose entries age.
func (s *Switch) idleEntry(tableName string, h EntryHandle) (*entry, error) {
	t, err := s.table(tableName)
	if err != nil {
		return nil, err
	}
	if !t.decl.supportTimeout {
		return nil, fmt.Errorf("table %q does not support idle timeouts", t.decl.name)
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.entry(h)
}

// SetEntryIdleTimeout gives an entry its time to live without hits (0: it
// never ages) and restarts its idle time.
func (s *Switch) SetEntryIdleTimeout(tableName string, h EntryHandle, ttl time.Duration) error {
	e, err := s.idleEntry(tableName, h)
	if err != nil {
		return err
	}
	e.idle.ttl.Store(int64(ttl))
	e.idle.hit(s.now())
	return nil
}

// EntryIdleTime returns an entry's time to live and the time since a
// packet last hit it (or since it was added or given its timeout).
func (s *Switch) EntryIdleTime(tableName string, h EntryHandle) (ttl, idle time.Duration, err error) {
	e, err := s.idleEntry(tableName, h)
	if err != nil {
		return 0, 0, err
	}
	return time.Duration(e.idle.ttl.Load()), s.now().Sub(time.Unix(0, e.idle.lastHit.Load())), nil
}

// ExpiredEntries returns the entries of a table idle for at least their
// time to live and not reported since their last hit, and marks them
// reported.
func (s *Switch) ExpiredEntries(tableName string) ([]EntryHandle, error) {
	t, err := s.table(tableName)
	if err != nil {
		return nil, err
	}
	if !t.decl.supportTimeout {
		return nil, nil
	}
	now := s.now().UnixNano()
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []EntryHandle
	for h, e := range t.entries {
		ttl := e.idle.ttl.Load()
		if ttl > 0 && now-e.idle.lastHit.Load() >= ttl && !e.idle.notified.Load() {
			e.idle.notified.Store(true)
			out = append(out, h)
		}
	}
	return out, nil
}
