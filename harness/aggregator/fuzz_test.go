package aggregator

import (
	"testing"

	"github.com/grid-ina/grid/harness/gradproto"
)

// FuzzEngineAgreesWithModel sends arbitrary frames, seeded with every kind
// of GRID packet, through the compiled program and the reference model and
// requires the same output, byte for byte. A short job runs first so the
// frame meets occupied and finished units. The switch also aggregates the
// job under a further node id (7) whose units are 3 after the hash's, so
// with 4 units most of them wrap around.
func FuzzEngineAgreesWithModel(f *testing.F) {
	st, err := gradproto.NewStar(2, 3, 1, 32)
	if err != nil {
		f.Fatal(err)
	}
	const alias = 7
	st.Config.Aggregations = append(st.Config.Aggregations, gradproto.Aggregation{Job: 2, Node: alias, FanIn: 2, UnitOffset: 3})
	var w []*gradproto.Worker
	for m := range st.Plan.Members {
		w = append(w, gradproto.NewWorker(&st.Plan, m, map[uint32][]int32{1: make([]int32, 32), 2: make([]int32, 32)}))
	}
	type sent struct {
		port  uint16
		frame []byte
	}
	var warmup []sent
	for m, wk := range w {
		for _, p := range wk.Originals() {
			if p.Frag == 2 && m == 1 {
				continue // leaves fragment 2's unit active
			}
			warmup = append(warmup, sent{st.WorkerPort(m), p.Marshal()})
		}
	}
	for _, x := range warmup {
		f.Add(uint8(x.port), x.frame)
	}
	res := &gradproto.Packet{DstMAC: st.Plan.Gateway, SrcIP: st.Plan.PSIP, DstIP: st.Plan.PSIP, TTL: 64,
		SrcPort: gradproto.UDPPort, DstPort: gradproto.UDPPort,
		Header: gradproto.Header{Version: 1, Flags: gradproto.FlagResult, Job: 2, Node: st.Plan.PSNode, Frag: 1}, Values: make([]int32, 32)}
	f.Add(uint8(gradproto.StarPSPort), res.Marshal())
	ctl := *res
	ctl.Values, ctl.Flags = nil, gradproto.FlagCongestion
	f.Add(uint8(1), ctl.Marshal())
	rs := *res
	rs.Flags, rs.Node, rs.Bitmap, rs.Count = gradproto.FlagResend, 1, 1, 1
	f.Add(uint8(1), rs.Marshal())
	wide := rs
	wide.Flags, wide.Values = 0, make([]int32, 64) // the other build's length
	f.Add(uint8(1), wide.Marshal())
	for frag := uint32(1); frag <= 4; frag++ {
		other := rs
		other.Flags, other.Node, other.Frag = 0, alias, frag
		f.Add(uint8(2), other.Marshal())
	}
	f.Add(uint8(1), []byte{1, 2, 3})
	prog := compileForEngine(f, Build{Units: 4})
	f.Fuzz(func(t *testing.T, port uint8, frame []byte) {
		eng, model := newPair(t, prog, st.Config, Build{Units: 4}, gradproto.NewClock())
		l := &lockstep{eng: eng, model: model}
		for _, x := range warmup {
			if _, err := l.Process(x.port, x.frame); err != nil {
				t.Fatalf("warm-up: %v", err)
			}
		}
		if _, err := l.Process(uint16(port%8), frame); err != nil {
			t.Fatal(err)
		}
	})
}
