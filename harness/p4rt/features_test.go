package p4rt

import (
	"testing"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"

	"github.com/grid-ina/grid/harness/p4c"
)

// newFeaturesFixture serves testdata/p4rt_features.p4 (value set, digest,
// idle timeouts) to a primary controller.
func newFeaturesFixture(t *testing.T) (*fixture, *controller) {
	t.Helper()
	res, err := p4c.Compile("testdata/p4rt_features.p4", p4c.Options{})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	f := newFixture(t)
	f.prog = res
	return f, f.setup()
}

// ethFrame is an Ethernet frame dst <- src of ethertype typ with two
// payload bytes.
func ethFrame(dst, src byte, typ uint16) []byte {
	return []byte{0, 0, 0, 0, 0, dst, 0, 0, 0, 0, 0, src, byte(typ >> 8), byte(typ), 0xaa, 0xbb}
}

func valueSetEntity(id uint32, values ...[]byte) *p4v1.Entity {
	e := &p4v1.ValueSetEntry{ValueSetId: id}
	for _, v := range values {
		e.Members = append(e.Members, &p4v1.ValueSetMember{Match: []*p4v1.FieldMatch{
			{FieldId: 1, FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: v}}},
		}})
	}
	return &p4v1.Entity{Entity: &p4v1.Entity_ValueSetEntry{ValueSetEntry: e}}
}

// A ValueSetEntry MODIFY fills the parser value set: the parser takes the
// select case for its values from then on; Read returns the members; the
// set holds at most its size and is never inserted or deleted.
func TestValueSetEntriesSteerTheParser(t *testing.T) {
	f, _ := newFeaturesFixture(t)
	id := preambleID(t, f.prog.P4Info.ValueSets, "P.tagged")
	portOf := func(typ uint16) uint32 {
		out := f.process(0, ethFrame(2, 3, typ))
		if len(out) != 1 {
			t.Fatalf("%d packets out, want 1", len(out))
		}
		return out[0].Port
	}
	if p := portOf(0x1234); p != 1 {
		t.Fatalf("before the value set is written: port %d, want 1 (not tagged)", p)
	}
	f.mustWrite(update(p4v1.Update_MODIFY, valueSetEntity(id, []byte{0x12, 0x34}, []byte{0x88, 0x47})))
	if p := portOf(0x1234); p != 7 {
		t.Errorf("0x1234 in the value set: port %d, want 7 (tagged)", p)
	}
	if p := portOf(0x0800); p != 1 {
		t.Errorf("0x0800 not in the value set: port %d, want 1", p)
	}
	got := f.read(valueSetEntity(0))
	if len(got) != 1 || len(got[0].GetValueSetEntry().GetMembers()) != 2 {
		t.Fatalf("read %v, want the set with 2 members", got)
	}
	f.mustWrite(update(p4v1.Update_MODIFY, valueSetEntity(id, []byte{0x88, 0x47})))
	if p := portOf(0x1234); p != 1 {
		t.Errorf("0x1234 after the set was replaced: port %d, want 1", p)
	}
	for _, c := range []struct {
		name string
		u    *p4v1.Update
		code codes.Code
	}{
		{"insert", update(p4v1.Update_INSERT, valueSetEntity(id, []byte{1})), codes.InvalidArgument},
		{"more members than its size", update(p4v1.Update_MODIFY, valueSetEntity(id, []byte{1}, []byte{2}, []byte{3}, []byte{4}, []byte{5})), codes.ResourceExhausted},
		{"a value wider than the field", update(p4v1.Update_MODIFY, valueSetEntity(id, []byte{1, 2, 3})), codes.InvalidArgument},
		{"an unknown value set", update(p4v1.Update_MODIFY, valueSetEntity(id+1, []byte{1})), codes.NotFound},
	} {
		details := writeDetails(t, f.write(1, c.u))
		if len(details) != 1 || codes.Code(details[0].CanonicalCode) != c.code {
			t.Errorf("%s: %v, want %v", c.name, details, c.code)
		}
	}
}

// nextDigest waits for the next DigestList on c's stream (nil if none
// comes within wait).
func (c *controller) nextDigest(t *testing.T, wait time.Duration) *p4v1.DigestList {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case m := <-c.msgs:
			if d := m.GetDigest(); d != nil {
				return d
			}
		case err := <-c.ended:
			t.Fatalf("stream ended: %v", err)
		case <-deadline:
			return nil
		}
	}
}

func digestEntryEntity(id uint32, cfg *p4v1.DigestEntry_Config) *p4v1.Entity {
	return &p4v1.Entity{Entity: &p4v1.Entity_DigestEntry{DigestEntry: &p4v1.DigestEntry{DigestId: id, Config: cfg}}}
}

// digest() calls reach the primary controller as DigestLists once it has
// inserted the digest's DigestEntry; data sent is not sent again until
// the controller acknowledges its list.
func TestDigestsStreamToThePrimaryWithAcks(t *testing.T) {
	f, c := newFeaturesFixture(t)
	id := preambleID(t, f.prog.P4Info.Digests, "learn_t")
	f.process(4, ethFrame(2, 3, 0x0800))
	if d := c.nextDigest(t, 100*time.Millisecond); d != nil {
		t.Fatalf("a digest without a DigestEntry: %v", d)
	}
	f.mustWrite(update(p4v1.Update_INSERT, digestEntryEntity(id, &p4v1.DigestEntry_Config{MaxListSize: 1, AckTimeoutNs: int64(time.Hour)})))
	f.process(4, ethFrame(2, 3, 0x0800))
	d := c.nextDigest(t, 5*time.Second)
	if d == nil {
		t.Fatal("no DigestList after the DigestEntry was inserted")
	}
	members := d.GetData()[0].GetStruct().GetMembers()
	if d.DigestId != id || len(d.Data) != 1 || len(members) != 2 || string(members[0].GetBitstring()) != "\x03" || string(members[1].GetBitstring()) != "\x04" {
		t.Fatalf("DigestList %v, want one learn_t {src 3, port 4}", d)
	}
	f.process(4, ethFrame(2, 3, 0x0800))
	if again := c.nextDigest(t, 100*time.Millisecond); again != nil {
		t.Fatalf("the same data again before its ack: %v", again)
	}
	if err := c.stream.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_DigestAck{DigestAck: &p4v1.DigestListAck{DigestId: id, ListId: d.ListId}}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the ack travels the stream
	f.process(4, ethFrame(2, 3, 0x0800))
	if after := c.nextDigest(t, 5*time.Second); after == nil || after.ListId == d.ListId {
		t.Fatalf("after the ack the data comes again in a new list, got %v", after)
	}
	if got := f.read(digestEntryEntity(0, nil)); len(got) != 1 || got[0].GetDigestEntry().GetConfig().GetMaxListSize() != 1 {
		t.Errorf("read digest entries %v", got)
	}
	f.mustWrite(update(p4v1.Update_DELETE, digestEntryEntity(id, nil)))
	f.process(4, ethFrame(2, 5, 0x0800))
	if d := c.nextDigest(t, 100*time.Millisecond); d != nil {
		t.Errorf("a digest after its DigestEntry was deleted: %v", d)
	}
}

// nextIdleNotification waits for the next IdleTimeoutNotification (nil if
// none comes within wait).
func (c *controller) nextIdleNotification(t *testing.T, wait time.Duration) *p4v1.IdleTimeoutNotification {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case m := <-c.msgs:
			if n := m.GetIdleTimeoutNotification(); n != nil {
				return n
			}
		case err := <-c.ended:
			t.Fatalf("stream ended: %v", err)
		case <-deadline:
			return nil
		}
	}
}

// An entry with idle_timeout_ns that no packet hits for that long is
// reported once in an IdleTimeoutNotification; a hit restarts its idle
// time; Read gives time_since_last_hit.
func TestIdleEntriesAreNotifiedOnce(t *testing.T) {
	f, c := newFeaturesFixture(t)
	flows := f.tableID("Ig.flows")
	fwd := f.actionID("Ig.fwd")
	entry := func(dst byte, ttl time.Duration) *p4v1.TableEntry {
		return &p4v1.TableEntry{TableId: flows, Match: []*p4v1.FieldMatch{{FieldId: 1, FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: []byte{dst}}}}},
			Action: action(fwd, []byte{2}), IdleTimeoutNs: int64(ttl)}
	}
	f.mustWrite(update(p4v1.Update_INSERT, tableEntity(entry(2, time.Second))), update(p4v1.Update_INSERT, tableEntity(entry(3, time.Minute))))
	f.advance(600 * time.Millisecond)
	f.process(0, ethFrame(2, 9, 0x0800)) // a hit restarts dst 2's idle time
	f.advance(600 * time.Millisecond)
	if n := c.nextIdleNotification(t, 300*time.Millisecond); n != nil {
		t.Fatalf("notified %v, but dst 2 was hit 0.6 s ago (timeout 1 s)", n)
	}
	f.advance(600 * time.Millisecond)
	n := c.nextIdleNotification(t, 5*time.Second)
	if n == nil || len(n.TableEntry) != 1 || string(n.TableEntry[0].Match[0].GetExact().Value) != "\x02" || n.TableEntry[0].IdleTimeoutNs != int64(time.Second) {
		t.Fatalf("notification %v, want dst 2's entry alone", n)
	}
	if again := c.nextIdleNotification(t, 300*time.Millisecond); again != nil {
		t.Errorf("notified again without a hit: %v", again)
	}
	got := f.read(tableEntity(&p4v1.TableEntry{TableId: flows, TimeSinceLastHit: &p4v1.TableEntry_IdleTimeout{}}))
	if len(got) != 2 || got[0].GetTableEntry().GetTimeSinceLastHit().GetElapsedNs() != int64(1200*time.Millisecond) {
		t.Errorf("read %v, want two entries, dst 2 idle 1.2 s", got)
	}
}

// A controller header that is not whole bytes (two 9-bit ports) ends in
// padding: its fields sit at the front, as in the padded bmv2 header.
func TestControllerHeadersOfOddBitsArePaddedAtTheEnd(t *testing.T) {
	h := &controllerHeader{fields: []*p4configv1.ControllerPacketMetadata_Metadata{{Id: 1, Name: "in", Bitwidth: 9}, {Id: 2, Name: "out", Bitwidth: 9}}, bytes: 3, pad: 6}
	b, err := h.pack([]*p4v1.PacketMetadata{{MetadataId: 1, Value: []byte{1, 0xff}}, {MetadataId: 2, Value: []byte{2}}})
	if err != nil {
		t.Fatal(err)
	}
	// 1_1111_1111 0_0000_0010 00_0000
	if want := []byte{0xff, 0x80, 0x80}; string(b) != string(want) {
		t.Fatalf("packed %x, want %x", b, want)
	}
	md := h.unpack(b)
	if string(md[0].Value) != "\x01\xff" || string(md[1].Value) != "\x02" {
		t.Errorf("unpacked %v", md)
	}
}
