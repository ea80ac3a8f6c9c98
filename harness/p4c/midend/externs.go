package midend

import (
	"encoding/json"
	"strings"

	"github.com/grid-ina/grid/harness/bmv2json"
	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
)

// This file lowers extern instances (registers, counters, meters) and
// calls of v1model externs and builtins to bmv2 primitives, calculations
// and field lists.

// allocInstance creates the lowered form of an instance declared in the
// object named prefix.
func (l *lowerer) allocInstance(d *ast.InstanceDecl, prefix string) (*objV, error) {
	key := objKey{decl: d, prefix: prefix}
	if o, ok := l.objs[key]; ok {
		return o, nil
	}
	ot, ok := d.Type.Resolved().(*ast.ObjectType)
	if !ok {
		return nil, unsupported(d, "instance of %v", d.Type.Resolved())
	}
	o := &objV{inst: d, typ: ot, name: cpName(d.Annos, d.Name, prefix)}
	l.objs[key] = o
	ext, ok := ot.Decl.(*ast.ExternDecl)
	if !ok {
		return o, nil // parser/control instance: its scope is built when applied
	}
	intArg := func(i int) (int, error) {
		if i >= len(d.Args) {
			return 0, unsupported(d, "%s without argument %d", ext.Name, i+1)
		}
		v, ok := bigOf(d.Args[i].Value)
		if !ok {
			return 0, unsupported(d.Args[i].Value, "non-constant %s argument", ext.Name)
		}
		return int(v.Int64()), nil
	}
	unitArg := func(i int) (string, error) {
		if i >= len(d.Args) {
			return "", unsupported(d, "%s without a type argument", ext.Name)
		}
		c := d.Args[i].Value.Info().Const
		if c == nil || c.Member == nil {
			return "", unsupported(d.Args[i].Value, "non-constant %s type", ext.Name)
		}
		return c.Member.Name, nil
	}
	switch ext.Name {
	case "register":
		size, err := intArg(0)
		if err != nil {
			return nil, err
		}
		// register<T> or, with V1MODEL_VERSION >= 20200408, register<T, I>:
		// T is the element type either way.
		w := 0
		if len(ot.Args) >= 1 {
			if t, ok := scalarType(ot.Args[0]); ok {
				w = t.width
			}
		}
		if w == 0 {
			if len(ot.Args) >= 1 {
				// As p4c does, refuse it where it is read or written.
				o.regElem = ot.Args[0]
				return o, nil
			}
			return nil, unsupported(d, "register without an element type")
		}
		o.reg = &Register{Name: l.uniqueName(o.name), Pos: d.Pos, Annos: d.Annos, Size: size, Width: w}
		if e, ok := ot.Args[0].(*ast.EnumDecl); ok && e.Underlying != nil {
			o.reg.Enum = e.Name
		}
		l.out.Registers = append(l.out.Registers, o.reg)
	case "counter", "direct_counter":
		c := &Counter{Name: l.uniqueName(o.name), Pos: d.Pos, Annos: d.Annos, Direct: ext.Name == "direct_counter"}
		ui := 1
		if c.Direct {
			ui = 0
		} else {
			size, err := intArg(0)
			if err != nil {
				return nil, err
			}
			c.Size = size
		}
		u, err := unitArg(ui)
		if err != nil {
			return nil, err
		}
		c.Unit = u
		o.counter = c
		l.out.Counters = append(l.out.Counters, c)
	case "meter", "direct_meter":
		m := &Meter{Name: l.uniqueName(o.name), Pos: d.Pos, Annos: d.Annos, Direct: ext.Name == "direct_meter"}
		ui := 1
		if m.Direct {
			ui = 0
		} else {
			size, err := intArg(0)
			if err != nil {
				return nil, err
			}
			m.Size = size
		}
		u, err := unitArg(ui)
		if err != nil {
			return nil, err
		}
		m.Unit = u
		o.meter = m
		l.out.Meters = append(l.out.Meters, m)
	case "action_profile", "action_selector":
		ap := &ActionProfile{Name: l.uniqueName(o.name), Pos: d.Pos, Annos: d.Annos}
		sizeArg := 0
		if ext.Name == "action_selector" {
			if len(d.Args) != 3 {
				return nil, unsupported(d, "action_selector with %d arguments", len(d.Args))
			}
			al, err := l.algo(d.Args[0].Value, d.Args[0].Value)
			if err != nil {
				return nil, err
			}
			ap.Selector = &Selector{Algo: al}
			sizeArg = 1
		}
		size, err := intArg(sizeArg)
		if err != nil {
			return nil, err
		}
		ap.Size = size
		o.profile = ap
		l.out.ActionProfiles = append(l.out.ActionProfiles, ap)
	default:
		return nil, unsupported(d, "extern %s", ext.Name)
	}
	return o, nil
}

func (a *actx) externFunction(c *ast.Call) (val, error) {
	name := c.ExternFunc.Name
	if name == "static_assert" {
		// The front end folded it to true (a false one is an error there).
		return &scalarV{ref: bmv2json.Bool(true), t: ast.TBool}, nil
	}
	if a.inParser && name != "verify" {
		return nil, unsupported(c, "%s in a parser", name)
	}
	switch name {
	case "mark_to_drop":
		if len(c.Args) == 1 {
			v, err := a.argVal(c, 0)
			if err != nil {
				return nil, err
			}
			if h, ok := v.(*headerV); !ok || h.h != a.l.stdMeta {
				// A copy of standard_metadata (an action's inout
				// parameter): do to the copy what the primitive does
				// (drop port 511, no multicast), so the copy-out keeps
				// the drop.
				for _, set := range []struct {
					field string
					val   int64
				}{{"egress_spec", 511}, {"mcast_grp", 0}} {
					fv, err := a.fieldOf(c, v, set.field)
					if err != nil {
						return nil, err
					}
					st, _ := scalarType(fv.t)
					a.emit(prim("assign", fv.ref, hexInt(set.val, st.width)))
				}
				return nil, nil
			}
		}
		a.emit(prim("mark_to_drop", bmv2json.Named("header", a.l.stdMeta.Name)))
		return nil, nil
	case "verify":
		cnd, err := a.cond(c.Args[0].Value)
		if err != nil {
			return nil, err
		}
		e, err := a.argData(c, 1)
		if err != nil {
			return nil, err
		}
		a.emit(prim("verify", param(cnd), param(e)))
		return nil, nil
	case "random":
		dst, err := a.argField(c, 0)
		if err != nil {
			return nil, err
		}
		lo, err := a.argData(c, 1)
		if err != nil {
			return nil, err
		}
		hi, err := a.argData(c, 2)
		if err != nil {
			return nil, err
		}
		a.emit(prim("modify_field_rng_uniform", dst, param(lo), param(hi)))
		return nil, nil
	case "hash":
		return nil, a.hash(c)
	case "clone", "clone3", "clone_preserving_field_list":
		ct := c.Args[0].Value.Info().Const
		if ct == nil || ct.Member == nil {
			return nil, unsupported(c, "clone type that is not a constant")
		}
		sess, err := a.argData(c, 1)
		if err != nil {
			return nil, err
		}
		var fl *bmv2json.Value
		if name == "clone3" {
			fl, err = a.dataFieldList(c, 2)
		} else {
			fl, err = a.fieldList(c, name == "clone_preserving_field_list", 2)
		}
		if err != nil {
			return nil, err
		}
		op := "clone_ingress_pkt_to_egress"
		if ct.Member.Name == "E2E" {
			op = "clone_egress_pkt_to_egress"
		}
		a.emit(prim(op, param(sess), fl))
		return nil, nil
	case "resubmit_preserving_field_list", "recirculate_preserving_field_list":
		fl, err := a.fieldList(c, true, 0)
		if err != nil {
			return nil, err
		}
		a.emit(prim(strings.TrimSuffix(name, "_preserving_field_list"), fl))
		return nil, nil
	case "assert", "assume":
		cnd, err := a.cond(c.Args[0].Value)
		if err != nil {
			return nil, err
		}
		a.emit(prim(name, param(cnd)))
		return nil, nil
	case "resubmit", "recirculate":
		fl, err := a.dataFieldList(c, 0)
		if err != nil {
			return nil, err
		}
		a.emit(prim(name, fl))
		return nil, nil
	case "truncate":
		n, err := a.argData(c, 0)
		if err != nil {
			return nil, err
		}
		a.emit(prim("truncate", param(n)))
		return nil, nil
	case "log_msg":
		return nil, a.logMsg(c)
	case "digest":
		return nil, a.digest(c)
	}
	return nil, unsupported(c, "extern function %s", name)
}

// digest lowers digest(receiver, data) as p4c does: data is copied into
// the temporaries of its type's learn list (bmv2 reads them at the end of
// ingress, so later writes must not change what this call sent), then
// generate_digest names the list.
func (a *actx) digest(c *ast.Call) error {
	recv, err := a.argData(c, 0)
	if err != nil {
		return err
	}
	data := c.Args[1].Value
	v, err := a.value(data)
	if err != nil {
		return err
	}
	type leaf struct {
		name string
		v    *scalarV
	}
	var leaves []leaf
	var walk func(prefix string, v val) error
	walk = func(prefix string, v val) error {
		switch x := v.(type) {
		case *scalarV:
			leaves = append(leaves, leaf{prefix, x})
		case *structV:
			for _, f := range x.decl.Fields {
				if err := walk(f.Name, x.fields[f.Name]); err != nil {
					return err
				}
			}
		case *tupleV:
			for _, e := range x.elems {
				if err := walk("", e); err != nil {
					return err
				}
			}
		default:
			return unsupported(data, "digest of this kind of value")
		}
		return nil
	}
	if err := walk("", v); err != nil {
		return err
	}
	name, structName := "", ""
	if sd, ok := data.Info().Type.(*ast.StructDecl); ok {
		name, structName = sd.Name, sd.Name
	}
	ll := a.l.learn[name]
	if name == "" || ll == nil {
		if name == "" {
			name = a.l.uniqueName("tuple")
		}
		ll = &LearnList{ID: len(a.l.out.LearnLists) + 1, Name: name, Pos: c.Pos, Struct: structName}
		for _, lf := range leaves {
			t := a.l.tempScalar(lf.v.t)
			ll.Elements = append(ll.Elements, t.ref)
			ll.Members = append(ll.Members, LearnMember{Name: lf.name, Type: lf.v.t})
		}
		a.l.learn[name] = ll
		a.l.out.LearnLists = append(a.l.out.LearnLists, ll)
	}
	if len(ll.Elements) != len(leaves) {
		return unsupported(data, "digests of type %s with different shapes", name)
	}
	for i, lf := range leaves {
		a.emitPrim(a.assignPrim(ll.Elements[i], lf.v.ref))
	}
	a.emit(prim("generate_digest", param(recv), hexInt(int64(ll.ID), 0)))
	return nil
}

// fieldList creates the bmv2 field list of a clone/resubmit/recirculate:
// the user metadata fields annotated @field_list(index).
func (a *actx) fieldList(c *ast.Call, hasIndex bool, argi int) (*bmv2json.Value, error) {
	fl := &FieldList{ID: len(a.l.out.FieldLists) + 1, Name: a.l.uniqueName("empty")}
	if hasIndex {
		idx, ok := bigOf(c.Args[argi].Value)
		if !ok {
			return nil, unsupported(c.Args[argi].Value, "field list index that is not a constant")
		}
		fields := a.l.fieldListFields(idx.Int64())
		if len(fields) > 0 {
			a.l.names[fl.Name] = false
			fl.Name = a.l.uniqueName("field_list")
		}
		fl.Elements = fields
	}
	a.l.out.FieldLists = append(a.l.out.FieldLists, fl)
	return hexInt(int64(fl.ID), 0), nil
}

// fieldListFields returns the user metadata fields annotated with
// @field_list(idx).
func (l *lowerer) fieldListFields(idx int64) []*bmv2json.Value {
	var out []*bmv2json.Value
	var walk func(v val, d *ast.StructDecl)
	walk = func(v val, d *ast.StructDecl) {
		sv, ok := v.(*structV)
		if !ok {
			return
		}
		for _, f := range d.Fields {
			fv := sv.fields[f.Name]
			if sub, ok := fv.(*structV); ok {
				walk(sub, sub.decl)
				continue
			}
			an := f.Annos.Get("field_list")
			if an == nil {
				continue
			}
			for _, arg := range an.Args {
				if v, ok := exprInt(arg); ok && v.Int64() == idx {
					if s, ok := fv.(*scalarV); ok {
						out = append(out, s.ref)
					}
				}
			}
		}
	}
	if l.userMeta != nil {
		walk(l.userMeta, l.userMeta.decl)
	}
	return out
}

var hashAlgos = map[string]string{
	"crc32": "crc32", "crc32_custom": "crc32_custom", "crc16": "crc16", "crc16_custom": "crc16_custom",
	"random": "random", "identity": "identity", "csum16": "csum16", "xor16": "xor16",
}

// calcInputs lowers a list expression to calculation inputs; non-field
// elements are first computed into temporaries (bmv2 hashes fields and
// constants only).
func (a *actx) calcInputs(e ast.Expr) ([]bmv2json.CalcInput, error) {
	v, err := a.value(e)
	if err != nil {
		return nil, err
	}
	var out []bmv2json.CalcInput
	var add func(n ast.Node, v val) error
	add = func(n ast.Node, v val) error {
		switch x := v.(type) {
		case *scalarV:
			if isFieldRef(x.ref) {
				out = append(out, calcInput("field", x.ref, nil))
				return nil
			}
			if x.ref.Type == "hexstr" {
				st, _ := scalarType(x.t)
				w := st.width
				out = append(out, calcInput("hexstr", x.ref, &w))
				return nil
			}
			t := a.l.tempScalar(x.t)
			a.emitPrim(a.assignPrim(t.ref, x.ref))
			out = append(out, calcInput("field", t.ref, nil))
		case *varbitV:
			out = append(out, calcInput("field", x.ref, nil))
		case *headerV:
			if x.dyn != nil || len(x.path) > 0 {
				return unsupported(n, "hash or checksum input of this kind")
			}
			for _, f := range a.l.headerFields(x) {
				out = append(out, calcInput("field", bmv2json.Field(x.h.Name, f.name), nil))
			}
		case *structV:
			for _, f := range x.decl.Fields {
				if err := add(n, x.fields[f.Name]); err != nil {
					return err
				}
			}
		case *tupleV:
			for _, el := range x.elems {
				if err := add(n, el); err != nil {
					return err
				}
			}
		default:
			return unsupported(n, "hash or checksum input of this kind")
		}
		return nil
	}
	if err := add(e, v); err != nil {
		return nil, err
	}
	return out, nil
}

func (l *lowerer) algo(n ast.Node, e ast.Expr) (string, error) {
	c := e.Info().Const
	if c == nil || c.Member == nil {
		return "", unsupported(n, "hash algorithm that is not a constant")
	}
	al, ok := hashAlgos[c.Member.Name]
	if !ok {
		return "", unsupported(n, "hash algorithm %s", c.Member.Name)
	}
	return al, nil
}

func (a *actx) hash(c *ast.Call) error {
	if len(c.Args) != 5 {
		return unsupported(c, "hash with %d arguments", len(c.Args))
	}
	dst, err := a.argField(c, 0)
	if err != nil {
		return err
	}
	al, err := a.l.algo(c, c.Args[1].Value)
	if err != nil {
		return err
	}
	base, err := a.argData(c, 2)
	if err != nil {
		return err
	}
	inputs, err := a.calcInputs(c.Args[3].Value)
	if err != nil {
		return err
	}
	max, err := a.argData(c, 4)
	if err != nil {
		return err
	}
	calc := &Calculation{Name: a.l.uniqueName("calc"), Pos: c.Pos, Algo: al, Input: inputs}
	a.l.out.Calculations = append(a.l.out.Calculations, calc)
	a.emit(prim("modify_field_with_hash_based_offset", dst, param(base), bmv2json.Named("calculation", calc.Name), param(max)))
	return nil
}

func (a *actx) logMsg(c *ast.Call) error {
	s, ok := c.Args[0].Value.(*ast.StringLit)
	if !ok {
		return unsupported(c, "log_msg with a non-literal format")
	}
	vec := &bmv2json.Value{Type: "parameters_vector", Kind: bmv2json.KindRaw, Raw: []byte("[]")}
	if len(c.Args) > 1 {
		v, err := a.argVal(c, 1)
		if err != nil {
			return err
		}
		var elems []*bmv2json.Value
		var add func(v val)
		add = func(v val) {
			switch x := v.(type) {
			case *scalarV:
				elems = append(elems, param(x.ref))
			case *tupleV:
				for _, e := range x.elems {
					add(e)
				}
			case *structV:
				for _, f := range x.decl.Fields {
					add(x.fields[f.Name])
				}
			case *headerV:
				if x.dyn == nil && len(x.path) == 0 {
					for _, f := range a.l.headerFields(x) {
						elems = append(elems, bmv2json.Field(x.h.Name, f.name))
					}
				}
			}
		}
		add(v)
		raw, err := marshalValues(elems)
		if err != nil {
			return err
		}
		vec.Raw = raw
	}
	a.emit(prim("log_msg", bmv2json.Named("string", s.Value), vec))
	return nil
}

func (a *actx) externMethod(c *ast.Call) (val, error) {
	recv := c.Receiver()
	m := c.Method
	ext := m.Extern.Name
	switch ext {
	case "packet_in":
		return a.packetIn(c)
	case "packet_out":
		return nil, unsupported(c, "packet_out.%s outside the deparser", m.Name)
	}
	rv, err := a.value(recv)
	if err != nil {
		return nil, err
	}
	o, ok := rv.(*objV)
	if !ok {
		return nil, unsupported(c, "method call on this value")
	}
	if a.inParser {
		return nil, unsupported(c, "%s.%s in a parser", ext, m.Name)
	}
	if o.regElem != nil && (m.Name == "read" || m.Name == "write") {
		arg := c.Args[0].Value
		if m.Name == "write" && len(c.Args) > 1 {
			arg = c.Args[1].Value
		}
		return nil, unsupported(arg, "%s: %s a register of %v (a structure) is not supported on this target; only bit<W>, int<W> and bool", ExprText(arg), map[string]string{"read": "reading", "write": "writing"}[m.Name], o.regElem)
	}
	switch {
	case o.reg != nil && m.Name == "read":
		dst, err := a.argField(c, 0)
		if err != nil {
			return nil, err
		}
		idx, err := a.argData(c, 1)
		if err != nil {
			return nil, err
		}
		a.emit(prim("register_read", dst, bmv2json.Named("register_array", o.reg.Name), param(idx)))
		return nil, nil
	case o.reg != nil && m.Name == "write":
		idx, err := a.argData(c, 0)
		if err != nil {
			return nil, err
		}
		v, err := a.argData(c, 1)
		if err != nil {
			return nil, err
		}
		a.emit(prim("register_write", bmv2json.Named("register_array", o.reg.Name), param(idx), param(v)))
		return nil, nil
	case o.counter != nil && m.Name == "count":
		if o.counter.Direct {
			return nil, nil // bmv2 counts direct counters itself on every hit
		}
		idx, err := a.argData(c, 0)
		if err != nil {
			return nil, err
		}
		a.emit(prim("count", bmv2json.Named("counter_array", o.counter.Name), param(idx)))
		return nil, nil
	case o.meter != nil && !o.meter.Direct && m.Name == "execute_meter":
		idx, err := a.argData(c, 0)
		if err != nil {
			return nil, err
		}
		dst, err := a.argField(c, 1)
		if err != nil {
			return nil, err
		}
		a.emit(prim("execute_meter", bmv2json.Named("meter_array", o.meter.Name), param(idx), dst))
		return nil, nil
	case o.meter != nil && o.meter.Direct && m.Name == "read":
		dst, err := a.argField(c, 0)
		if err != nil {
			return nil, err
		}
		h, f, _ := dst.FieldRef()
		if o.meter.ResultTarget != nil && (o.meter.ResultTarget[0] != h || o.meter.ResultTarget[1] != f) {
			return nil, unsupported(c, "reading direct meter %s into two different locations", o.name)
		}
		o.meter.ResultTarget = []string{h, f}
		return nil, nil
	}
	return nil, unsupported(c, "%s.%s", ext, m.Name)
}

func (a *actx) builtin(c *ast.Call) (val, error) {
	recv := c.Receiver()
	rv, err := a.value(recv)
	if err != nil {
		return nil, err
	}
	switch c.Builtin {
	case "isValid":
		if u, ok := rv.(*unionV); ok {
			return &scalarV{ref: b2d(exprOp("valid_union", nil, bmv2json.Named("header_union", u.u.Name))), t: ast.TBool}, nil
		}
		h, ok := rv.(*headerV)
		if !ok {
			return nil, unsupported(c, "isValid on this value")
		}
		if h.dyn != nil {
			return &scalarV{ref: b2d(exprOp("valid", nil, h.dyn)), t: ast.TBool}, nil
		}
		return &scalarV{ref: bmv2json.Field(h.h.Name, "$valid$"), t: ast.TBool}, nil
	case "setValid", "setInvalid":
		h, ok := rv.(*headerV)
		if !ok || h.last != nil || len(h.path) > 0 {
			return nil, unsupported(c, "%s on this value", c.Builtin)
		}
		op := "add_header"
		if c.Builtin == "setInvalid" {
			op = "remove_header"
		}
		if h.dyn != nil {
			// A stack element chosen at run time, as p4c writes it: the
			// dereference_header_stack expression is the header.
			a.emitPrim(prim(op, param(h.dyn)))
			return nil, nil
		}
		a.emitPrim(prim(op, bmv2json.Named("header", h.h.Name)))
		return nil, nil
	case "push_front", "pop_front":
		st, ok := rv.(*stackV)
		if !ok {
			return nil, unsupported(c, "%s on this value", c.Builtin)
		}
		n, ok := bigOf(c.Args[0].Value)
		if !ok {
			return nil, unsupported(c, "%s count that is not a constant", c.Builtin)
		}
		op := "push"
		if c.Builtin == "pop_front" {
			op = "pop"
		}
		a.emitPrim(prim(op, bmv2json.Named("header_stack", st.s.Name), hexBig(n, 0)))
		return nil, nil
	}
	return nil, unsupported(c, "builtin %s", c.Builtin)
}

func marshalValues(vs []*bmv2json.Value) ([]byte, error) {
	if vs == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(vs)
}

// dataFieldList builds the field list of the deprecated resubmit(data),
// recirculate(data) and clone3(..., data): the fields of argument i, which
// must all be locations (they are re-read when the packet comes back).
func (a *actx) dataFieldList(c *ast.Call, i int) (*bmv2json.Value, error) {
	v, err := a.argVal(c, i)
	if err != nil {
		return nil, err
	}
	var elems []*bmv2json.Value
	var add func(v val) error
	add = func(v val) error {
		switch x := v.(type) {
		case *scalarV:
			if !isFieldRef(x.ref) {
				return unsupported(c.Args[i].Value, "preserved field list entries that are not fields")
			}
			elems = append(elems, x.ref)
		case *structV:
			for _, f := range x.decl.Fields {
				if err := add(x.fields[f.Name]); err != nil {
					return err
				}
			}
		case *tupleV:
			for _, e := range x.elems {
				if err := add(e); err != nil {
					return err
				}
			}
		default:
			return unsupported(c.Args[i].Value, "preserved field list entries of this kind")
		}
		return nil
	}
	if err := add(v); err != nil {
		return nil, err
	}
	fl := &FieldList{ID: len(a.l.out.FieldLists) + 1, Name: a.l.uniqueName("field_list"), Elements: elems}
	a.l.out.FieldLists = append(a.l.out.FieldLists, fl)
	return hexInt(int64(fl.ID), 0), nil
}

// calcInput is a calculation input: its value is the bare payload of v
// ({"type":"field","value":["h","f"]}, not a nested typed value).
func calcInput(typ string, v *bmv2json.Value, width *int) bmv2json.CalcInput {
	bare := *v
	bare.Type = ""
	return bmv2json.CalcInput{Type: typ, Value: &bare, Bitwidth: width}
}

// fieldOf returns field name of a header or struct value.
func (a *actx) fieldOf(n ast.Node, v val, name string) (*scalarV, error) {
	switch x := v.(type) {
	case *headerV:
		if x.h != nil {
			for _, f := range a.l.headerFields(x) {
				if f.name == name {
					return &scalarV{ref: bmv2json.Field(x.h.Name, name), t: f.t, loc: true}, nil
				}
			}
		}
	case *structV:
		if f, ok := x.fields[name].(*scalarV); ok {
			return f, nil
		}
	}
	return nil, unsupported(n, "argument without a field %s", name)
}
