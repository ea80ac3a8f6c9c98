package engine

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/grid-ina/grid/harness/bmv2json"
)

// bmv2 evaluates expressions on unbounded integers (GMP) and wraps a value
// only when it is stored into a field. The engine does the same, exactly:
// each data node carries a bound on its magnitude, and a node whose every
// intermediate value provably fits in an int64 gets a fast int64 closure;
// otherwise it is evaluated with math/big on per-packet scratch values that
// are reused, so neither path allocates per packet once warm.

// fastBits is the largest magnitude bound (|v| < 2^fastBits) evaluated on
// int64: sums and products of such values cannot overflow before the bound
// check rejects them.
const fastBits = 62

// maxShift caps the shift amounts of "<<" on big values: bmv2 would build
// a number of that many bits; p4c always masks the result to the operand
// width, so only absurd programs are affected.
const maxShift = 1 << 16

// dataExpr is a compiled arithmetic expression.
type dataExpr struct {
	bits int  // |value| < 2^bits (for unbounded or unknown, a large number)
	neg  bool // value may be negative
	fast func(k *pkt) int64
	slow func(k *pkt) *big.Int
	// cval is set for constants.
	cval *big.Int
	// fld is set when the expression is a plain field read (for copies).
	fld *field
	// param is set when the expression reads an action parameter.
	param *paramInfo
	// Set on fast expressions whose shape a store fuses into its own
	// closure, saving a call per level (see store): masked is x & maskC,
	// bin is x op y on fast operands, leaf is x op y on field slots.
	masked *dataExpr
	maskC  int64
	bin    *binOp
	leaf   *leafOp
}

// binOp is a fast binary operation whose operands are closures.
type binOp struct {
	op   string
	l, r func(k *pkt) int64
}

// leafOp is a fast binary operation on a field and a field or a constant.
type leafOp struct {
	op     string
	l, r   int // field slots; r is unused when rconst
	c      int64
	rconst bool
}

type exprKind uint8

const (
	kData exprKind = iota
	kBool
	kHeader
	kStack
	kUnion
	kUnionStack
)

// anyExpr is a compiled expression of any type.
type anyExpr struct {
	kind  exprKind
	d     *dataExpr
	b     func(k *pkt) bool
	h     func(k *pkt) int // header instance
	stack int              // static header stack (kStack) or union stack (kUnionStack)
	u     func(k *pkt) int // header union
}

// compiler compiles expressions and primitives of one context (an action,
// a parser state, a conditional) and names it in errors.
type compiler struct {
	p      *Program
	where  string
	params []paramInfo // action parameters, for runtime_data
	pc     int         // index of the primitive being compiled, for jumps
	regs   []int       // registers accessed, sorted (locked while the code runs)
}

type paramInfo struct {
	name  string
	width int
	slot  int // first word in pkt.args
	words int
}

func (c *compiler) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %s", c.where, fmt.Sprintf(format, args...))
}

func (c *compiler) scratch() int {
	c.p.bigScratch++
	return c.p.bigScratch - 1
}

// slowOf returns a big evaluator for e, converting a fast one.
func (c *compiler) slowOf(e *dataExpr) func(k *pkt) *big.Int {
	if e.slow != nil {
		return e.slow
	}
	idx := c.scratch()
	f := e.fast
	e.slow = func(k *pkt) *big.Int { return k.big[idx].SetInt64(f(k)) }
	return e.slow
}

func bitsOf(z *big.Int) int {
	if z.Sign() < 0 {
		return new(big.Int).Neg(z).BitLen() + 1
	}
	return z.BitLen()
}

func (c *compiler) constant(z *big.Int) *dataExpr {
	e := &dataExpr{bits: bitsOf(z), neg: z.Sign() < 0, cval: z}
	if e.bits <= fastBits {
		v := z.Int64()
		e.fast = func(*pkt) int64 { return v }
	}
	idx := c.scratch()
	e.slow = func(k *pkt) *big.Int { return k.big[idx].Set(z) }
	return e
}

func (c *compiler) fieldRead(fi int) *dataExpr {
	c.p.markRead(fi)
	f := &c.p.fields[fi]
	e := &dataExpr{bits: f.width, neg: f.signed, fld: f}
	switch {
	case !f.isValid && !f.signed && f.words == 1 && f.width <= fastBits:
		slot := f.slot
		e.fast = func(k *pkt) int64 { return int64(k.f[slot]) }
	case !f.isValid && f.signed && f.words == 1:
		slot, sh := f.slot, 64-uint(f.width)
		e.fast = func(k *pkt) int64 { return int64(k.f[slot]<<sh) >> sh }
	case f.isValid:
		e.fast = func(k *pkt) int64 { return k.getS(f) }
	default:
		idx := c.scratch()
		e.slow = func(k *pkt) *big.Int { return k.getBig(f, &k.big[idx]) }
	}
	return e
}

// dynFieldRead reads field offset off of a header chosen at run time; all
// candidates share the header type of proto.
func (c *compiler) dynFieldRead(h func(k *pkt) int, proto *header, off int) *dataExpr {
	pf := &c.p.fields[proto.fields[off]]
	c.markFieldOfType(proto, off)
	fields := c.p.fields
	headers := c.p.headers
	e := &dataExpr{bits: pf.width, neg: pf.signed}
	if pf.words == 1 && (pf.width <= fastBits || pf.signed) {
		e.fast = func(k *pkt) int64 { return k.getS(&fields[headers[h(k)].fields[off]]) }
	} else {
		idx := c.scratch()
		e.slow = func(k *pkt) *big.Int { return k.getBig(&fields[headers[h(k)].fields[off]], &k.big[idx]) }
	}
	return e
}

func parseHex(s string) (*big.Int, error) {
	neg := strings.HasPrefix(s, "-")
	t := strings.TrimPrefix(s, "-")
	t = strings.TrimPrefix(strings.TrimPrefix(t, "0x"), "0X")
	if t == "" {
		return nil, fmt.Errorf("empty hex string %q", s)
	}
	z, ok := new(big.Int).SetString(t, 16)
	if !ok {
		return nil, fmt.Errorf("bad hex string %q", s)
	}
	if neg {
		z.Neg(z)
	}
	return z, nil
}

// data compiles an arithmetic expression.
func (c *compiler) data(v *bmv2json.Value) (*dataExpr, error) {
	a, err := c.any(v)
	if err != nil {
		return nil, err
	}
	switch a.kind {
	case kData:
		return a.d, nil
	case kBool:
		return c.boolToData(a.b), nil
	}
	return nil, c.errorf("expected an arithmetic value, got %s", v)
}

func (c *compiler) boolToData(b func(k *pkt) bool) *dataExpr {
	return &dataExpr{bits: 1, fast: func(k *pkt) int64 {
		if b(k) {
			return 1
		}
		return 0
	}}
}

// boolean compiles a boolean expression.
func (c *compiler) boolean(v *bmv2json.Value) (func(k *pkt) bool, error) {
	a, err := c.any(v)
	if err != nil {
		return nil, err
	}
	switch a.kind {
	case kBool:
		return a.b, nil
	case kData:
		return c.dataToBool(a.d), nil
	}
	return nil, c.errorf("expected a boolean, got %s", v)
}

func (c *compiler) dataToBool(d *dataExpr) func(k *pkt) bool {
	if d.fast != nil {
		f := d.fast
		return func(k *pkt) bool { return f(k) != 0 }
	}
	s := d.slow
	return func(k *pkt) bool { return s(k).Sign() != 0 }
}

// headerRef compiles a header-valued expression.
func (c *compiler) headerRef(v *bmv2json.Value) (func(k *pkt) int, *header, error) {
	a, err := c.any(v)
	if err != nil {
		return nil, nil, err
	}
	if a.kind != kHeader {
		return nil, nil, c.errorf("expected a header, got %s", v)
	}
	return a.h, c.protoHeader(v), nil
}

// protoHeader finds a representative header for the type of a header
// expression (all elements of a stack share one type).
func (c *compiler) protoHeader(v *bmv2json.Value) *header {
	for v != nil && v.Kind == bmv2json.KindInner {
		v = v.Inner
	}
	if v == nil {
		return nil
	}
	switch {
	case v.Type == "header" || v.Type == "regular":
		if hi, ok := c.p.headerByName[v.Str]; ok {
			return &c.p.headers[hi]
		}
	case v.Kind == bmv2json.KindOp && v.Op.Op == "dereference_header_stack":
		if v.Op.Left != nil {
			if si, ok := c.p.stackByName[v.Op.Left.Str]; ok {
				return &c.p.headers[c.p.stacks[si].headers[0]]
			}
		}
	case v.Kind == bmv2json.KindOp && v.Op.Op == "access_union_header":
		if v.Op.Right != nil && v.Op.Right.Kind == bmv2json.KindInt {
			if u := c.protoUnion(v.Op.Left); u != nil && v.Op.Right.Int < len(u.headers) {
				return &c.p.headers[u.headers[v.Op.Right.Int]]
			}
		}
	case v.Kind == bmv2json.KindOp && v.Op.Op == "?":
		return c.protoHeader(v.Op.Left)
	}
	return nil
}

func (c *compiler) protoUnion(v *bmv2json.Value) *union {
	for v != nil && v.Kind == bmv2json.KindInner {
		v = v.Inner
	}
	if v == nil {
		return nil
	}
	if v.Type == "header_union" {
		if ui, ok := c.p.unionByName[v.Str]; ok {
			return &c.p.unions[ui]
		}
	}
	if v.Kind == bmv2json.KindOp && v.Op.Op == "dereference_union_stack" && v.Op.Left != nil {
		if si, ok := c.p.unionStackByName[v.Op.Left.Str]; ok {
			return &c.p.unions[c.p.unionStacks[si].unions[0]]
		}
	}
	return nil
}

// any compiles an expression of any type.
func (c *compiler) any(v *bmv2json.Value) (anyExpr, error) {
	if v == nil {
		return anyExpr{}, c.errorf("missing expression")
	}
	switch v.Kind {
	case bmv2json.KindInner:
		return c.any(v.Inner)
	case bmv2json.KindOp:
		return c.op(v.Op)
	}
	switch v.Type {
	case "field":
		if len(v.Names) != 2 {
			return anyExpr{}, c.errorf("field reference %s is not [header, field]", v)
		}
		fi, err := c.p.lookupField(v.Names[0], v.Names[1])
		if err != nil {
			return anyExpr{}, c.errorf("%v", err)
		}
		return anyExpr{kind: kData, d: c.fieldRead(fi)}, nil
	case "hexstr":
		z, err := parseHex(v.Str)
		if err != nil {
			return anyExpr{}, c.errorf("%v", err)
		}
		return anyExpr{kind: kData, d: c.constant(z)}, nil
	case "bool":
		b := v.Bool
		return anyExpr{kind: kBool, b: func(*pkt) bool { return b }}, nil
	case "runtime_data", "local":
		// An action parameter: "runtime_data" as a primitive's own
		// parameter, "local" inside an expression (bmv2's names).
		if v.Kind != bmv2json.KindInt || v.Int < 0 || v.Int >= len(c.params) {
			return anyExpr{}, c.errorf("runtime_data %s: the action has %d parameters", v, len(c.params))
		}
		return anyExpr{kind: kData, d: c.paramRead(c.params[v.Int])}, nil
	case "header", "regular", "header_stack", "stack", "header_union", "header_union_stack", "union_stack":
		return c.namedObject(v)
	case "stack_field":
		last, proto, off, err := c.stackField(v)
		if err != nil {
			return anyExpr{}, err
		}
		return anyExpr{kind: kData, d: c.dynFieldRead(last, proto, off)}, nil
	}
	return anyExpr{}, c.errorf("unsupported expression %s", v)
}

// stackField resolves a "stack_field" reference [stack, field]: the field
// of the stack's last valid element (hdr.s.last.f). It returns the element
// chooser, a representative element and the field's offset in it.
func (c *compiler) stackField(v *bmv2json.Value) (last func(k *pkt) int, proto *header, off int, err error) {
	if len(v.Names) != 2 {
		return nil, nil, 0, c.errorf("stack_field %s is not [stack, field]", v)
	}
	si, ok := c.p.stackByName[v.Names[0]]
	if !ok {
		return nil, nil, 0, c.errorf("unknown header stack %q", v.Names[0])
	}
	st := &c.p.stacks[si]
	proto = &c.p.headers[st.headers[0]]
	for i, fi := range proto.fields {
		if c.p.fields[fi].name == proto.name+"."+v.Names[1] {
			return lastOfStack(st, si), proto, i, nil
		}
	}
	return nil, nil, 0, c.errorf("header stack %q has no field %q", v.Names[0], v.Names[1])
}

// namedObject resolves a header, header stack, header union or union stack
// named by v.
func (c *compiler) namedObject(v *bmv2json.Value) (anyExpr, error) {
	var (
		byName map[string]int
		kind   exprKind
		what   string
	)
	switch v.Type {
	case "header", "regular":
		byName, kind, what = c.p.headerByName, kHeader, "header"
	case "header_stack", "stack":
		byName, kind, what = c.p.stackByName, kStack, "header stack"
	case "header_union":
		byName, kind, what = c.p.unionByName, kUnion, "header union"
	default:
		byName, kind, what = c.p.unionStackByName, kUnionStack, "header union stack"
	}
	i, ok := byName[v.Str]
	if !ok {
		return anyExpr{}, c.errorf("unknown %s %q", what, v.Str)
	}
	self := func(*pkt) int { return i }
	switch kind {
	case kHeader:
		return anyExpr{kind: kind, h: self}, nil
	case kUnion:
		return anyExpr{kind: kind, u: self}, nil
	}
	return anyExpr{kind: kind, stack: i}, nil
}

// lastOfStack returns the last valid element of a stack (element 0 when
// the stack is empty, where bmv2 would abort).
func lastOfStack(st *stack, si int) func(k *pkt) int {
	return func(k *pkt) int {
		n := k.next[si] - 1
		if n < 0 {
			n = 0
		}
		return st.headers[n]
	}
}

func (c *compiler) paramRead(pi paramInfo) *dataExpr {
	e := &dataExpr{bits: pi.width, param: &pi}
	slot := pi.slot
	if pi.words == 1 && pi.width <= fastBits {
		e.fast = func(k *pkt) int64 { return int64(k.args[slot]) }
		return e
	}
	idx := c.scratch()
	words := pi.words
	e.slow = func(k *pkt) *big.Int {
		z := &k.big[idx]
		z.SetUint64(k.args[slot+words-1])
		for i := words - 2; i >= 0; i-- {
			z.Lsh(z, 64)
			z.Or(z, k.tmpA.SetUint64(k.args[slot+i]))
		}
		return z
	}
	return e
}

// constInt returns the value of a constant operand (widths of casts).
func (c *compiler) constInt(v *bmv2json.Value, what string) (int, error) {
	d, err := c.data(v)
	if err != nil {
		return 0, err
	}
	if d.cval == nil || !d.cval.IsInt64() || d.cval.Int64() <= 0 || d.cval.Int64() > 1<<16 {
		return 0, c.errorf("%s must be a positive constant, got %s", what, v)
	}
	return int(d.cval.Int64()), nil
}

func (c *compiler) op(o *bmv2json.Op) (anyExpr, error) {
	switch o.Op {
	case "+", "-", "*", "<<", ">>", "&", "|", "^", "/", "%":
		l, err := c.data(o.Left)
		if err != nil {
			return anyExpr{}, err
		}
		r, err := c.data(o.Right)
		if err != nil {
			return anyExpr{}, err
		}
		d, err := c.arith(o.Op, l, r)
		return anyExpr{kind: kData, d: d}, err
	case "~":
		r, err := c.data(o.Right)
		if err != nil {
			return anyExpr{}, err
		}
		e := &dataExpr{bits: r.bits + 1, neg: true}
		if r.fast != nil && e.bits <= fastBits {
			f := r.fast
			e.fast = func(k *pkt) int64 { return ^f(k) }
		} else {
			rs, idx := c.slowOf(r), c.scratch()
			e.slow = func(k *pkt) *big.Int { return k.big[idx].Not(rs(k)) }
		}
		return anyExpr{kind: kData, d: e}, nil
	case "two_comp_mod", "usat_cast", "sat_cast":
		l, err := c.data(o.Left)
		if err != nil {
			return anyExpr{}, err
		}
		w, err := c.constInt(o.Right, o.Op+" width")
		if err != nil {
			return anyExpr{}, err
		}
		return anyExpr{kind: kData, d: c.cast(o.Op, l, w)}, nil
	case "b2d":
		b, err := c.boolean(o.Right)
		if err != nil {
			return anyExpr{}, err
		}
		return anyExpr{kind: kData, d: c.boolToData(b)}, nil
	case "d2b":
		d, err := c.data(o.Right)
		if err != nil {
			return anyExpr{}, err
		}
		return anyExpr{kind: kBool, b: c.dataToBool(d)}, nil
	case "not":
		b, err := c.boolean(o.Right)
		if err != nil {
			return anyExpr{}, err
		}
		return anyExpr{kind: kBool, b: func(k *pkt) bool { return !b(k) }}, nil
	case "and", "or":
		l, err := c.boolean(o.Left)
		if err != nil {
			return anyExpr{}, err
		}
		r, err := c.boolean(o.Right)
		if err != nil {
			return anyExpr{}, err
		}
		if o.Op == "and" {
			return anyExpr{kind: kBool, b: func(k *pkt) bool { return l(k) && r(k) }}, nil
		}
		return anyExpr{kind: kBool, b: func(k *pkt) bool { return l(k) || r(k) }}, nil
	case "==", "!=", "<", ">", "<=", ">=":
		return c.compare(o)
	case "valid":
		a, err := c.any(o.Right)
		if err != nil {
			return anyExpr{}, err
		}
		switch a.kind {
		case kHeader:
			h := a.h
			return anyExpr{kind: kBool, b: func(k *pkt) bool { return k.valid[h(k)] }}, nil
		case kUnion:
			return anyExpr{kind: kBool, b: c.unionValid(a.u)}, nil
		}
		return anyExpr{}, c.errorf("valid of a non-header %s", o.Right)
	case "valid_union":
		a, err := c.any(o.Right)
		if err != nil {
			return anyExpr{}, err
		}
		if a.kind != kUnion {
			return anyExpr{}, c.errorf("valid_union of a non-union %s", o.Right)
		}
		return anyExpr{kind: kBool, b: c.unionValid(a.u)}, nil
	case "?":
		return c.ternary(o)
	case "dereference_header_stack", "dereference_stack", "dereference_union_stack":
		union := o.Op == "dereference_union_stack"
		a, err := c.any(o.Left)
		if err != nil {
			return anyExpr{}, err
		}
		if a.kind != map[bool]exprKind{false: kStack, true: kUnionStack}[union] {
			return anyExpr{}, c.errorf("%s of %s, which is not a stack of that kind", o.Op, o.Left)
		}
		idx, err := c.data(o.Right)
		if err != nil {
			return anyExpr{}, err
		}
		// the elements: header indices, or union indices for a union stack
		var items []int
		if union {
			items = c.p.unionStacks[a.stack].unions
		} else {
			items = c.p.stacks[a.stack].headers
		}
		ix := c.index(idx, len(items))
		pick := func(k *pkt) int { return items[ix(k)] }
		if union {
			return anyExpr{kind: kUnion, u: pick}, nil
		}
		return anyExpr{kind: kHeader, h: pick}, nil
	case "access_union_header":
		a, err := c.any(o.Left)
		if err != nil {
			return anyExpr{}, err
		}
		u := c.protoUnion(o.Left)
		if a.kind != kUnion || u == nil || o.Right == nil || o.Right.Kind != bmv2json.KindInt || o.Right.Int < 0 || o.Right.Int >= len(u.headers) {
			return anyExpr{}, c.errorf("bad access_union_header %s.%s", o.Left, o.Right)
		}
		off, uf := o.Right.Int, a.u
		unions := c.p.unions
		return anyExpr{kind: kHeader, h: func(k *pkt) int { return unions[uf(k)].headers[off] }}, nil
	case "access_field":
		h, err := c.any(o.Left)
		if err != nil {
			return anyExpr{}, err
		}
		proto := c.protoHeader(o.Left)
		if h.kind != kHeader || proto == nil || o.Right == nil || o.Right.Kind != bmv2json.KindInt || o.Right.Int < 0 || o.Right.Int >= len(proto.fields) {
			return anyExpr{}, c.errorf("bad access_field %s.%s", o.Left, o.Right)
		}
		return anyExpr{kind: kData, d: c.dynFieldRead(h.h, proto, o.Right.Int)}, nil
	case "last_stack_index", "size_stack":
		a, err := c.any(o.Right)
		if err != nil {
			return anyExpr{}, err
		}
		if a.kind != kStack && a.kind != kUnionStack {
			return anyExpr{}, c.errorf("%s of a non-stack %s", o.Op, o.Right)
		}
		si, minus := a.stack, int64(0)
		if o.Op == "last_stack_index" {
			minus = 1
		}
		counts := func(k *pkt) int32 { return k.next[si] }
		if a.kind == kUnionStack {
			counts = func(k *pkt) int32 { return k.unext[si] }
		}
		return anyExpr{kind: kData, d: &dataExpr{bits: 33, neg: true, fast: func(k *pkt) int64 { return int64(counts(k)) - minus }}}, nil
	}
	return anyExpr{}, c.errorf("unsupported expression operator %q", o.Op)
}

func (c *compiler) unionValid(u func(k *pkt) int) func(k *pkt) bool {
	unions := c.p.unions
	return func(k *pkt) bool {
		for _, h := range unions[u(k)].headers {
			if k.valid[h] {
				return true
			}
		}
		return false
	}
}

// index evaluates a stack index, clamped into range: bmv2 aborts on an out
// of range index and p4c guards every index it cannot prove in range.
func (c *compiler) index(d *dataExpr, n int) func(k *pkt) int {
	if d.fast != nil {
		f := d.fast
		return func(k *pkt) int {
			i := f(k)
			if i < 0 || i >= int64(n) {
				return n - 1
			}
			return int(i)
		}
	}
	s := d.slow
	return func(k *pkt) int {
		z := s(k)
		if !z.IsInt64() || z.Int64() < 0 || z.Int64() >= int64(n) {
			return n - 1
		}
		return int(z.Int64())
	}
}

func (c *compiler) arith(op string, l, r *dataExpr) (*dataExpr, error) {
	e := &dataExpr{neg: l.neg || r.neg}
	lf, rf := l.fast, r.fast
	switch op {
	case "+":
		e.bits = max(l.bits, r.bits) + 1
	case "-":
		e.bits, e.neg = max(l.bits, r.bits)+1, true
	case "*":
		e.bits = l.bits + r.bits
	case "<<":
		e.neg = l.neg
		switch {
		case r.cval != nil && r.cval.IsInt64() && r.cval.Int64() >= 0 && r.cval.Int64() < maxShift:
			e.bits = l.bits + int(r.cval.Int64())
		case r.bits < 16 && !r.neg:
			e.bits = l.bits + (1 << uint(r.bits)) - 1
		default:
			e.bits = maxShift
		}
	case ">>":
		e.bits, e.neg = l.bits, l.neg
	case "&":
		switch {
		case !l.neg && !r.neg:
			e.bits = min(l.bits, r.bits)
		case !l.neg:
			e.bits = l.bits
		case !r.neg:
			e.bits = r.bits
		default:
			e.bits = max(l.bits, r.bits)
		}
		e.neg = l.neg && r.neg
	case "|", "^":
		e.bits = max(l.bits, r.bits)
	case "/", "%":
		e.bits, e.neg = l.bits, l.neg
	}
	// x & (2^n-1) with 0 <= x < 2^n is x: p4c masks every result to its
	// width, which is mostly a no-op here.
	if op == "&" {
		if isOnes(r.cval, l) {
			return l, nil
		}
		if isOnes(l.cval, r) {
			return r, nil
		}
	}
	if lf != nil && rf != nil && e.bits <= fastBits && l.bits <= fastBits && r.bits <= fastBits {
		if f, leaf := leafArith(op, l, r); f != nil {
			e.fast, e.leaf = f, leaf
			return e, nil
		}
		if op == "+" || op == "-" || op == "&" || op == "|" || op == "^" {
			e.bin = &binOp{op: op, l: lf, r: rf}
		}
		switch op {
		case "+":
			if r.cval != nil {
				cv := r.cval.Int64()
				e.fast = func(k *pkt) int64 { return lf(k) + cv }
			} else {
				e.fast = func(k *pkt) int64 { return lf(k) + rf(k) }
			}
		case "-":
			e.fast = func(k *pkt) int64 { return lf(k) - rf(k) }
		case "*":
			e.fast = func(k *pkt) int64 { return lf(k) * rf(k) }
		case "<<":
			e.fast = func(k *pkt) int64 { return lf(k) << uint64(rf(k)) }
		case ">>":
			e.fast = func(k *pkt) int64 {
				s := rf(k)
				if s < 0 {
					s = 0
				}
				return lf(k) >> uint64(s)
			}
		case "&":
			if r.cval != nil {
				cv := r.cval.Int64()
				e.fast = func(k *pkt) int64 { return lf(k) & cv }
				e.masked, e.maskC, e.bin = l, cv, nil
			} else {
				e.fast = func(k *pkt) int64 { return lf(k) & rf(k) }
			}
		case "|":
			e.fast = func(k *pkt) int64 { return lf(k) | rf(k) }
		case "^":
			e.fast = func(k *pkt) int64 { return lf(k) ^ rf(k) }
		case "/":
			e.fast = func(k *pkt) int64 {
				d := rf(k)
				if d == 0 {
					return 0
				}
				return lf(k) / d
			}
		case "%":
			e.fast = func(k *pkt) int64 {
				d := rf(k)
				if d == 0 {
					return 0
				}
				return lf(k) % d
			}
		}
		return e, nil
	}
	// A right operand of "&" that is a non-negative constant bounds the
	// result even when the left side is wide; evaluate on big then narrow.
	ls, rs, idx := c.slowOf(l), c.slowOf(r), c.scratch()
	switch op {
	case "+":
		e.slow = func(k *pkt) *big.Int { return k.big[idx].Add(ls(k), rs(k)) }
	case "-":
		e.slow = func(k *pkt) *big.Int { return k.big[idx].Sub(ls(k), rs(k)) }
	case "*":
		e.slow = func(k *pkt) *big.Int { return k.big[idx].Mul(ls(k), rs(k)) }
	case "<<":
		e.slow = func(k *pkt) *big.Int {
			s := rs(k)
			z := &k.big[idx]
			if s.Sign() <= 0 {
				return z.Set(ls(k))
			}
			if !s.IsInt64() || s.Int64() > maxShift {
				return z.SetInt64(0)
			}
			return z.Lsh(ls(k), uint(s.Int64()))
		}
	case ">>":
		e.slow = func(k *pkt) *big.Int {
			s := rs(k)
			z := &k.big[idx]
			a := ls(k)
			if s.Sign() <= 0 {
				return z.Set(a)
			}
			if !s.IsInt64() || s.Int64() > int64(a.BitLen()) {
				if a.Sign() < 0 {
					return z.SetInt64(-1)
				}
				return z.SetInt64(0)
			}
			return z.Rsh(a, uint(s.Int64()))
		}
	case "&":
		e.slow = func(k *pkt) *big.Int { return k.big[idx].And(ls(k), rs(k)) }
	case "|":
		e.slow = func(k *pkt) *big.Int { return k.big[idx].Or(ls(k), rs(k)) }
	case "^":
		e.slow = func(k *pkt) *big.Int { return k.big[idx].Xor(ls(k), rs(k)) }
	case "/", "%":
		div := op == "/"
		e.slow = func(k *pkt) *big.Int {
			a, d := ls(k), rs(k)
			z := &k.big[idx]
			if d.Sign() == 0 {
				return z.SetInt64(0)
			}
			if div {
				return z.Quo(a, d)
			}
			return z.Rem(a, d)
		}
	default:
		return nil, c.errorf("unsupported operator %q", op)
	}
	if e.bits > fastBits {
		// keep the bound meaningful for callers deciding on fast paths
		e.bits = max(e.bits, fastBits+1)
	}
	return e, nil
}

// cast compiles two_comp_mod, usat_cast and sat_cast to width w.
func (c *compiler) cast(op string, l *dataExpr, w int) *dataExpr {
	e := &dataExpr{bits: w, neg: op != "usat_cast"}
	if l.fast != nil && l.bits <= fastBits && w <= 63 {
		lf := l.fast
		sh := uint(64 - w)
		hi, lo := int64(1)<<uint(w-1)-1, -(int64(1) << uint(w-1))
		switch op {
		case "two_comp_mod":
			e.fast = func(k *pkt) int64 { return int64(uint64(lf(k))<<sh) >> sh }
		case "usat_cast":
			top := int64(1)<<uint(w) - 1
			e.fast = func(k *pkt) int64 {
				v := lf(k)
				if v < 0 {
					return 0
				}
				if v > top {
					return top
				}
				return v
			}
		case "sat_cast":
			e.fast = func(k *pkt) int64 {
				v := lf(k)
				if v < lo {
					return lo
				}
				if v > hi {
					return hi
				}
				return v
			}
		}
		return e
	}
	ls, idx := c.slowOf(l), c.scratch()
	one := big.NewInt(1)
	pw := new(big.Int).Lsh(one, uint(w))
	maxU := new(big.Int).Sub(new(big.Int).Lsh(one, uint(w)), one)
	maxS := new(big.Int).Sub(new(big.Int).Lsh(one, uint(w-1)), one)
	minS := new(big.Int).Neg(new(big.Int).Lsh(one, uint(w-1)))
	switch op {
	case "two_comp_mod":
		e.slow = func(k *pkt) *big.Int {
			z := &k.big[idx]
			z.And(ls(k), maxU)
			if z.Cmp(maxS) > 0 {
				z.Sub(z, pw)
			}
			return z
		}
	case "usat_cast":
		e.slow = func(k *pkt) *big.Int {
			z := k.big[idx].Set(ls(k))
			if z.Sign() < 0 {
				return z.SetInt64(0)
			}
			if z.Cmp(maxU) > 0 {
				return z.Set(maxU)
			}
			return z
		}
	case "sat_cast":
		e.slow = func(k *pkt) *big.Int {
			z := k.big[idx].Set(ls(k))
			if z.Cmp(minS) < 0 {
				return z.Set(minS)
			}
			if z.Cmp(maxS) > 0 {
				return z.Set(maxS)
			}
			return z
		}
	}
	return e
}

func (c *compiler) compare(o *bmv2json.Op) (anyExpr, error) {
	l, err := c.any(o.Left)
	if err != nil {
		return anyExpr{}, err
	}
	r, err := c.any(o.Right)
	if err != nil {
		return anyExpr{}, err
	}
	eq := o.Op == "=="
	switch {
	case l.kind == kBool && r.kind == kBool && (o.Op == "==" || o.Op == "!="):
		lb, rb := l.b, r.b
		return anyExpr{kind: kBool, b: func(k *pkt) bool { return (lb(k) == rb(k)) == eq }}, nil
	case l.kind == kHeader && r.kind == kHeader && (o.Op == "==" || o.Op == "!="):
		lh, rh := l.h, r.h
		return anyExpr{kind: kBool, b: func(k *pkt) bool { return k.headersEqual(lh(k), rh(k)) == eq }}, nil
	case l.kind == kUnion && r.kind == kUnion && (o.Op == "==" || o.Op == "!="):
		lu, ru := l.u, r.u
		unions := c.p.unions
		return anyExpr{kind: kBool, b: func(k *pkt) bool {
			a, b := unions[lu(k)].headers, unions[ru(k)].headers
			same := true
			for i := range a {
				if !k.headersEqual(a[i], b[i]) {
					same = false
				}
			}
			return same == eq
		}}, nil
	}
	ld, err := c.data(o.Left)
	if err != nil {
		return anyExpr{}, err
	}
	rd, err := c.data(o.Right)
	if err != nil {
		return anyExpr{}, err
	}
	var test func(cmp int) bool
	switch o.Op {
	case "==":
		test = func(x int) bool { return x == 0 }
	case "!=":
		test = func(x int) bool { return x != 0 }
	case "<":
		test = func(x int) bool { return x < 0 }
	case ">":
		test = func(x int) bool { return x > 0 }
	case "<=":
		test = func(x int) bool { return x <= 0 }
	case ">=":
		test = func(x int) bool { return x >= 0 }
	}
	if f := leafCompare(o.Op, ld, rd); f != nil {
		return anyExpr{kind: kBool, b: f}, nil
	}
	if ld.fast != nil && rd.fast != nil {
		lf, rf := ld.fast, rd.fast
		switch o.Op {
		case "==":
			return anyExpr{kind: kBool, b: func(k *pkt) bool { return lf(k) == rf(k) }}, nil
		case "!=":
			return anyExpr{kind: kBool, b: func(k *pkt) bool { return lf(k) != rf(k) }}, nil
		case "<":
			return anyExpr{kind: kBool, b: func(k *pkt) bool { return lf(k) < rf(k) }}, nil
		case ">":
			return anyExpr{kind: kBool, b: func(k *pkt) bool { return lf(k) > rf(k) }}, nil
		case "<=":
			return anyExpr{kind: kBool, b: func(k *pkt) bool { return lf(k) <= rf(k) }}, nil
		default:
			return anyExpr{kind: kBool, b: func(k *pkt) bool { return lf(k) >= rf(k) }}, nil
		}
	}
	ls, rs := c.slowOf(ld), c.slowOf(rd)
	return anyExpr{kind: kBool, b: func(k *pkt) bool { return test(ls(k).Cmp(rs(k))) }}, nil
}

func (c *compiler) ternary(o *bmv2json.Op) (anyExpr, error) {
	cond, err := c.boolean(o.Cond)
	if err != nil {
		return anyExpr{}, err
	}
	l, err := c.any(o.Left)
	if err != nil {
		return anyExpr{}, err
	}
	r, err := c.any(o.Right)
	if err != nil {
		return anyExpr{}, err
	}
	if l.kind != r.kind {
		if l.kind == kBool && r.kind == kData {
			l = anyExpr{kind: kData, d: c.boolToData(l.b)}
		} else if l.kind == kData && r.kind == kBool {
			r = anyExpr{kind: kData, d: c.boolToData(r.b)}
		} else {
			return anyExpr{}, c.errorf("?: branches of different types")
		}
	}
	switch l.kind {
	case kBool:
		lb, rb := l.b, r.b
		return anyExpr{kind: kBool, b: func(k *pkt) bool {
			if cond(k) {
				return lb(k)
			}
			return rb(k)
		}}, nil
	case kHeader:
		lh, rh := l.h, r.h
		return anyExpr{kind: kHeader, h: func(k *pkt) int {
			if cond(k) {
				return lh(k)
			}
			return rh(k)
		}}, nil
	case kData:
		ld, rd := l.d, r.d
		e := &dataExpr{bits: max(ld.bits, rd.bits), neg: ld.neg || rd.neg}
		if ld.fast != nil && rd.fast != nil {
			lf, rf := ld.fast, rd.fast
			e.fast = func(k *pkt) int64 {
				if cond(k) {
					return lf(k)
				}
				return rf(k)
			}
		} else {
			ls, rs := c.slowOf(ld), c.slowOf(rd)
			e.slow = func(k *pkt) *big.Int {
				if cond(k) {
					return ls(k)
				}
				return rs(k)
			}
		}
		return anyExpr{kind: kData, d: e}, nil
	}
	return anyExpr{}, c.errorf("?: on unsupported operand types")
}

// headersEqual compares two headers as bmv2 does: both invalid are equal.
func (k *pkt) headersEqual(a, b int) bool {
	if !k.valid[a] && !k.valid[b] {
		return true
	}
	if k.valid[a] != k.valid[b] {
		return false
	}
	ha, hb := &k.prog.headers[a], &k.prog.headers[b]
	if len(ha.fields) != len(hb.fields) {
		return false
	}
	for i, fi := range ha.fields {
		fa, fb := &k.prog.fields[fi], &k.prog.fields[hb.fields[i]]
		for w := 0; w < fa.words; w++ {
			if k.f[fa.slot+w] != k.f[fb.slot+w] {
				return false
			}
		}
	}
	return true
}

// store compiles an assignment of e to a field, wrapping to its width.
func (c *compiler) store(f *field, e *dataExpr) func(k *pkt) {
	if f.isValid {
		return nil
	}
	slot, m := f.slot, mask64(f.width)
	// Storing keeps the low width bits, which x & c leaves as in x when
	// c's low width bits are all ones: p4c's masks to the operand width
	// are then no-ops.
	if e.masked != nil && e.masked.fast != nil && f.words == 1 && uint64(e.maskC)&m == m {
		return c.store(f, e.masked)
	}
	if src := e.fld; src != nil && !src.isValid && src.words == f.words && (!src.signed || src.width >= f.width) {
		ss, n := src.slot, f.words
		if n == 1 {
			return func(k *pkt) { k.f[slot] = k.f[ss] & m }
		}
		top := mask64(f.width - 64*(n-1))
		return func(k *pkt) {
			copy(k.f[slot:slot+n], k.f[ss:ss+n])
			k.f[slot+n-1] &= top
		}
	}
	if f.words == 1 {
		switch {
		case e.cval != nil:
			v := truncBig(e.cval) & m
			return func(k *pkt) { k.f[slot] = v }
		case e.param != nil && e.param.words == 1:
			ps := e.param.slot
			return func(k *pkt) { k.f[slot] = k.args[ps] & m }
		case e.leaf != nil:
			if st := storeLeaf(slot, m, e.leaf); st != nil {
				return st
			}
		case e.bin != nil:
			if st := storeBin(slot, m, e.bin); st != nil {
				return st
			}
		}
		if e.fast != nil {
			fe := e.fast
			return func(k *pkt) { k.f[slot] = uint64(fe(k)) & m }
		}
	}
	s := c.slowOf(e)
	return func(k *pkt) { k.setBig(f, s(k)) }
}

// storeLeaf fuses a store into field slot (width mask m) with a leaf
// operation: on unsigned operands below 2^62, uint64 arithmetic keeps the
// same low bits as the int64 arithmetic of the unfused closures.
func storeLeaf(slot int, m uint64, o *leafOp) func(k *pkt) {
	ls, rs := o.l, o.r
	if o.rconst {
		c := uint64(o.c)
		switch o.op {
		case "+":
			return func(k *pkt) { k.f[slot] = (k.f[ls] + c) & m }
		case "-":
			return func(k *pkt) { k.f[slot] = (k.f[ls] - c) & m }
		case "&":
			return func(k *pkt) { k.f[slot] = k.f[ls] & c & m }
		case "|":
			return func(k *pkt) { k.f[slot] = (k.f[ls] | c) & m }
		}
		return nil
	}
	switch o.op {
	case "+":
		return func(k *pkt) { k.f[slot] = (k.f[ls] + k.f[rs]) & m }
	case "-":
		return func(k *pkt) { k.f[slot] = (k.f[ls] - k.f[rs]) & m }
	case "&":
		return func(k *pkt) { k.f[slot] = k.f[ls] & k.f[rs] & m }
	case "|":
		return func(k *pkt) { k.f[slot] = (k.f[ls] | k.f[rs]) & m }
	case "^":
		return func(k *pkt) { k.f[slot] = (k.f[ls] ^ k.f[rs]) & m }
	}
	return nil
}

// storeBin fuses a store with a binary operation on fast operands.
func storeBin(slot int, m uint64, o *binOp) func(k *pkt) {
	lf, rf := o.l, o.r
	switch o.op {
	case "+":
		return func(k *pkt) { k.f[slot] = uint64(lf(k)+rf(k)) & m }
	case "-":
		return func(k *pkt) { k.f[slot] = uint64(lf(k)-rf(k)) & m }
	case "&":
		return func(k *pkt) { k.f[slot] = uint64(lf(k)&rf(k)) & m }
	case "|":
		return func(k *pkt) { k.f[slot] = uint64(lf(k)|rf(k)) & m }
	case "^":
		return func(k *pkt) { k.f[slot] = uint64(lf(k)^rf(k)) & m }
	}
	return nil
}

// isOnes reports whether c is 2^n-1 with n at least the width of the
// non-negative value x.
func isOnes(c *big.Int, x *dataExpr) bool {
	if c == nil || x.neg || c.Sign() <= 0 {
		return false
	}
	n := c.BitLen()
	return c.TrailingZeroBits() == 0 && new(big.Int).Add(c, big.NewInt(1)).TrailingZeroBits() == uint(n) && x.bits <= n
}

// leafSlot returns the slot of an unsigned field read that fits the fast
// path, for the fused closures below.
func leafSlot(e *dataExpr) (int, bool) {
	if f := e.fld; f != nil && !f.isValid && !f.signed && f.words == 1 && f.width <= fastBits {
		return f.slot, true
	}
	return 0, false
}

// leafArith fuses an operator with field and constant operands into one
// closure (the common shapes of p4c's output), or returns nil.
func leafArith(op string, l, r *dataExpr) (func(k *pkt) int64, *leafOp) {
	f := leafArithFunc(op, l, r)
	if f == nil {
		return nil, nil
	}
	ls, _ := leafSlot(l)
	if r.cval != nil {
		return f, &leafOp{op: op, l: ls, c: r.cval.Int64(), rconst: true}
	}
	rs, _ := leafSlot(r)
	return f, &leafOp{op: op, l: ls, r: rs}
}

func leafArithFunc(op string, l, r *dataExpr) func(k *pkt) int64 {
	ls, lok := leafSlot(l)
	if !lok {
		return nil
	}
	if r.cval != nil && r.cval.IsInt64() {
		c := r.cval.Int64()
		switch op {
		case "+":
			return func(k *pkt) int64 { return int64(k.f[ls]) + c }
		case "-":
			return func(k *pkt) int64 { return int64(k.f[ls]) - c }
		case "&":
			return func(k *pkt) int64 { return int64(k.f[ls]) & c }
		case "|":
			return func(k *pkt) int64 { return int64(k.f[ls]) | c }
		case ">>":
			if c >= 0 && c < 64 {
				return func(k *pkt) int64 { return int64(k.f[ls]) >> uint(c) }
			}
		case "<<":
			if c >= 0 && c < 64 {
				return func(k *pkt) int64 { return int64(k.f[ls]) << uint(c) }
			}
		}
		return nil
	}
	rs, rok := leafSlot(r)
	if !rok {
		return nil
	}
	switch op {
	case "+":
		return func(k *pkt) int64 { return int64(k.f[ls]) + int64(k.f[rs]) }
	case "-":
		return func(k *pkt) int64 { return int64(k.f[ls]) - int64(k.f[rs]) }
	case "&":
		return func(k *pkt) int64 { return int64(k.f[ls]) & int64(k.f[rs]) }
	case "|":
		return func(k *pkt) int64 { return int64(k.f[ls]) | int64(k.f[rs]) }
	case "^":
		return func(k *pkt) int64 { return int64(k.f[ls]) ^ int64(k.f[rs]) }
	}
	return nil
}

// leafCompare fuses a comparison of a field with a constant or a field.
func leafCompare(op string, l, r *dataExpr) func(k *pkt) bool {
	ls, lok := leafSlot(l)
	if !lok {
		return nil
	}
	if r.cval != nil && r.cval.IsInt64() {
		c := r.cval.Int64()
		switch op {
		case "==":
			return func(k *pkt) bool { return int64(k.f[ls]) == c }
		case "!=":
			return func(k *pkt) bool { return int64(k.f[ls]) != c }
		case "<":
			return func(k *pkt) bool { return int64(k.f[ls]) < c }
		case ">":
			return func(k *pkt) bool { return int64(k.f[ls]) > c }
		}
		return nil
	}
	rs, rok := leafSlot(r)
	if !rok {
		return nil
	}
	switch op {
	case "==":
		return func(k *pkt) bool { return k.f[ls] == k.f[rs] }
	case "!=":
		return func(k *pkt) bool { return k.f[ls] != k.f[rs] }
	case "<":
		return func(k *pkt) bool { return k.f[ls] < k.f[rs] }
	case ">":
		return func(k *pkt) bool { return k.f[ls] > k.f[rs] }
	}
	return nil
}

// markFieldOfType marks field off of every header of proto's type as read
// (the header is chosen at run time).
func (c *compiler) markFieldOfType(proto *header, off int) {
	for _, h := range c.p.headers {
		if h.typeName == proto.typeName {
			c.p.markRead(h.fields[off])
		}
	}
}
