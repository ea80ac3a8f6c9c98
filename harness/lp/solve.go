package lp

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Backend names a solver.
type Backend string

const (
	Auto     Backend = "auto"     // CBC when installed, else embedded
	Embedded Backend = "embedded" // pure Go, always available
	CBC      Backend = "cbc"      // the COIN-OR CBC command-line program
)

// ParseBackend checks a user-supplied backend name.
func ParseBackend(s string) (Backend, error) {
	switch b := Backend(s); b {
	case Auto, Embedded, CBC:
		return b, nil
	case "":
		return Auto, nil
	}
	return "", fmt.Errorf("unknown LP backend %q (want auto, embedded or cbc)", s)
}

// Options control a solve.
type Options struct {
	Backend Backend
	// NodeLimit bounds embedded branch and bound (default 200000 nodes).
	NodeLimit int
	// TimeLimit bounds a solve; 0 means none. A solve that reaches it
	// returns status Limit (with the best integer solution found, if any);
	// one whose context is cancelled or past its deadline returns the
	// context's error.
	TimeLimit time.Duration
}

// Resolve says which backend Auto stands for on this machine.
func (b Backend) Resolve() Backend {
	if b == Auto || b == "" {
		if CBCAvailable() {
			return CBC
		}
		return Embedded
	}
	return b
}

// Solve solves m with the chosen backend. It returns promptly once ctx is
// done, with ctx's error (a cbc process is killed).
func Solve(ctx context.Context, m *Model, opt Options) (*Solution, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lp model %q: %w", m.Name, err)
	}
	var sol *Solution
	var err error
	switch opt.Backend.Resolve() {
	case Embedded:
		sol, err = solveEmbedded(ctx, m, opt)
	case CBC:
		sol, err = solveCBC(ctx, m, opt)
	default:
		return nil, fmt.Errorf("unknown LP backend %q", opt.Backend)
	}
	// Whatever the backend made of it, a cancelled solve is an error, never an answer.
	if cerr := ctx.Err(); cerr != nil {
		return nil, fmt.Errorf("lp model %q: %w", m.Name, cerr)
	}
	return sol, err
}

func solveEmbedded(ctx context.Context, m *Model, opt Options) (*Solution, error) {
	limited := ctx
	if opt.TimeLimit > 0 {
		var cancel context.CancelFunc
		limited, cancel = context.WithTimeout(ctx, opt.TimeLimit)
		defer cancel()
	}
	if m.HasIntegers() {
		limit := opt.NodeLimit
		if limit <= 0 {
			limit = 200000
		}
		return branchAndBound(limited, m, limit)
	}
	lb := make([]float64, len(m.vars))
	ub := make([]float64, len(m.vars))
	for j, v := range m.vars {
		lb[j], ub[j] = v.lb, v.ub
	}
	st, x, it, err := solveLP(limited, m, lb, ub)
	if err != nil && ctx.Err() == nil && limited.Err() != nil {
		return &Solution{Status: Limit, Backend: string(Embedded), Iterations: it}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lp model %q: %w", m.Name, err)
	}
	sol := &Solution{Status: st, Backend: string(Embedded), Iterations: it}
	if st == Optimal {
		sol.Values, sol.Feasible = x, true
		sol.Objective = m.objectiveValue(x)
		if v := m.MaxViolation(x); v > 1e-6*(1+math.Abs(sol.Objective)) {
			return nil, fmt.Errorf("lp model %q: embedded simplex answer violates the model by %g (numerical trouble)", m.Name, v)
		}
	}
	return sol, nil
}
