// Package p4c is the embedded P4_16 compiler for the v1model architecture:
// it turns a P4 program into the two artefacts of `p4c-bm2-ss
// --p4runtime-files`, a bmv2 JSON that simple_switch (and our engine) runs
// and a P4Runtime P4Info. Compile is what the switch back ends, `grid p4c`,
// `grid p4test` and the conformance runner call.
//
// The stages live in sub-packages: frontend (preprocessor, parser, type
// checker), midend (lowering to bmv2's flat model), backend (bmv2 JSON) and
// p4info (P4Info with p4c's IDs).
//
// Beyond what the front end accepts, the lowering handles: sub-controls and
// sub-parsers (also with constructor arguments), functions and
// action-to-action calls with copy-in/copy-out, exit and return (copy-outs
// still run), if-statements in actions (forward jumps) and in parser states
// (state splitting), table applications in expressions and at several
// mutually exclusive places, switch on action_run and on values, header
// stacks (next/last/lastIndex, push/pop, run-time indexes for reads,
// field writes and whole-element writes outside parsers), bit slices as
// out/inout arguments, header unions (members, isValid of the union, union
// assignment, emit; stacks of unions with constant indexes and
// extract(hs.next.member)), varbit fields (extract(h, bits) as extract_VL,
// assignment as assign_VL, ==, emit, checksum inputs, varbit locals), for
// loops (unrolled when the trip count is known at compile time, else a
// backward _jump as p4c emits), lookahead of a whole header, / and % (a
// power-of-two divisor as a shift or mask, like p4c), tuple locals, struct
// initializers with `...`, structs nested in headers, select ranges and
// masks, const entries (exact, lpm, ternary, range, optional, @priority),
// entry priorities (`priority = N`, largest_priority_wins, priority_delta),
// registers, counters, meters (indexed and direct), action profiles and
// selectors, idle timeouts (support_timeout), digests, parser value sets,
// hash, checksums, clone/resubmit/recirculate with field lists, random,
// log_msg, assert/assume, static_assert and truncate, and older P4_16 forms
// p4c's test suite still uses (`table t()`, VerifyChecksum(in H, ...)).
// Named arguments bind by name everywhere. Like p4c it rejects headers that
// are not whole bytes and makes p4c's checks of its error corpus
// (conflicting control-plane names, @defaultonly/@tableonly misuse, ...).
// It reports as unsupported: a table applied twice on one path, generic
// functions, user-defined extern
// functions (bmv2 has none), arrays of non-headers (as p4c-bm2-ss), deparser
// statements other than (validity-guarded) emits, if-statements and loops
// and early returns in functions called from parsers, and run-time indexes
// into stacks of header unions (but for locals never written after a
// constant initializer). Extracts into stack elements chosen at run time
// become a select on the index over one state per element (p4c unrolls
// such parsers to the same effect).
package p4c

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"

	"github.com/grid-ina/grid/harness/bmv2json"
	"github.com/grid-ina/grid/harness/p4c/backend"
	"github.com/grid-ina/grid/harness/p4c/frontend"
	"github.com/grid-ina/grid/harness/p4c/frontend/check"
	"github.com/grid-ina/grid/harness/p4c/frontend/diag"
	"github.com/grid-ina/grid/harness/p4c/midend"
	"github.com/grid-ina/grid/harness/p4c/p4info"
)

// features are the language features beyond the front end's default
// subset that the lowering supports.
var features = check.Features{HeaderUnions: true, Varbit: true, Loops: true}

// Options configure a compilation.
type Options struct {
	// IncludeDirs are searched by #include "..." and <...> after the
	// directory of the including file (-I).
	IncludeDirs []string
	// Defines are predefined macros (-D NAME=VALUE).
	Defines map[string]string
}

// Result is a compiled program.
type Result struct {
	// Name is the program's base name without .p4 (output files are
	// NAME.json, NAME.p4info.txtpb, NAME.p4info.binpb).
	Name string
	// JSON is the bmv2 JSON document.
	JSON []byte
	// Program is the same bmv2 program as a Go value.
	Program *bmv2json.Program
	// P4Info describes the control-plane entities.
	P4Info *p4configv1.P4Info
	// Warnings are the diagnostics that did not fail the compilation, one
	// `file:line:col: warning: ...` each (with its source line and caret).
	Warnings []string
}

// Compile compiles the P4 file at path. Errors are source diagnostics
// (`file:line:col: error: ...` or `file:line:col: unsupported: ...`).
func Compile(path string, opts Options) (*Result, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read P4 source: %w", err)
	}
	prog, diags := frontend.Compile(path, src, frontend.Options{IncludeDirs: opts.IncludeDirs, Defines: opts.Defines, Features: features})
	if err := diags.Err(); err != nil {
		return nil, err
	}
	low, err := midend.Lower(prog, path)
	if err != nil {
		return nil, withSourceLine(err)
	}
	bp, err := backend.Convert(low)
	if err != nil {
		return nil, withSourceLine(err)
	}
	js, err := backend.Marshal(bp)
	if err != nil {
		return nil, err
	}
	info, err := p4info.Build(low)
	if err != nil {
		return nil, fmt.Errorf("%s: P4Info: %w", path, err)
	}
	res := &Result{Name: strings.TrimSuffix(filepath.Base(path), ".p4"), JSON: js, Program: bp, P4Info: info}
	for _, d := range diags.Diags {
		res.Warnings = append(res.Warnings, d.Format())
	}
	for _, w := range low.Warnings {
		l := &diag.List{Sources: diag.Sources{}}
		if src, rerr := os.ReadFile(w.Pos.File); rerr == nil {
			l.Sources[w.Pos.File] = src
		}
		l.Warnf(w.Pos, "%s", w.Msg)
		res.Warnings = append(res.Warnings, l.Error())
	}
	return res, nil
}

// WriteFiles writes NAME.json, NAME.p4info.txtpb and NAME.p4info.binpb
// into dir (created if needed) and returns their paths. On failure the
// files already written are removed again.
func (r *Result) WriteFiles(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create output directory: %w", err)
	}
	txt, err := p4info.MarshalText(r.P4Info)
	if err != nil {
		return nil, err
	}
	bin, err := p4info.MarshalBinary(r.P4Info)
	if err != nil {
		return nil, err
	}
	files := []struct {
		name string
		data []byte
	}{
		{r.Name + ".json", r.JSON},
		{r.Name + ".p4info.txtpb", txt},
		{r.Name + ".p4info.binpb", bin},
	}
	var paths []string
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			for _, done := range paths {
				os.Remove(done)
			}
			return nil, fmt.Errorf("write %s: %w", p, err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// withSourceLine turns a lowering error into a diagnostic list like the
// front end's, which shows the offending source line with a caret.
func withSourceLine(err error) error {
	var me *midend.Error
	if !errors.As(err, &me) {
		return err
	}
	l := &diag.List{Sources: diag.Sources{}}
	if src, rerr := os.ReadFile(me.Pos.File); rerr == nil {
		l.Sources[me.Pos.File] = src
	}
	sev := diag.Error
	if me.Unsupported {
		sev = diag.Unsupported
	}
	l.Add(me.Pos, sev, "%s", me.Msg)
	return l
}
