// Package diag holds the compiler's diagnostics and formats them like p4c:
//
//	prog.p4:12:9: error: x: undefined name
//	        x = 1;
//	        ^
package diag

import (
	"fmt"
	"strings"

	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
)

// Severity of a diagnostic.
type Severity int

const (
	Error Severity = iota
	// Unsupported marks a construct that is valid P4 but outside the
	// compiler's subset; it fails the compilation like an error.
	Unsupported
	Warning
)

func (s Severity) String() string {
	switch s {
	case Unsupported:
		return "unsupported"
	case Warning:
		return "warning"
	}
	return "error"
}

// Diagnostic is one message at a source position.
type Diagnostic struct {
	Pos      ast.Pos
	Severity Severity
	Msg      string
	// Line is the text of the source line at Pos (without newline), used
	// for the caret display; empty when unknown.
	Line string
}

// String formats the diagnostic on one line: file:line:col: severity: msg.
func (d *Diagnostic) String() string {
	return fmt.Sprintf("%s: %s: %s", d.Pos, d.Severity, d.Msg)
}

// Format returns the one-line form followed, when the source line is
// known, by that line and a caret under the column.
func (d *Diagnostic) Format() string {
	s := d.String()
	if d.Line == "" || d.Pos.Col < 1 {
		return s
	}
	var caret strings.Builder
	for i := 0; i < d.Pos.Col-1 && i < len(d.Line); i++ {
		if d.Line[i] == '\t' {
			caret.WriteByte('\t')
		} else {
			caret.WriteByte(' ')
		}
	}
	// Underline the name, number or access path (a.b[i].c, f(x)) at the
	// column, as p4c underlines the offending node.
	caret.WriteString(strings.Repeat("^", max(1, pathEnd(d.Line, d.Pos.Col-1)-(d.Pos.Col-1))))
	return s + "\n" + d.Line + "\n" + caret.String()
}

// pathEnd returns the index just after the access path starting at
// line[start]: words joined by '.', each optionally followed by balanced
// [...] or (...). A path that does not start with a word is one byte long.
func pathEnd(line string, start int) int {
	if start >= len(line) || !isWordByte(line[start]) {
		return start + 1
	}
	i := start
	for {
		for i < len(line) && (isWordByte(line[i]) || line[i] == '.' && i+1 < len(line) && isWordByte(line[i+1])) {
			i++
		}
		if i >= len(line) || line[i] != '[' && line[i] != '(' {
			return i
		}
		j := closing(line, i)
		if j < 0 {
			return i
		}
		i = j + 1
	}
}

// closing returns the index of the bracket closing the one at line[open],
// or -1 when it is not on this line.
func closing(line string, open int) int {
	depth := 0
	for i := open; i < len(line); i++ {
		switch line[i] {
		case '[', '(':
			depth++
		case ']', ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// Sources maps file names to their contents so diagnostics can show the
// offending line.
type Sources map[string][]byte

// LineOf returns line number line (1-based) of file, or "".
func (s Sources) LineOf(file string, line int) string {
	src, ok := s[file]
	if !ok || line < 1 {
		return ""
	}
	for n := 1; n < line; n++ {
		i := strings.IndexByte(string(src), '\n')
		if i < 0 {
			return ""
		}
		src = src[i+1:]
	}
	if i := strings.IndexByte(string(src), '\n'); i >= 0 {
		src = src[:i]
	}
	return strings.TrimRight(string(src), "\r")
}

// List collects diagnostics. A List with at least one error or unsupported
// diagnostic is returned as the compilation's error.
type List struct {
	Diags   []*Diagnostic
	Sources Sources
	// Max is the number of errors after which Add stops recording (0: 100).
	Max int
}

// Add records a diagnostic.
func (l *List) Add(pos ast.Pos, sev Severity, format string, args ...any) {
	max := l.Max
	if max == 0 {
		max = 100
	}
	if l.ErrorCount() >= max && sev != Warning {
		return
	}
	d := &Diagnostic{Pos: pos, Severity: sev, Msg: fmt.Sprintf(format, args...)}
	if l.Sources != nil {
		d.Line = l.Sources.LineOf(pos.File, pos.Line)
	}
	l.Diags = append(l.Diags, d)
}

// Errorf records an error.
func (l *List) Errorf(pos ast.Pos, format string, args ...any) { l.Add(pos, Error, format, args...) }

// Unsupportedf records an unsupported-construct diagnostic.
func (l *List) Unsupportedf(pos ast.Pos, format string, args ...any) {
	l.Add(pos, Unsupported, format, args...)
}

// Warnf records a warning.
func (l *List) Warnf(pos ast.Pos, format string, args ...any) { l.Add(pos, Warning, format, args...) }

// ErrorCount is the number of error and unsupported diagnostics.
func (l *List) ErrorCount() int {
	n := 0
	for _, d := range l.Diags {
		if d.Severity != Warning {
			n++
		}
	}
	return n
}

// HasErrors reports whether any error or unsupported diagnostic was recorded.
func (l *List) HasErrors() bool { return l.ErrorCount() > 0 }

// Err returns l as an error when it holds errors, else nil.
func (l *List) Err() error {
	if l.HasErrors() {
		return l
	}
	return nil
}

// Error formats every diagnostic with its source line and caret, one
// after another, as p4c prints them.
func (l *List) Error() string {
	parts := make([]string, 0, len(l.Diags))
	for _, d := range l.Diags {
		parts = append(parts, d.Format())
	}
	return strings.Join(parts, "\n")
}

// OnlyUnsupported reports whether every error-level diagnostic is an
// Unsupported one (the program is valid P4 outside our subset).
func (l *List) OnlyUnsupported() bool {
	for _, d := range l.Diags {
		if d.Severity == Error {
			return false
		}
	}
	return l.HasErrors()
}
