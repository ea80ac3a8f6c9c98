package engine

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// randExpr builds a random expression of + - & | ^ over the header's
// operand fields and constants, with p4c-style masks here and there, and
// returns its JSON and its value on unbounded integers (as bmv2 computes).
func randExpr(rng *rand.Rand, depth int, vals map[string]*big.Int) (string, *big.Int) {
	if depth == 0 || rng.IntN(2) == 0 {
		if rng.IntN(3) == 0 {
			c := big.NewInt(rng.Int64N(1 << 40))
			if rng.IntN(4) == 0 {
				c.Neg(c)
			}
			return hexv(fmt.Sprintf("%#x", c)), c
		}
		name := []string{"a", "b", "c", "d", "s"}[rng.IntN(5)]
		return fld("h", name), vals[name]
	}
	if rng.IntN(3) == 0 {
		width := []uint{8, 16, 32, 48}[rng.IntN(4)]
		x, xv := randExpr(rng, depth-1, vals)
		m := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), width), big.NewInt(1))
		return op("&", x, hexv(fmt.Sprintf("%#x", m))), new(big.Int).And(xv, m)
	}
	o := []string{"+", "-", "&", "|", "^"}[rng.IntN(5)]
	l, lv := randExpr(rng, depth-1, vals)
	r, rv := randExpr(rng, depth-1, vals)
	z := new(big.Int)
	switch o {
	case "+":
		z.Add(lv, rv)
	case "-":
		z.Sub(lv, rv)
	case "&":
		z.And(lv, rv)
	case "|":
		z.Or(lv, rv)
	case "^":
		z.Xor(lv, rv)
	}
	return op(o, l, r), z
}

// TestFusedStoresMatchUnboundedArithmetic checks the stores that fuse an
// operation or drop a mask (store, storeLeaf, storeBin) against bmv2's
// rule: evaluate on unbounded integers, keep the destination's low bits.
func TestFusedStoresMatchUnboundedArithmetic(t *testing.T) {
	widths := map[string]uint{"a": 8, "b": 16, "c": 32, "d": 48, "s": 8}
	dsts := []uint{8, 16, 32, 48, 7, 33}
	fields := `["a",8,false],["b",16,false],["c",32,false],["d",48,false],["s",8,true]`
	for i, w := range dsts {
		fields += fmt.Sprintf(`,["z%d",%d,false]`, i, w)
	}
	fields += `,["pad",8,false]` // 14+144+8 bits: whole bytes
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 150 {
		in := make([]byte, 38)
		for i := range 14 {
			in[i] = byte(rng.Uint32())
		}
		vals := map[string]*big.Int{}
		at := 0
		for _, name := range []string{"a", "b", "c", "d", "s"} {
			v := new(big.Int).SetBytes(in[at/8 : at/8+int(widths[name])/8])
			if name == "s" && v.Bit(7) == 1 {
				v.Sub(v, big.NewInt(256))
			}
			vals[name] = v
			at += int(widths[name])
		}
		var prims, exprs []string
		var want []*big.Int
		for i := range dsts {
			e, v := randExpr(rng, 3, vals)
			prims = append(prims, assign(fld("h", fmt.Sprintf("z%d", i)), e))
			exprs = append(exprs, e)
			want = append(want, v)
		}
		p := miniProgram(t, fields, strings.Join(prims, ","), nil)
		out := runMini(t, p, in)
		if len(out) != len(in) {
			t.Fatalf("round %d: output % x", round, out)
		}
		bit := 112
		for i, w := range dsts {
			got := new(big.Int).SetUint64(getBits(out, bit, int(w)))
			m := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), w), big.NewInt(1))
			if exp := new(big.Int).And(want[i], m); got.Cmp(exp) != 0 {
				t.Errorf("round %d: z%d (bit<%d>) = %#x, want %#x for %s", round, i, w, got, exp, exprs[i])
			}
			bit += int(w)
		}
	}
}
