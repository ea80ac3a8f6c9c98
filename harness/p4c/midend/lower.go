package midend

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/grid-ina/grid/harness/bmv2json"
	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
)

// scope maps declarations (parameters, locals, instances) to what they
// denote in one inlined copy of a parser, control, action or function.
// Declarations are unique pointers, so inlining the same control twice just
// means two scopes binding the same decls differently.
type scope struct {
	parent *scope
	m      map[ast.Decl]val
	// prefix is the control-plane name prefix of objects declared here
	// ("ingress", "ingress.c1").
	prefix string
}

func newScope(parent *scope, prefix string) *scope {
	return &scope{parent: parent, m: map[ast.Decl]val{}, prefix: prefix}
}

func (s *scope) lookup(d ast.Decl) (val, bool) {
	for x := s; x != nil; x = x.parent {
		if v, ok := x.m[d]; ok {
			return v, true
		}
	}
	return nil, false
}

// lowerer holds the program being built and the naming state.
type lowerer struct {
	prog    *ast.Program
	out     *Program
	scalars *HeaderType
	stdMeta *Header
	names   map[string]bool // every bmv2 object name used so far
	headerT map[*ast.StructDecl]*HeaderType
	unionT  map[*ast.StructDecl]*UnionType
	// actions lowered per (declaration, scope): an action declared in a
	// control inlined twice is two actions.
	actions map[actionKey]*Action
	// tables lowered, to reject a table applied twice with different
	// continuations.
	tables map[tableKey]*Table
	// multi are the tables applied at several places.
	multi map[tableKey]*multiApply
	// ctorArgs are the constructor arguments of the V1Switch blocks.
	ctorArgs map[*ast.Param]val
	// learn are the learn lists by digested type name.
	learn map[string]*LearnList
	// objs are the extern instances by declaration and scope prefix.
	objs      map[objKey]*objV
	enumVals  map[*ast.EnumMember]int
	errorVals map[*ast.EnumMember]int
	// override replaces expressions already lowered by the control
	// graph (hit/miss of a hoisted table application).
	override    map[ast.Expr]val
	actionNames map[string]bool
	tableNames  map[string]bool
	scalarNames map[string]bool
	userMeta    *structV
	base        string // file name stem for synthesized names
	nodeSeq     int
	// unrolledCopies counts the loop body copies made so far (maxUnroll).
	unrolledCopies int
}

type actionKey struct {
	decl   *ast.ActionDecl
	prefix string
	bound  string
}

type tableKey struct {
	decl   *ast.TableDecl
	prefix string
}

type objKey struct {
	decl   ast.Decl
	prefix string
}

// Lower lowers a checked program whose main file is source. A bug in the
// lowering surfaces as an "internal compiler error" diagnostic, never as
// a crash of the caller (the switch back ends compile in-process).
func Lower(prog *ast.Program, source string) (_ *Program, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Pos: ast.Pos{File: source}, Msg: fmt.Sprintf("internal compiler error while lowering: %v", r)}
		}
	}()
	l := &lowerer{
		prog:        prog,
		out:         &Program{Source: filepath.Base(source)},
		names:       map[string]bool{},
		headerT:     map[*ast.StructDecl]*HeaderType{},
		unionT:      map[*ast.StructDecl]*UnionType{},
		actions:     map[actionKey]*Action{},
		tables:      map[tableKey]*Table{},
		multi:       map[tableKey]*multiApply{},
		objs:        map[objKey]*objV{},
		learn:       map[string]*LearnList{},
		ctorArgs:    map[*ast.Param]val{},
		enumVals:    map[*ast.EnumMember]int{},
		errorVals:   map[*ast.EnumMember]int{},
		override:    map[ast.Expr]val{},
		actionNames: map[string]bool{},
		tableNames:  map[string]bool{},
		scalarNames: map[string]bool{},
		base:        regexp.MustCompile(`[^A-Za-z0-9]`).ReplaceAllString(strings.TrimSuffix(filepath.Base(source), ".p4"), ""),
	}
	if err := l.run(); err != nil {
		return nil, err
	}
	return l.out, nil
}

// dropUnboundDirectResources removes direct counters and meters no applied
// table uses (their table was never applied): p4c removes them too, and
// bmv2 has nothing to bind them to.
func (l *lowerer) dropUnboundDirectResources() {
	var ctrs []*Counter
	for _, c := range l.out.Counters {
		if !c.Direct || c.Binding != "" {
			ctrs = append(ctrs, c)
		}
	}
	l.out.Counters = ctrs
	var mtrs []*Meter
	for _, m := range l.out.Meters {
		if !m.Direct || m.Binding != "" {
			mtrs = append(mtrs, m)
		}
	}
	l.out.Meters = mtrs
}

// v1modelBlocks are the six V1Switch arguments in order.
var v1modelBlocks = []string{"parser", "verifyChecksum", "ingress", "egress", "computeChecksum", "deparser"}

func (l *lowerer) run() error {
	main := l.prog.Main
	if main == nil {
		return fmt.Errorf("program has no `main` package instance")
	}
	ot, ok := main.Type.Resolved().(*ast.ObjectType)
	if !ok || ot.Decl.DeclName() != "V1Switch" {
		return unsupported(main, "only the v1model V1Switch package is supported (main is %v)", main.Type.Resolved())
	}
	if len(main.Args) != 6 {
		return unsupported(main, "V1Switch with %d arguments (want 6)", len(main.Args))
	}
	blocks := make([]ast.Decl, 6)
	for i, a := range main.Args {
		d, err := l.blockDecl(a.Value)
		if err != nil {
			return err
		}
		blocks[i] = d
	}
	l.numberEnums()

	// The shared state of all six blocks: headers, metadata, standard_metadata.
	l.scalars = &HeaderType{Name: "scalars_0"}
	l.out.HeaderTypes = append(l.out.HeaderTypes, l.scalars)
	l.out.Headers = append(l.out.Headers, &Header{Name: "scalars", Type: l.scalars, Metadata: true})
	l.names["scalars"] = true
	l.names["standard_metadata"] = true // allocated below, after the headers
	pd, ok := blocks[0].(*ast.ParserDecl)
	if !ok {
		return unsupported(main.Args[0], "the first V1Switch argument must be a parser")
	}
	if len(pd.Params) != 4 {
		return unsupported(pd, "v1model parser with %d parameters (want 4)", len(pd.Params))
	}
	hdrs, err := l.allocGlobal(pd.Params[1], "")
	if err != nil {
		return err
	}
	meta, err := l.allocGlobal(pd.Params[2], "userMetadata")
	if err != nil {
		return err
	}
	if sv, ok := meta.(*structV); ok {
		l.userMeta = sv
	}
	smT, ok := pd.Params[3].Type.Resolved().(*ast.StructDecl)
	if !ok {
		return unsupported(pd.Params[3], "standard_metadata parameter of type %v", pd.Params[3].Type.Resolved())
	}
	smType := l.headerType(smT, "standard_metadata")
	l.stdMeta = &Header{Name: "standard_metadata", Type: smType, Metadata: true}
	l.out.Headers = append(l.out.Headers, l.stdMeta)
	std := &headerV{h: l.stdMeta, decl: smT}
	l.collectHeaderDecls()

	shared := map[int]val{1: hdrs, 2: meta, 3: std}
	for i, d := range blocks {
		var err error
		switch i {
		case 0:
			err = l.lowerParser(pd, shared)
		case 1, 4:
			err = l.lowerChecksumControl(d, i == 1, []val{hdrs, meta})
		case 2, 3:
			err = l.lowerPipeline(d, v1modelBlocks[i], []val{hdrs, meta, std})
		case 5:
			err = l.lowerDeparser(d, hdrs)
		}
		if err != nil {
			return err
		}
	}
	l.finishErrors()
	l.dropUnboundDirectResources()
	// Like p4c, keep the scalars header a whole number of bytes.
	total := 0
	for _, f := range l.scalars.Fields {
		total += f.Bitwidth
	}
	if total%8 != 0 {
		l.scalars.Fields = append(l.scalars.Fields, bmv2json.HeaderField{Name: l.uniqueScalar("_padding"), Bitwidth: 8 - total%8})
	}
	return nil
}

// blockDecl resolves a V1Switch argument (`MyParser()` or an instance name)
// to the parser or control declaration.
func (l *lowerer) blockDecl(e ast.Expr) (ast.Decl, error) {
	switch x := e.(type) {
	case *ast.Call:
		d, err := l.blockDecl(x.Fun)
		if err != nil || len(x.Args) == 0 {
			return d, err
		}
		return d, l.topCtorArgs(d, x.Args)
	case *ast.Ident:
		switch d := x.Decl.(type) {
		case *ast.ParserDecl, *ast.ControlDecl:
			return d, nil
		case *ast.InstanceDecl:
			if ot, ok := d.Type.Resolved().(*ast.ObjectType); ok {
				if len(d.Args) == 0 {
					return ot.Decl, nil
				}
				return ot.Decl, l.topCtorArgs(ot.Decl, d.Args)
			}
		}
	}
	return nil, unsupported(e, "V1Switch argument of this form")
}

// topCtorArgs records the constructor arguments of a V1Switch block
// (`MyParser(false)`): compile-time values its body sees as constants.
func (l *lowerer) topCtorArgs(d ast.Decl, args []*ast.Arg) error {
	var params []*ast.Param
	switch x := d.(type) {
	case *ast.ParserDecl:
		params = x.CtorParams
	case *ast.ControlDecl:
		params = x.CtorParams
	}
	if len(params) != len(args) {
		return unsupported(d, "%s with %d constructor arguments (it takes %d)", d.DeclName(), len(args), len(params))
	}
	a := &actx{l: l, sc: newScope(nil, ""), prims: new([]bmv2json.Primitive)}
	for i, p := range params {
		v, err := a.value(args[i].Value)
		if err != nil {
			return err
		}
		if _, ok := v.(*scalarV); !ok || args[i].Value.Info().Const == nil {
			return unsupported(args[i].Value, "constructor argument that is not a compile-time constant")
		}
		l.ctorArgs[p] = v
	}
	return nil
}

// bindTopCtorArgs puts a V1Switch block's constructor arguments in its
// scope.
func (l *lowerer) bindTopCtorArgs(params []*ast.Param, sc *scope) {
	for _, p := range params {
		if v, ok := l.ctorArgs[p]; ok {
			sc.m[p] = v
		}
	}
}

// uniqueName returns base or base_N, whichever is still free.
func (l *lowerer) uniqueName(base string) string {
	if !l.names[base] {
		l.names[base] = true
		return base
	}
	for i := 0; ; i++ {
		n := fmt.Sprintf("%s_%d", base, i)
		if !l.names[n] {
			l.names[n] = true
			return n
		}
	}
}

// headerType returns the bmv2 header type of a header or struct
// declaration, creating it on first use.
func (l *lowerer) headerType(d *ast.StructDecl, name string) *HeaderType {
	if ht, ok := l.headerT[d]; ok {
		return ht
	}
	ht := &HeaderType{Name: name, flat: map[string]string{}}
	total, varbits := 0, 0
	var add func(fields []*ast.Field, path []string)
	add = func(fields []*ast.Field, path []string) {
		for _, f := range fields {
			ft := f.Type.Resolved()
			if sd, ok := ft.(*ast.StructDecl); ok && sd.Kind == ast.KindStruct {
				add(sd.Fields, append(append([]string(nil), path...), f.Name))
				continue
			}
			if vb, ok := ft.(*ast.VarbitType); ok {
				ht.Fields = append(ht.Fields, bmv2json.HeaderField{Name: f.Name, Varbit: true})
				ht.types = append(ht.types, ft)
				varbits += vb.MaxWidth
				continue
			}
			ti, ok := scalarType(ft)
			if !ok {
				// Checked by callers (headers hold only scalars); skip defensively.
				continue
			}
			name := f.Name
			if len(path) > 0 {
				// p4c's naming of fields flattened out of nested structs.
				name = fmt.Sprintf("_%s_%s%d", strings.Join(path, "_"), f.Name, len(ht.Fields))
				ht.flat[strings.Join(append(append([]string(nil), path...), f.Name), ".")] = name
			}
			ht.Fields = append(ht.Fields, bmv2json.HeaderField{Name: name, Bitwidth: ti.width, Signed: ti.signed})
			ht.types = append(ht.types, ft)
			total += ti.width
		}
	}
	add(d.Fields, nil)
	if varbits > 0 {
		ht.MaxLength = (total + varbits) / 8
	}
	if d.Kind != ast.KindHeader && total%8 != 0 {
		// bmv2 wants metadata types to be whole bytes, as p4c pads them.
		ht.Fields = append(ht.Fields, bmv2json.HeaderField{Name: "_padding", Bitwidth: 8 - total%8})
	}
	l.headerT[d] = ht
	l.out.HeaderTypes = append(l.out.HeaderTypes, ht)
	return ht
}

// collectHeaderDecls records @controller_header types for P4Info.
func (l *lowerer) collectHeaderDecls() {
	for _, d := range l.prog.Decls {
		sd, ok := d.(*ast.StructDecl)
		if !ok || sd.Kind != ast.KindHeader || sd.Annos.Get("controller_header") == nil {
			continue
		}
		name, _ := sd.Annos.StringArg("controller_header")
		ch := &ControllerHeader{Name: name, Annos: sd.Annos}
		var add func(prefix string, fields []*ast.Field)
		add = func(prefix string, fields []*ast.Field) {
			for _, f := range fields {
				ft := f.Type.Resolved()
				if inner, ok := ft.(*ast.StructDecl); ok && inner.Kind == ast.KindStruct {
					add(prefix+f.Name+".", inner.Fields) // p4c names them "s.f"
					continue
				}
				ti, _ := scalarType(ft)
				cf := ControllerField{Name: prefix + f.Name, Width: ti.width, Annos: f.Annos}
				if e, ok := ft.(*ast.EnumDecl); ok && e.Underlying != nil {
					cf.Enum = e.Name
				}
				ch.Fields = append(ch.Fields, cf)
			}
		}
		add("", sd.Fields)
		l.out.ControllerHeaders = append(l.out.ControllerHeaders, ch)
	}
}

// allocGlobal allocates the storage of a v1model parameter shared by all
// blocks: the headers struct becomes header instances named after the
// fields, the metadata struct becomes fields of scalars.
func (l *lowerer) allocGlobal(p *ast.Param, scalarPrefix string) (val, error) {
	t := p.Type.Resolved()
	if sd, ok := t.(*ast.StructDecl); ok && sd.Kind == ast.KindStruct {
		return l.alloc(p, t, "", scalarPrefix)
	}
	// A bare header (or scalar) instead of the usual struct: name it
	// after the parameter.
	return l.alloc(p, t, p.Name, p.Name)
}

// alloc creates storage for a value of type t: header instances are named
// instName (dotted paths flattened with '_'), scalars become fields of the
// scalars header named scalarName.
func (l *lowerer) alloc(n ast.Node, t ast.Type, instName, scalarName string) (val, error) {
	join := func(a, b, sep string) string {
		if a == "" {
			return b
		}
		return a + sep + b
	}
	if ti, ok := scalarType(t); ok {
		name := l.uniqueScalar(scalarName)
		l.scalars.Fields = append(l.scalars.Fields, bmv2json.HeaderField{Name: name, Bitwidth: ti.width, Signed: ti.signed})
		return &scalarV{ref: bmv2json.Field("scalars", name), t: t, loc: true}, nil
	}
	switch x := t.(type) {
	case *ast.StructDecl:
		switch x.Kind {
		case ast.KindHeader:
			if err := checkHeaderFields(x.Fields); err != nil {
				return nil, err
			}
			ht := l.headerType(x, x.Name)
			if err := checkByteAligned(x, ht); err != nil {
				return nil, err
			}
			h := &Header{Name: l.uniqueName(instName), Type: ht}
			l.out.Headers = append(l.out.Headers, h)
			return &headerV{h: h, decl: x}, nil
		case ast.KindHeaderUnion:
			return l.allocUnion(x, l.uniqueName(instName))
		}
		sv := &structV{decl: x, fields: map[string]val{}}
		for _, f := range x.Fields {
			v, err := l.alloc(f, f.Type.Resolved(), join(instName, f.Name, "_"), join(scalarName, f.Name, "."))
			if err != nil {
				return nil, err
			}
			sv.fields[f.Name] = v
		}
		return sv, nil
	case *ast.StackType:
		ed, ok := x.Elem.(*ast.StructDecl)
		if ok && ed.Kind == ast.KindHeaderUnion {
			return l.allocUnionStack(ed, l.uniqueName(instName), x.Size)
		}
		if !ok || ed.Kind != ast.KindHeader {
			return nil, unsupported(n, "stack of %v", x.Elem)
		}
		ht := l.headerType(ed, ed.Name)
		if err := checkByteAligned(ed, ht); err != nil {
			return nil, err
		}
		st := &Stack{Name: l.uniqueName(instName), Type: ht}
		sv := &stackV{s: st, decl: ed}
		for i := 0; i < x.Size; i++ {
			h := &Header{Name: l.uniqueName(fmt.Sprintf("%s[%d]", st.Name, i)), Type: ht}
			l.out.Headers = append(l.out.Headers, h)
			st.Elems = append(st.Elems, h)
			sv.elem = append(sv.elem, &headerV{h: h, decl: ed})
		}
		l.out.Stacks = append(l.out.Stacks, st)
		return sv, nil
	case *ast.TupleType:
		tv := &tupleV{}
		for i, et := range x.Elems {
			v, err := l.alloc(n, et, join(instName, fmt.Sprint(i), "_"), join(scalarName, fmt.Sprint(i), "_"))
			if err != nil {
				return nil, err
			}
			tv.elems = append(tv.elems, v)
		}
		return tv, nil
	case *ast.VarbitType:
		// Like p4c: a varbit outside a header lives in the "field" of a
		// metadata instance of a one-field header type $varbitW.
		name := instName
		if name == "" {
			name = strings.ReplaceAll(scalarName, ".", "_")
		}
		h := &Header{Name: l.uniqueName(name), Type: l.varbitHolder(x), Metadata: true}
		l.out.Headers = append(l.out.Headers, h)
		return &varbitV{ref: bmv2json.Field(h.Name, "field"), t: x}, nil
	}
	return nil, unsupported(n, "storage of type %v", t)
}

// unionType returns the bmv2 header union type of a header_union
// declaration, creating it (and its members' header types) on first use.
func (l *lowerer) unionType(d *ast.StructDecl) *UnionType {
	if ut, ok := l.unionT[d]; ok {
		return ut
	}
	ut := &UnionType{Name: d.Name}
	for _, f := range d.Fields {
		hd := f.Type.Resolved().(*ast.StructDecl) // the checker allows only headers in unions
		ut.Members = append(ut.Members, UnionMember{Name: f.Name, Type: l.headerType(hd, hd.Name)})
	}
	l.unionT[d] = ut
	l.out.UnionTypes = append(l.out.UnionTypes, ut)
	return ut
}

// allocUnion creates the union instance name with one header instance per
// member, named "name.member" as p4c names them.
func (l *lowerer) allocUnion(d *ast.StructDecl, name string) (*unionV, error) {
	ut := l.unionType(d)
	u := &Union{Name: name, Type: ut}
	uv := &unionV{u: u, decl: d, members: map[string]*headerV{}}
	for i, f := range d.Fields {
		hd := f.Type.Resolved().(*ast.StructDecl)
		if err := checkHeaderFields(hd.Fields); err != nil {
			return nil, err
		}
		if err := checkByteAligned(hd, ut.Members[i].Type); err != nil {
			return nil, err
		}
		h := &Header{Name: l.uniqueName(name + "." + f.Name), Type: ut.Members[i].Type}
		l.out.Headers = append(l.out.Headers, h)
		u.Members = append(u.Members, h)
		uv.members[f.Name] = &headerV{h: h, decl: hd}
	}
	l.out.Unions = append(l.out.Unions, u)
	return uv, nil
}

// allocUnionStack creates a stack of size header unions named name[i].
func (l *lowerer) allocUnionStack(d *ast.StructDecl, name string, size int) (*unionStackV, error) {
	st := &UnionStack{Name: name, Type: l.unionType(d)}
	sv := &unionStackV{s: st, decl: d}
	for i := 0; i < size; i++ {
		uv, err := l.allocUnion(d, l.uniqueName(fmt.Sprintf("%s[%d]", name, i)))
		if err != nil {
			return nil, err
		}
		st.Elems = append(st.Elems, uv.u)
		sv.elem = append(sv.elem, uv)
	}
	l.out.UnionStacks = append(l.out.UnionStacks, st)
	return sv, nil
}

// varbitHolder returns the header type $varbitW whose only field is a
// varbit<W>, creating it on first use.
func (l *lowerer) varbitHolder(t *ast.VarbitType) *HeaderType {
	name := fmt.Sprintf("$varbit%d", t.MaxWidth)
	for _, ht := range l.out.HeaderTypes {
		if ht.Name == name {
			return ht
		}
	}
	ht := &HeaderType{Name: name, Fields: []bmv2json.HeaderField{{Name: "field", Varbit: true}}, types: []ast.Type{t}, MaxLength: t.MaxWidth / 8}
	l.out.HeaderTypes = append(l.out.HeaderTypes, ht)
	return ht
}

// checkByteAligned rejects a header bmv2 cannot hold: its fixed-width
// fields must add up to whole bytes (p4c's bmv2 back end rejects it too).
func checkByteAligned(d *ast.StructDecl, ht *HeaderType) error {
	bits := 0
	for _, f := range ht.Fields {
		bits += f.Bitwidth
	}
	if bits%8 != 0 {
		return &Error{Pos: d.Pos, Msg: fmt.Sprintf("header %s has %d bits of fixed-width fields; bmv2 headers must be a multiple of 8 bits", d.Name, bits)}
	}
	return nil
}

// hasVarbit reports whether a header type has a varbit field.
func hasVarbit(ht *HeaderType) bool { return ht.MaxLength > 0 }

// uniqueScalar returns a fresh field name in the scalars header.
func (l *lowerer) uniqueScalar(base string) string {
	if base == "" {
		base = "tmp"
	}
	if !l.scalarNames[base] {
		l.scalarNames[base] = true
		return base
	}
	for i := 0; ; i++ {
		n := fmt.Sprintf("%s_%d", base, i)
		if !l.scalarNames[n] {
			l.scalarNames[n] = true
			return n
		}
	}
}

// tempScalar allocates a compiler temporary of type t.
func (l *lowerer) tempScalar(t ast.Type) *scalarV {
	ti, ok := scalarType(t)
	if _, lit := t.(*ast.IntLitType); lit {
		ti, ok = typeInfo{width: 32}, true
	}
	if !ok {
		// Callers pass scalar types; a non-scalar here is a lowering bug,
		// reported as an internal compiler error rather than a wrong width.
		panic(fmt.Sprintf("temporary of non-scalar type %v", t))
	}
	name := l.uniqueScalar("tmp")
	l.scalars.Fields = append(l.scalars.Fields, bmv2json.HeaderField{Name: name, Bitwidth: ti.width, Signed: ti.signed})
	return &scalarV{ref: bmv2json.Field("scalars", name), t: t, loc: true}
}

// numberEnums assigns the integer codes of errors and plain enums: errors
// in declaration order (NoError = 0 as core.p4 declares it first), enum
// members by position.
func (l *lowerer) numberEnums() {
	for i, m := range l.prog.Errors {
		l.errorVals[m] = i
	}
	for _, d := range l.prog.Decls {
		ed, ok := d.(*ast.EnumDecl)
		if !ok {
			continue
		}
		for i, m := range ed.Members {
			l.enumVals[m] = i
		}
		if ed.Underlying != nil {
			e := bmv2json.Enum{Name: ed.Name}
			st, _ := scalarType(ed)
			se := &SerEnum{Name: ed.Name, Width: st.width}
			for _, m := range ed.Members {
				if c := m.Value.Info().Const; c != nil && c.Int != nil {
					e.Entries = append(e.Entries, bmv2json.NamedValue{Name: m.Name, Value: int(c.Int.Int64())})
					se.Members = append(se.Members, SerEnumMember{Name: m.Name, Value: c.Int})
				}
			}
			l.out.Enums = append(l.out.Enums, e)
			l.out.SerEnums = append(l.out.SerEnums, se)
		}
	}
}

func (l *lowerer) finishErrors() {
	for i, m := range l.prog.Errors {
		l.out.Errors = append(l.out.Errors, bmv2json.NamedValue{Name: m.Name, Value: i})
	}
}

// checkHeaderFields accepts scalars and structs of scalars in headers.
func checkHeaderFields(fields []*ast.Field) error {
	for _, f := range fields {
		ft := f.Type.Resolved()
		if sd, ok := ft.(*ast.StructDecl); ok && sd.Kind == ast.KindStruct {
			if err := checkHeaderFields(sd.Fields); err != nil {
				return err
			}
			continue
		}
		if _, ok := ft.(*ast.VarbitType); ok {
			continue
		}
		if _, ok := scalarType(ft); !ok {
			return unsupported(f, "header field of type %v", ft)
		}
	}
	return nil
}

// hfield is a (flattened) field of a header.
type hfield struct {
	name string
	t    ast.Type
}

// headerFields lists the bmv2 fields of a header value.
func (l *lowerer) headerFields(h *headerV) []hfield {
	ht := l.headerT[h.decl]
	if ht == nil {
		ht = l.headerType(h.decl, h.decl.Name)
	}
	out := make([]hfield, len(ht.types))
	for i, t := range ht.types {
		out[i] = hfield{name: ht.Fields[i].Name, t: t}
	}
	return out
}
