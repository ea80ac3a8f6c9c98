package p4c

import (
	"bytes"
	"fmt"
	"math/big"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/internal/repo"
)

// differentialFloor is the number of p4c-compile programs known to be
// compared; every one compared must behave like p4c's JSON.
const differentialFloor = 150

// Our JSON and p4c's behave alike: every p4c-compile program real p4c
// compiled and we compile runs the same random table entries and random
// packets (seeded with the constants its parser selects on) on the engine
// with both JSONs, and the packets out must be the same.
func TestCompileCorpusBehavesLikeP4csJSONOnRandomPackets(t *testing.T) {
	dir := repo.SharedOrSkip(t, "p4c-compile")
	outs, err := Survey(dir, 20*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	same, compared := 0, 0
	var report []string
	for _, o := range outs {
		if o.Result == nil {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(o.Path), ".p4")
		ref, err := os.ReadFile(filepath.Join(dir, "reference", name+".json"))
		if err != nil {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, "accept", o.Path))
		if err != nil || nondeterministic.Match(src) {
			continue
		}
		if len(ref) > 20*len(o.Result.JSON) {
			// p4c's copy propagation can grow expressions exponentially
			// (proliferation1): too slow to run on many packets.
			t.Logf("%s: p4c's JSON is %d times the size of ours: not run", o.Path, len(ref)/len(o.Result.JSON))
			continue
		}
		if why, ok := p4cMiscompiles[name]; ok {
			t.Logf("%s: not compared: %s", o.Path, why)
			continue
		}
		refProg, err := engine.Load(ref)
		if err != nil {
			// The engine's limits on p4c's JSON belong to its own tests.
			report = append(report, fmt.Sprintf("%s: not compared: the engine refuses p4c's JSON: %v", o.Path, err))
			continue
		}
		if dropsThroughACopy(refProg) {
			continue
		}
		compared++
		if diff := differential(refProg, o.Result.JSON, rand.New(rand.NewSource(1)), 100); diff != "" {
			t.Errorf("%s: %s", o.Path, diff)
			continue
		}
		same++
	}
	t.Logf("%d of %d programs behave like p4c's JSON on 100 random packets\n%s", same, compared, strings.Join(report, "\n"))
	if compared < differentialFloor {
		t.Errorf("%d programs compared, fewer than the %d before", compared, differentialFloor)
	}
}

// p4cMiscompiles are programs whose p4c JSON is wrong where ours is
// right, so they cannot be the reference.
var p4cMiscompiles = map[string]string{
	"issue4739": "p4c runs the loop body once (the issue: n is 1, it should be 4)",
	"issue2289": "an out parameter the action never writes: its value is undefined (p4c copies out 0, we keep the field)",
}

// dropsThroughACopy reports p4c JSON that calls mark_to_drop on a copy of
// standard_metadata (an action's inout parameter): real bmv2 drops the
// packet, the engine marks the copy only (see engineDivergesOnReference).
func dropsThroughACopy(prog *engine.Program) bool {
	for _, a := range prog.JSON().Actions {
		for _, p := range a.Primitives {
			if p.Op == "mark_to_drop" && len(p.Parameters) == 1 && p.Parameters[0].Str != "standard_metadata" {
				return true
			}
		}
	}
	return false
}

// differential runs n random packets through both programs after giving
// their common tables the same random entries; it returns "" when every
// packet leaves both alike, else the first difference.
func differential(refProg *engine.Program, ourJSON []byte, rng *rand.Rand, n int) string {
	ourProg, err := engine.Load(ourJSON)
	if err != nil {
		return "our JSON does not load: " + err.Error()
	}
	clock := func() time.Time { return time.Unix(0, 0) }
	ref := engine.NewSwitch(refProg, engine.Config{Now: clock})
	our := engine.NewSwitch(ourProg, engine.Config{Now: clock})
	ourTables := map[string]engine.TableInfo{}
	for _, ti := range ourProg.Tables() {
		ourTables[ti.Name] = ti
	}
	for _, rt := range refProg.Tables() {
		ot, ok := ourTables[rt.Name]
		if !ok || rt.ActionProfile != "" || !reflect.DeepEqual(keyShape(rt), keyShape(ot)) || !reflect.DeepEqual(rt.Actions, ot.Actions) || len(rt.Actions) == 0 {
			continue
		}
		for i := 0; i < 4; i++ {
			e := randomEntry(rt, rng)
			if _, err := ref.AddEntry(rt.Name, e); err != nil {
				continue
			}
			if _, err := our.AddEntry(ot.Name, e); err != nil {
				return fmt.Sprintf("table %s takes an entry with p4c's JSON, not with ours: %v", rt.Name, err)
			}
		}
	}
	consts := selectConstants(refProg)
	for i := 0; i < n; i++ {
		frame := randomFrame(rng, consts)
		port := uint32(rng.Intn(8))
		a, errA := run(ref, port, frame)
		b, errB := run(our, port, frame)
		if (errA != nil) != (errB != nil) {
			return fmt.Sprintf("packet %x: error %v with p4c's JSON, %v with ours", frame, errA, errB)
		}
		if !reflect.DeepEqual(a, b) {
			return fmt.Sprintf("packet %x on port %d: out %v with p4c's JSON, %v with ours", frame, port, a, b)
		}
	}
	return ""
}

// keyShape is what entries of a table depend on: key kinds and widths.
func keyShape(ti engine.TableInfo) []string {
	var out []string
	for _, k := range ti.Keys {
		out = append(out, fmt.Sprintf("%v/%d", k.Kind, k.Bitwidth))
	}
	return out
}

func randomBytes(rng *rand.Rand, bits int) []byte {
	b := make([]byte, (bits+7)/8)
	rng.Read(b)
	if r := bits % 8; r != 0 && len(b) > 0 {
		b[0] &= byte(1<<r - 1)
	}
	return b
}

// randomEntry is a random entry of a table: small values (likely to be
// hit by frames whose bytes are small too) half the time.
func randomEntry(ti engine.TableInfo, rng *rand.Rand) engine.Entry {
	var e engine.Entry
	for _, k := range ti.Keys {
		v := randomBytes(rng, k.Bitwidth)
		if rng.Intn(2) == 0 {
			v = new(big.Int).SetInt64(int64(rng.Intn(4))).FillBytes(make([]byte, len(v)))
		}
		m := engine.Match{Value: v}
		switch k.Kind {
		case engine.MatchLPM:
			m.PrefixLen = rng.Intn(k.Bitwidth + 1)
			mask := new(big.Int).Lsh(new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(m.PrefixLen)), big.NewInt(1)), uint(k.Bitwidth-m.PrefixLen))
			m.Value = new(big.Int).And(new(big.Int).SetBytes(v), mask).FillBytes(make([]byte, len(v)))
		case engine.MatchTernary:
			m.Mask = randomBytes(rng, k.Bitwidth)
			for i := range m.Value {
				m.Value[i] &= m.Mask[i]
			}
		case engine.MatchRange:
			m.Value, m.High = make([]byte, len(v)), v
		}
		e.Match = append(e.Match, m)
	}
	if len(ti.Keys) > 0 {
		e.Priority = int32(rng.Intn(10) + 1)
	}
	a := ti.Actions[rng.Intn(len(ti.Actions))]
	e.Action = a.Name
	for _, p := range a.Params {
		e.Args = append(e.Args, randomBytes(rng, p.Bitwidth))
	}
	return e
}

// selectConstants are the values a program's parser selects on, to
// splice into random frames so that they reach more states.
func selectConstants(prog *engine.Program) [][]byte {
	var out [][]byte
	for _, ps := range prog.JSON().Parsers {
		for _, st := range ps.ParseStates {
			for _, tr := range st.Transitions {
				if tr.Type == "hexstr" && tr.Value != nil {
					if v, ok := new(big.Int).SetString(strings.TrimPrefix(*tr.Value, "0x"), 16); ok {
						out = append(out, v.FillBytes(make([]byte, (len(*tr.Value)-2+1)/2)))
					}
				}
			}
		}
	}
	return out
}

// randomFrame is 20 to 120 random bytes with select constants spliced in
// at the offsets of Ethernet's type and IPv4's protocol (and elsewhere).
func randomFrame(rng *rand.Rand, consts [][]byte) []byte {
	f := make([]byte, 20+rng.Intn(100))
	rng.Read(f)
	for _, off := range []int{12, 23, rng.Intn(len(f))} {
		if len(consts) > 0 && rng.Intn(4) != 0 {
			c := consts[rng.Intn(len(consts))]
			if off+len(c) <= len(f) {
				copy(f[off:], c)
			}
		}
	}
	return f
}

type outPacket struct {
	Port uint32
	Data string
}

func run(sw *engine.Switch, port uint32, frame []byte) ([]outPacket, error) {
	var out []outPacket
	err := sw.Process(port, bytes.Clone(frame), func(o engine.Output) {
		out = append(out, outPacket{o.Port, fmt.Sprintf("%x", o.Data)})
	})
	return out, err
}
