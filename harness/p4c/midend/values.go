package midend

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/grid-ina/grid/harness/bmv2json"
	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
)

// val is what a P4 name or l-value denotes after lowering. Scalars live in
// bmv2 fields (or are constants / action data), headers are instances,
// structs are flattened into maps of their fields.
type val interface{ isVal() }

// scalarV is a bit/int/bool/enum/error value. ref is a field reference
// when the value is a location, else an expression (constant, runtime data
// or computed). Booleans stored in fields are 1-bit data; readBool converts.
type scalarV struct {
	ref *bmv2json.Value
	t   ast.Type
	loc bool // ref is a writable field
}

// headerV is a header instance (possibly an element of a stack).
type headerV struct {
	h    *Header
	decl *ast.StructDecl
	// dyn, when set, is an expression producing the header at run time
	// (a stack element with a non-constant index, or hs.last).
	dyn *bmv2json.Value
	// last is the stack of an `hs.last` reference: in parsers its fields
	// are bmv2 stack_field values.
	last *stackV
	// path selects a struct nested inside the header (h.s where s is a
	// struct field); its fields are flattened into the header.
	path []string
}

// stackV is a header stack.
type stackV struct {
	s    *Stack
	decl *ast.StructDecl
	elem []*headerV
}

// unionV is a header union instance; members are its member headers by
// name.
type unionV struct {
	u       *Union
	decl    *ast.StructDecl
	members map[string]*headerV
}

// unionStackV is a stack of header unions.
type unionStackV struct {
	s    *UnionStack
	decl *ast.StructDecl
	elem []*unionV
}

// varbitV is a varbit<W> field: a header field (or the "field" of a
// $varbitW metadata instance holding a varbit local). bmv2 only copies and
// compares such fields, so it is kept apart from scalars.
type varbitV struct {
	ref *bmv2json.Value
	t   *ast.VarbitType
}

// structV is a flattened struct value: each field its own val.
type structV struct {
	decl   *ast.StructDecl
	fields map[string]val
}

// tupleV is a list expression value (only as an argument of hash,
// checksum and log_msg, or a struct initializer before assignment).
type tupleV struct{ elems []val }

// objV is an instance of an extern, parser or control.
type objV struct {
	inst *ast.InstanceDecl
	name string // control-plane name
	typ  *ast.ObjectType
	// lowered artefacts, filled when the extern is allocated.
	reg     *Register
	counter *Counter
	meter   *Meter
	profile *ActionProfile
	// regElem is the element type of a register of something other than
	// bit<W>, int<W> or bool, refused where it is used.
	regElem ast.Type
	// declScope is the scope the instance was declared in, where its
	// constructor arguments are evaluated.
	declScope *scope
}

// vsetV is a parser value set in scope.
type vsetV struct{ set *ValueSet }

func (*vsetV) isVal()       {}
func (*scalarV) isVal()     {}
func (*headerV) isVal()     {}
func (*stackV) isVal()      {}
func (*structV) isVal()     {}
func (*unionV) isVal()      {}
func (*varbitV) isVal()     {}
func (*unionStackV) isVal() {}
func (*tupleV) isVal()      {}
func (*objV) isVal()        {}

// typeInfo describes how a scalar type is stored in bmv2.
type typeInfo struct {
	width  int
	signed bool
	isBool bool
}

// scalarType returns the storage of a scalar type, or ok=false for
// non-scalar types.
func scalarType(t ast.Type) (typeInfo, bool) {
	switch x := t.(type) {
	case *ast.BitsType:
		return typeInfo{width: x.Width, signed: x.Signed}, true
	case *ast.BoolType:
		return typeInfo{width: 1, isBool: true}, true
	case *ast.ErrorType:
		return typeInfo{width: 32}, true
	case *ast.EnumDecl:
		if b := ast.Bits(x, true); b != nil {
			return typeInfo{width: b.Width, signed: b.Signed}, true
		}
		return typeInfo{width: 32}, true
	case *ast.NewType:
		return scalarType(x.Underlying)
	}
	return typeInfo{}, false
}

// hexConst formats v as p4c does: 0x-prefixed, zero-padded to the width's
// nibble count, with a leading minus for negative values.
func hexConst(v *big.Int, width int) string {
	neg := v.Sign() < 0
	a := new(big.Int).Abs(v)
	s := a.Text(16)
	digits := (width + 3) / 4
	if len(s) < digits {
		s = strings.Repeat("0", digits-len(s)) + s
	}
	if neg {
		return "-0x" + s
	}
	return "0x" + s
}

func hexInt(v int64, width int) *bmv2json.Value {
	return bmv2json.Hexstr(hexConst(big.NewInt(v), width))
}

func hexBig(v *big.Int, width int) *bmv2json.Value {
	return bmv2json.Hexstr(hexConst(v, width))
}

// mask returns 2^w - 1.
func mask(w int) *big.Int {
	m := new(big.Int).Lsh(big.NewInt(1), uint(w))
	return m.Sub(m, big.NewInt(1))
}

func maskHex(w int) *bmv2json.Value { return hexBig(mask(w), w) }

// Error is a diagnostic of the lowering: a construct outside the
// compiler's subset (Unsupported) or a program bmv2 cannot run.
type Error struct {
	Pos         ast.Pos
	Unsupported bool
	Msg         string
}

func (e *Error) Error() string {
	kind := "error"
	if e.Unsupported {
		kind = "unsupported"
	}
	return fmt.Sprintf("%s: %s: %s", e.Pos, kind, e.Msg)
}

// unsupported builds the error every construct outside the subset gets.
func unsupported(n ast.Node, format string, args ...any) error {
	var pos ast.Pos
	if n != nil {
		pos = n.Position()
	}
	return &Error{Pos: pos, Unsupported: true, Msg: fmt.Sprintf(format, args...)}
}

// srcError is a plain error at a position (a program the checker accepted
// but that bmv2 cannot run).
// constLocal is the value of a local variable read in e when it is
// initialized with a constant and never written afterwards (p4c's constant
// propagation makes such a header union stack index a constant), else nil.
func (l *lowerer) constLocal(e ast.Expr) *ast.Value {
	id, ok := e.(*ast.Ident)
	if !ok {
		return nil
	}
	vd, ok := id.Decl.(*ast.VarDecl)
	if !ok || vd.Init == nil || vd.Init.Info().Const == nil {
		return nil
	}
	written := false
	root := func(e ast.Expr) bool {
		for {
			switch x := e.(type) {
			case *ast.Ident:
				return x.Decl == vd
			case *ast.Member:
				e = x.X
			case *ast.Index:
				e = x.X
			case *ast.Slice:
				e = x.X
			default:
				return false
			}
		}
	}
	for _, d := range l.prog.Decls {
		ast.Inspect(d, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.AssignStmt:
				written = written || root(x.LHS)
			case *ast.Call:
				for i, arg := range x.Args {
					if i < len(x.ArgParams) && x.ArgParams[i] != nil && x.ArgParams[i].Dir != ast.DirIn && x.ArgParams[i].Dir != ast.DirNone {
						written = written || root(arg.Value)
					}
				}
			}
			return !written
		})
	}
	if written {
		return nil
	}
	return vd.Init.Info().Const
}

// warnf records a warning at n.
func (l *lowerer) warnf(n ast.Node, format string, args ...any) {
	l.out.Warnings = append(l.out.Warnings, Warning{Pos: n.Position(), Msg: fmt.Sprintf(format, args...)})
}

func srcError(n ast.Node, format string, args ...any) error {
	return &Error{Pos: n.Position(), Msg: fmt.Sprintf(format, args...)}
}

// exprOp builds the expression node {"op", "left", "right"}.
func exprOp(op string, l, r *bmv2json.Value) *bmv2json.Value { return bmv2json.Expr(op, l, r) }

func d2b(v *bmv2json.Value) *bmv2json.Value {
	if v.Kind == bmv2json.KindBool {
		return v
	}
	if v.Type == "expression" && v.Kind == bmv2json.KindOp && v.Op.Op == "b2d" {
		return v.Op.Right
	}
	return exprOp("d2b", nil, v)
}

func b2d(v *bmv2json.Value) *bmv2json.Value {
	if v.Kind == bmv2json.KindBool {
		if v.Bool {
			return hexInt(1, 1)
		}
		return hexInt(0, 1)
	}
	if v.Type == "expression" && v.Kind == bmv2json.KindOp && v.Op.Op == "d2b" {
		return v.Op.Right
	}
	return exprOp("b2d", nil, v)
}

// param wraps an expression as a primitive parameter: fields and constants
// are passed as they are, computed values inside an "expression" node.
func param(v *bmv2json.Value) *bmv2json.Value {
	if v.Type == "expression" {
		return bmv2json.Wrap(v)
	}
	return v
}

// prim builds a primitive call.
func prim(op string, params ...*bmv2json.Value) bmv2json.Primitive {
	return bmv2json.Primitive{Op: op, Parameters: params}
}

// isFieldRef reports whether v is a plain field reference.
func isFieldRef(v *bmv2json.Value) bool {
	return v != nil && v.Type == "field" && v.Kind == bmv2json.KindNames
}

// AnnotationInt returns the integer argument of an annotation such as
// @priority(3) or @id(5) (annotation bodies are not type-checked).
func AnnotationInt(an *ast.Annotation) (*big.Int, bool) {
	if an == nil {
		return nil, false
	}
	if len(an.Args) == 1 {
		if v, ok := exprInt(an.Args[0]); ok {
			return v, true
		}
	}
	v, ok := new(big.Int).SetString(strings.TrimSpace(an.Raw), 0)
	return v, ok
}

// exprInt is the value of an integer literal or constant in an annotation.
func exprInt(e ast.Expr) (*big.Int, bool) {
	if c := e.Info().Const; c != nil && c.Int != nil {
		return c.Int, true
	}
	if lit, ok := e.(*ast.IntLit); ok && lit.Value != nil {
		return lit.Value, true
	}
	return nil, false
}

// kindOf names what a value is, for diagnostics.
func kindOf(v val) string {
	switch x := v.(type) {
	case *scalarV:
		if x.loc {
			return "a field"
		}
		return "a computed value"
	case *headerV:
		return "a header"
	case *stackV:
		return "a header stack"
	case *unionV:
		return "a header union"
	case *varbitV:
		return "a varbit field"
	case *unionStackV:
		return "a header union stack"
	case *structV:
		return "a struct"
	case *tupleV:
		return "a list"
	case *objV:
		return "an extern or control instance"
	case *packetV:
		return "a packet"
	}
	return "a value"
}
