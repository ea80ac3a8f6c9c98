package engine

import (
	"math/rand/v2"
	"testing"
)

// TestInternetChecksumFromFieldsEqualsPackedChecksum checks the csum16 fast
// path, which sums fields in place, against packing the inputs and running
// csum16 over the bytes, on random values, for inputs of odd widths and
// offsets, an odd total length, a constant and a 64-bit field.
func TestInternetChecksumFromFieldsEqualsPackedChecksum(t *testing.T) {
	fields := `["a",3,false],["b",13,false],["c",7,false],["d",1,false],["e",48,false],["f",64,false],["g",5,false],["s",12,true],["pad",7,false]`
	var inputs string
	for _, f := range []string{"a", "b", "c", "d", "e", "f", "g", "s"} {
		inputs += `{"type":"field","value":["h","` + f + `"]},`
		if f == "c" {
			inputs += `{"type":"hexstr","value":"0x5","bitwidth":11},`
		}
	}
	calcs := `[{"name":"ck","id":0,"algo":"csum16","input":[` + inputs[:len(inputs)-1] + `]}]`
	p := miniProgram(t, fields, "", map[string]string{"calculations": calcs})
	calc := p.calcs["ck"]
	if calc.csum == nil {
		t.Fatal("a static csum16 over fields of at most 64 bits got no fast path")
	}
	packed := *calc
	packed.csum = nil
	k := newPkt(p, nil)
	h := p.headerByName["h"]
	k.valid[h] = true
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		for _, fi := range p.headers[h].fields {
			f := &p.fields[fi]
			v := rng.Uint64()
			switch i % 4 {
			case 0:
				v = 0 // all zero: the sum is 0, not 0xffff
			case 1:
				v = ^uint64(0) // all ones: sums that are multiples of 0xffff
			}
			k.f[f.slot] = v & mask64(f.width)
		}
		if got, want := calc.compute(k), packed.compute(k); got != want {
			t.Fatalf("round %d: checksum from fields %#x, packed %#x", i, got, want)
		}
	}
}
