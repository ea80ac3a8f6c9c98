package frontend

import (
	"fmt"
	"os"

	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
	"github.com/grid-ina/grid/harness/p4c/frontend/check"
	"github.com/grid-ina/grid/harness/p4c/frontend/diag"
	"github.com/grid-ina/grid/harness/p4c/frontend/lexer"
	"github.com/grid-ina/grid/harness/p4c/frontend/parser"
	"github.com/grid-ina/grid/harness/p4c/frontend/preproc"
	"github.com/grid-ina/grid/harness/p4c/include"
)

// Options configure Load.
type Options struct {
	// IncludeDirs are extra directories searched by #include (-I).
	IncludeDirs []string
	// Defines are predefined macros (-D NAME=VALUE).
	Defines map[string]string
	// MaxErrors stops collecting diagnostics after this many errors (0: 100).
	MaxErrors int
	// Features enables language features beyond the default subset that
	// the caller's back end can lower (header unions, varbit).
	Features check.Features
}

// Tokens preprocesses src (the contents of file) and returns the tokens
// the parser sees.
func Tokens(file string, src []byte, opts Options, diags *diag.List) []lexer.Token {
	return preproc.Preprocess(file, src, preproc.Options{
		IncludeDirs: opts.IncludeDirs,
		Defines:     opts.Defines,
		StdInclude:  include.Lookup,
	}, diags)
}

// Parse preprocesses and parses src without checking it. The returned
// error, when not nil, is a *diag.List; the program holds whatever parsed.
func Parse(file string, src []byte, opts Options) (*ast.Program, error) {
	prog, diags := run(file, src, opts, false)
	return prog, diags.Err()
}

// ParseFile reads and parses path without checking it.
func ParseFile(path string, opts Options) (*ast.Program, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read P4 source: %w", err)
	}
	return Parse(path, src, opts)
}

// Load reads, preprocesses, parses and checks the P4 program in path. On
// failure the error is a *diag.List (format it with Error(); every
// diagnostic names file, line and column and shows the source line); the
// program is returned only when it checked without errors.
func Load(path string, opts Options) (*ast.Program, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read P4 source: %w", err)
	}
	return LoadSource(path, src, opts)
}

// LoadSource is Load for a program held in memory; file is the name used
// in diagnostics and for resolving relative #include "..." directives.
func LoadSource(file string, src []byte, opts Options) (*ast.Program, error) {
	prog, diags := Compile(file, src, opts)
	if err := diags.Err(); err != nil {
		return nil, err
	}
	return prog, nil
}

// Compile runs the whole front end and returns the program with every
// diagnostic (including warnings). The program is fully checked only when
// diags.HasErrors() is false.
func Compile(file string, src []byte, opts Options) (*ast.Program, *diag.List) {
	return run(file, src, opts, true)
}

// run preprocesses and parses src and, when checking is set and parsing
// succeeded, checks it.
func run(file string, src []byte, opts Options, checking bool) (prog *ast.Program, diags *diag.List) {
	diags = &diag.List{Max: opts.MaxErrors}
	defer func() {
		// A bug in the front end must reach the user as a diagnostic,
		// never crash the program embedding the compiler.
		if r := recover(); r != nil {
			diags.Errorf(ast.Pos{File: file, Line: 1, Col: 1}, "internal compiler error: %v", r)
		}
	}()
	toks := Tokens(file, src, opts, diags)
	prog = parser.Parse(toks, diags)
	if !checking || diags.HasErrors() {
		return prog, diags
	}
	check.Check(prog, diags, opts.Features)
	return prog, diags
}
