package lp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cbcProgram is the CBC program looked up on PATH (Debian package coinor-cbc).
const cbcProgram = "cbc"

// CBCAvailable says whether the cbc program is installed.
func CBCAvailable() bool {
	_, err := exec.LookPath(cbcProgram)
	return err == nil
}

// solveCBC writes m as free MPS (variables x<i>, rows c<i>, always minimising),
// runs cbc on it and reads the solution file back.
func solveCBC(ctx context.Context, m *Model, opt Options) (*Solution, error) {
	prog, err := exec.LookPath(cbcProgram)
	if err != nil {
		return nil, fmt.Errorf("lp backend cbc: %w (install Debian's coinor-cbc or use the embedded backend)", err)
	}
	dir, err := os.MkdirTemp("", "grid-cbc-")
	if err != nil {
		return nil, fmt.Errorf("lp backend cbc: %w", err)
	}
	defer os.RemoveAll(dir)
	mpsPath := filepath.Join(dir, "model.mps")
	solPath := filepath.Join(dir, "solution.txt")
	f, err := os.Create(mpsPath)
	if err != nil {
		return nil, fmt.Errorf("lp backend cbc: %w", err)
	}
	w := bufio.NewWriter(f)
	WriteMPS(w, m)
	if err := w.Flush(); err != nil {
		f.Close()
		return nil, fmt.Errorf("lp backend cbc: writing %s: %w", mpsPath, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("lp backend cbc: writing %s: %w", mpsPath, err)
	}
	args := []string{mpsPath}
	// cbc stops itself at the time limit (and reports it); the context's
	// deadline also kills it, a grace period later, if it does not.
	limit := opt.TimeLimit
	if dl, ok := ctx.Deadline(); ok && (limit <= 0 || time.Until(dl) < limit) {
		limit = time.Until(dl)
	}
	run := ctx
	if limit > 0 {
		args = append(args, "-sec", strconv.FormatFloat(math.Max(1, limit.Seconds()), 'f', 0, 64))
		var cancel context.CancelFunc
		run, cancel = context.WithTimeout(ctx, max(limit, time.Second)+cbcGrace)
		defer cancel()
	}
	args = append(args, "-solve", "-solution", solPath)
	cmd := exec.CommandContext(run, prog, args...)
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if err != nil && ctx.Err() == nil && run.Err() != nil {
		// Killed after overrunning its own limit: no answer within the time.
		return &Solution{Status: Limit, Backend: string(CBC), Values: make([]float64, len(m.vars))}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lp backend cbc: %s %s: %w\n%s", prog, strings.Join(args, " "), err, tail(out, 2000))
	}
	sf, err := os.Open(solPath)
	if err != nil {
		return nil, fmt.Errorf("lp backend cbc: no solution file (cbc said: %s): %w", tail(out, 500), err)
	}
	defer sf.Close()
	sol, err := readCBCSolution(sf, m)
	if err != nil {
		return nil, fmt.Errorf("lp backend cbc: %s: %w", solPath, err)
	}
	return sol, nil
}

// cbcGrace is how long cbc may overrun its -sec limit before it is killed.
const cbcGrace = 2 * time.Second

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}

// WriteMPS writes m in free MPS format with generated names x<i> and c<i>; a
// maximisation is written as the minimisation of the negated objective.
func WriteMPS(w io.Writer, m *Model) {
	// CBC's free-MPS reader takes a bare integer in the BOUNDS section for a
	// column name, so every number is written with a decimal point or exponent.
	ff := func(v float64) string {
		s := strconv.FormatFloat(v, 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return s
	}
	sign := 1.0
	if m.maximize {
		sign = -1
	}
	fmt.Fprintf(w, "NAME grid\nROWS\n N obj\n")
	for i, r := range m.rows {
		t := "E"
		switch {
		case math.IsInf(r.lo, -1) && math.IsInf(r.hi, 1):
			t = "N"
		case math.IsInf(r.lo, -1):
			t = "L"
		case math.IsInf(r.hi, 1):
			t = "G"
		case r.lo != r.hi:
			t = "L" // ranged: rhs hi, range hi-lo
		}
		fmt.Fprintf(w, " %s c%d\n", t, i)
	}
	// Column-wise coefficients.
	cols := make([][]entry, len(m.vars))
	for i, r := range m.rows {
		for _, t := range r.terms {
			if t.Coef != 0 {
				cols[t.Var] = append(cols[t.Var], entry{i, t.Coef})
			}
		}
	}
	obj := make([]float64, len(m.vars))
	for _, t := range m.obj {
		obj[t.Var] += sign * t.Coef
	}
	fmt.Fprintf(w, "COLUMNS\n")
	inInt := false
	for j, v := range m.vars {
		if v.integer != inInt {
			if v.integer {
				fmt.Fprintf(w, " MARKER 'MARKER' 'INTORG'\n")
			} else {
				fmt.Fprintf(w, " MARKER 'MARKER' 'INTEND'\n")
			}
			inInt = v.integer
		}
		// Every column is listed, even an empty one, so cbc knows it.
		fmt.Fprintf(w, " x%d obj %s\n", j, ff(obj[j]))
		for _, e := range cols[j] {
			fmt.Fprintf(w, " x%d c%d %s\n", j, e.row, ff(e.val))
		}
	}
	if inInt {
		fmt.Fprintf(w, " MARKER 'MARKER' 'INTEND'\n")
	}
	fmt.Fprintf(w, "RHS\n")
	for i, r := range m.rows {
		switch {
		case !math.IsInf(r.hi, 1):
			fmt.Fprintf(w, " rhs c%d %s\n", i, ff(r.hi))
		case !math.IsInf(r.lo, -1):
			fmt.Fprintf(w, " rhs c%d %s\n", i, ff(r.lo))
		}
	}
	fmt.Fprintf(w, "RANGES\n")
	for i, r := range m.rows {
		if !math.IsInf(r.lo, -1) && !math.IsInf(r.hi, 1) && r.lo != r.hi {
			fmt.Fprintf(w, " rng c%d %s\n", i, ff(r.hi-r.lo))
		}
	}
	fmt.Fprintf(w, "BOUNDS\n")
	for j, v := range m.vars {
		switch {
		case math.IsInf(v.lb, -1) && math.IsInf(v.ub, 1):
			fmt.Fprintf(w, " FR bnd x%d\n", j)
			continue
		case math.IsInf(v.lb, -1):
			fmt.Fprintf(w, " MI bnd x%d\n", j)
		default:
			fmt.Fprintf(w, " LO bnd x%d %s\n", j, ff(v.lb))
		}
		if math.IsInf(v.ub, 1) {
			fmt.Fprintf(w, " PL bnd x%d\n", j)
		} else {
			fmt.Fprintf(w, " UP bnd x%d %s\n", j, ff(v.ub))
		}
	}
	fmt.Fprintf(w, "ENDATA\n")
}

// readCBCSolution parses cbc's solution file: a status line such as
// "Optimal - objective value -3.00000000", then one line per nonzero column
// "index name value reduced-cost" (prefixed by ** when infeasible).
func readCBCSolution(r io.Reader, m *Model) (*Solution, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	if !sc.Scan() {
		return nil, fmt.Errorf("empty solution file")
	}
	status := strings.TrimSpace(sc.Text())
	sol := &Solution{Backend: string(CBC), Values: make([]float64, len(m.vars))}
	lower := strings.ToLower(status)
	switch {
	case strings.HasPrefix(lower, "optimal"):
		sol.Status, sol.Feasible = Optimal, true
	case strings.Contains(lower, "infeasible"):
		sol.Status = Infeasible
	case strings.Contains(lower, "unbounded"):
		sol.Status = Unbounded
	case strings.HasPrefix(lower, "stopped"):
		sol.Status = Limit
		sol.Feasible = !strings.Contains(lower, "no solution")
	default:
		return nil, fmt.Errorf("line 1: unknown status %q", status)
	}
	line := 1
	for sc.Scan() {
		line++
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "**"))
		if len(fields) < 3 {
			continue
		}
		name := fields[1]
		if !strings.HasPrefix(name, "x") {
			continue // a row line (printed with printingOptions all)
		}
		j, err := strconv.Atoi(name[1:])
		if err != nil || j < 0 || j >= len(m.vars) {
			return nil, fmt.Errorf("line %d: unknown column %q", line, name)
		}
		v, err := strconv.ParseFloat(fields[2], 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: value %q: %w", line, fields[2], err)
		}
		sol.Values[j] = v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if sol.Feasible {
		for j, v := range m.vars {
			x := math.Min(math.Max(sol.Values[j], v.lb), v.ub)
			if v.integer {
				x = math.Round(x)
			}
			sol.Values[j] = x
		}
		sol.Objective = m.objectiveValue(sol.Values)
	}
	return sol, nil
}
