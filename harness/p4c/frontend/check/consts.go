package check

import (
	"math/big"

	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
)

func intValue(v *big.Int) *ast.Value { return &ast.Value{Kind: ast.ValInt, Int: v} }

func boolValue(b bool) *ast.Value { return &ast.Value{Kind: ast.ValBool, Bool: b} }

// normalize wraps an integer constant to the range of t when t is bit<W>
// or int<W>; other values are returned unchanged.
func normalize(v *ast.Value, t ast.Type) *ast.Value {
	if v == nil || v.Kind != ast.ValInt {
		return v
	}
	if b := ast.Bits(t, false); b != nil {
		w, _ := wrap(v.Int, b)
		return intValue(w)
	}
	return v
}

// constBits is the unsigned bit pattern of an integer constant of type t
// (two's complement for int<W>).
func constBits(v *big.Int, t *ast.BitsType) *big.Int {
	w, _ := wrap(v, &ast.BitsType{Width: t.Width})
	return w
}

// foldBinary computes x op y for constants of result type t (operands
// already converted to the operand type ot). A non-empty message explains
// why the operation has no constant result (division by zero ...); a nil
// value with no message means the operator is not folded here (++ is
// folded by the caller, which knows both widths).
func foldBinary(op ast.BinaryOp, x, y *ast.Value, ot, t ast.Type) (*ast.Value, string) {
	if x == nil || y == nil {
		return nil, ""
	}
	switch op {
	case ast.OpAnd:
		return boolValue(x.Bool && y.Bool), ""
	case ast.OpOr:
		return boolValue(x.Bool || y.Bool), ""
	case ast.OpEq, ast.OpNe:
		eq := valuesEqual(x, y)
		return boolValue(eq == (op == ast.OpEq)), ""
	}
	if x.Kind != ast.ValInt || y.Kind != ast.ValInt {
		return nil, ""
	}
	a, b := x.Int, y.Int
	r := new(big.Int)
	bt := ast.Bits(ot, false)
	switch op {
	case ast.OpAdd:
		r.Add(a, b)
	case ast.OpSub:
		r.Sub(a, b)
	case ast.OpMul:
		r.Mul(a, b)
	case ast.OpDiv, ast.OpMod:
		if b.Sign() == 0 {
			return nil, "division by zero"
		}
		if a.Sign() < 0 || b.Sign() < 0 {
			return nil, "division and modulo are not defined for negative values"
		}
		if op == ast.OpDiv {
			r.Quo(a, b)
		} else {
			r.Rem(a, b)
		}
	case ast.OpAddSat, ast.OpSubSat:
		if op == ast.OpAddSat {
			r.Add(a, b)
		} else {
			r.Sub(a, b)
		}
		if bt != nil {
			lo, hi := bitsRange(bt)
			if r.Cmp(lo) < 0 {
				r.Set(lo)
			} else if r.Cmp(hi) > 0 {
				r.Set(hi)
			}
		}
	case ast.OpBitAnd, ast.OpBitOr, ast.OpBitXor:
		aa, bb := a, b
		if bt != nil {
			aa, bb = constBits(a, bt), constBits(b, bt)
		}
		switch op {
		case ast.OpBitAnd:
			r.And(aa, bb)
		case ast.OpBitOr:
			r.Or(aa, bb)
		default:
			r.Xor(aa, bb)
		}
	case ast.OpShl, ast.OpShr:
		if b.Sign() < 0 {
			return nil, "negative shift amount"
		}
		n := uint(4096)
		if b.IsInt64() && b.Int64() < 4096 {
			n = uint(b.Int64())
		}
		if op == ast.OpShl {
			if bt == nil && n >= 4096 {
				return nil, "shift amount too large"
			}
			if bt != nil && n >= uint(bt.Width) {
				n = uint(bt.Width) // all bits shifted out
			}
			r.Lsh(a, n)
		} else {
			r.Rsh(a, n) // arithmetic for negative values (big.Int floors)
		}
	case ast.OpLt:
		return boolValue(a.Cmp(b) < 0), ""
	case ast.OpLe:
		return boolValue(a.Cmp(b) <= 0), ""
	case ast.OpGt:
		return boolValue(a.Cmp(b) > 0), ""
	case ast.OpGe:
		return boolValue(a.Cmp(b) >= 0), ""
	default:
		return nil, ""
	}
	return normalize(intValue(r), t), ""
}

func bitsRange(t *ast.BitsType) (lo, hi *big.Int) {
	if t.Signed {
		hi = new(big.Int).Lsh(big.NewInt(1), uint(t.Width-1))
		lo = new(big.Int).Neg(hi)
		hi.Sub(hi, big.NewInt(1))
		return lo, hi
	}
	hi = new(big.Int).Lsh(big.NewInt(1), uint(t.Width))
	hi.Sub(hi, big.NewInt(1))
	return big.NewInt(0), hi
}

func valuesEqual(x, y *ast.Value) bool {
	if x.Kind != y.Kind {
		// A serializable enum member compared with a number of its
		// underlying type: compare the numbers.
		numeric := func(v *ast.Value) bool { return v.Kind == ast.ValInt || v.Kind == ast.ValEnum && v.Int != nil }
		return numeric(x) && numeric(y) && x.Int.Cmp(y.Int) == 0
	}
	switch x.Kind {
	case ast.ValInt:
		return x.Int.Cmp(y.Int) == 0
	case ast.ValBool:
		return x.Bool == y.Bool
	case ast.ValString:
		return x.Str == y.Str
	case ast.ValError, ast.ValEnum:
		return x.Member == y.Member
	case ast.ValTuple:
		if len(x.Elems) != len(y.Elems) {
			return false
		}
		for i := range x.Elems {
			if !valuesEqual(x.Elems[i], y.Elems[i]) {
				return false
			}
		}
		return true
	}
	return false
}
