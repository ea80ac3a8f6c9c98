package lp

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// The embedded LP solver is a bounded-variable revised primal simplex with an
// explicit dense basis inverse. Each constraint row i gets a logical variable
// s_i = a_i·x carrying the row's range as its bounds, so the system is A x - s = 0
// and the all-logical basis (B = -I) is always a valid start. Phase 1 minimises
// the sum of bound violations of the basic variables; phase 2 the objective.
// Columns of A are sparse, the inverse is dense: fine up to a few thousand rows,
// which covers the symmetric (per worker class) models the solver builds.

const (
	primalTol = 1e-9
	dualTol   = 1e-9
	pivotTol  = 1e-9
	// refreshEvery pivots the basic values are recomputed from the inverse to stop drift.
	refreshEvery = 64
	// reinvertEvery pivots the inverse is rebuilt from the basis columns.
	reinvertEvery = 512
	// blandAfter consecutive degenerate pivots switch pricing to Bland's rule, which cannot cycle.
	blandAfter = 40
)

type entry struct {
	row int
	val float64
}

type simplex struct {
	m, n   int
	cols   [][]entry // structural columns
	lb, ub []float64 // n structurals then m logicals
	cost   []float64 // minimisation costs, logicals 0
	x      []float64
	head   []int // basic variable of each row
	pos    []int // row of a basic variable, -1 when nonbasic
	binv   [][]float64
	iters  int

	// scratch
	alpha, y, cB, rhs []float64
}

var errSingular = errors.New("lp: basis became singular")

func newSimplex(md *Model, lb, ub []float64) *simplex {
	m, n := len(md.rows), len(md.vars)
	s := &simplex{m: m, n: n, cols: make([][]entry, n),
		lb: make([]float64, n+m), ub: make([]float64, n+m), cost: make([]float64, n+m),
		x: make([]float64, n+m), head: make([]int, m), pos: make([]int, n+m),
		alpha: make([]float64, m), y: make([]float64, m), cB: make([]float64, m), rhs: make([]float64, m)}
	for i, r := range md.rows {
		for _, t := range r.terms {
			if t.Coef != 0 {
				s.cols[t.Var] = append(s.cols[t.Var], entry{i, t.Coef})
			}
		}
		s.lb[n+i], s.ub[n+i] = r.lo, r.hi
	}
	copy(s.lb, lb)
	copy(s.ub, ub)
	sign := 1.0
	if md.maximize {
		sign = -1
	}
	for _, t := range md.obj {
		s.cost[t.Var] += sign * t.Coef
	}
	for j := 0; j < n; j++ {
		s.pos[j] = -1
		switch {
		case !math.IsInf(s.lb[j], 0):
			s.x[j] = s.lb[j]
		case !math.IsInf(s.ub[j], 0):
			s.x[j] = s.ub[j]
		}
	}
	s.binv = make([][]float64, m)
	for i := 0; i < m; i++ {
		s.head[i] = n + i
		s.pos[n+i] = i
		s.binv[i] = make([]float64, m)
		s.binv[i][i] = -1
	}
	s.refresh()
	return s
}

// column calls f for each nonzero of variable j's column.
func (s *simplex) column(j int, f func(row int, v float64)) {
	if j >= s.n {
		f(j-s.n, -1)
		return
	}
	for _, e := range s.cols[j] {
		f(e.row, e.val)
	}
}

// refresh recomputes the basic values from the nonbasic ones: B x_B = -N x_N.
func (s *simplex) refresh() {
	for i := range s.rhs {
		s.rhs[i] = 0
	}
	for j := 0; j < s.n+s.m; j++ {
		if s.pos[j] >= 0 || s.x[j] == 0 {
			continue
		}
		xj := s.x[j]
		s.column(j, func(r int, v float64) { s.rhs[r] -= v * xj })
	}
	for i := 0; i < s.m; i++ {
		var v float64
		row := s.binv[i]
		for k, b := range s.rhs {
			if b != 0 {
				v += row[k] * b
			}
		}
		s.x[s.head[i]] = v
	}
}

// reinvert rebuilds the dense inverse of the basis by Gauss-Jordan elimination
// with partial pivoting; rows of the basis are sparse, so zero multipliers are skipped.
func (s *simplex) reinvert() error {
	m := s.m
	a := make([][]float64, m)
	for i := range a {
		a[i] = make([]float64, 2*m)
		a[i][m+i] = 1
	}
	for c, j := range s.head {
		s.column(j, func(r int, v float64) { a[r][c] = v })
	}
	for c := 0; c < m; c++ {
		p, best := -1, 0.0
		for r := c; r < m; r++ {
			if v := math.Abs(a[r][c]); v > best {
				p, best = r, v
			}
		}
		if best < 1e-12 {
			return errSingular
		}
		a[c], a[p] = a[p], a[c]
		inv := 1 / a[c][c]
		rowc := a[c]
		for k := range rowc {
			rowc[k] *= inv
		}
		for r := 0; r < m; r++ {
			if r == c || a[r][c] == 0 {
				continue
			}
			f := a[r][c]
			rr := a[r]
			for k := c; k < 2*m; k++ {
				if rowc[k] != 0 {
					rr[k] -= f * rowc[k]
				}
			}
		}
	}
	// a = [I | B^-1] with rows in basis order (column c of B is row c of B^-1).
	for i := 0; i < m; i++ {
		copy(s.binv[i], a[i][m:])
	}
	return nil
}

func (s *simplex) infeasibility(i int) float64 {
	v := s.x[s.head[i]]
	j := s.head[i]
	if v < s.lb[j]-tolFor(s.lb[j]) {
		return -1
	}
	if v > s.ub[j]+tolFor(s.ub[j]) {
		return 1
	}
	return 0
}

func tolFor(b float64) float64 {
	if math.IsInf(b, 0) {
		return primalTol
	}
	return primalTol * (1 + math.Abs(b))
}

// checkEvery pivots run looks whether its context is done: often enough to
// stop within milliseconds, rarely enough to cost nothing.
const checkEvery = 16

// run iterates to optimality. It returns Optimal, Infeasible or Unbounded,
// or ctx's error as soon as ctx is done.
func (s *simplex) run(ctx context.Context, maxIters int) (Status, error) {
	degenerate := 0
	sinceRefresh, sinceReinvert := 0, 0
	for {
		if s.iters%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		if s.iters >= maxIters {
			return 0, fmt.Errorf("lp: embedded simplex stopped after %d pivots without converging", s.iters)
		}
		// Phase: any infeasible basic variable means phase 1.
		phase1 := false
		for i := 0; i < s.m; i++ {
			c := s.infeasibility(i)
			s.cB[i] = c
			if c != 0 {
				phase1 = true
			}
		}
		if !phase1 {
			for i := 0; i < s.m; i++ {
				s.cB[i] = s.cost[s.head[i]]
			}
		}
		// Duals y = c_B B^-1.
		for k := range s.y {
			s.y[k] = 0
		}
		for i := 0; i < s.m; i++ {
			if c := s.cB[i]; c != 0 {
				for k, b := range s.binv[i] {
					s.y[k] += c * b
				}
			}
		}
		bland := degenerate >= blandAfter
		enter, dir, best := -1, 0.0, 0.0
		for j := 0; j < s.n+s.m; j++ {
			if s.pos[j] >= 0 || s.lb[j] == s.ub[j] {
				continue
			}
			d := 0.0
			if !phase1 {
				d = s.cost[j]
			}
			s.column(j, func(r int, v float64) { d -= s.y[r] * v })
			var dj float64
			switch {
			case d < -dualTol && s.x[j] < s.ub[j]-tolFor(s.ub[j]):
				dj = 1
			case d > dualTol && s.x[j] > s.lb[j]+tolFor(s.lb[j]):
				dj = -1
			default:
				continue
			}
			if bland {
				enter, dir = j, dj
				break
			}
			if math.Abs(d) > best {
				enter, dir, best = j, dj, math.Abs(d)
			}
		}
		if enter < 0 {
			if phase1 {
				return Infeasible, nil
			}
			return Optimal, nil
		}
		// alpha = B^-1 a_enter.
		for i := range s.alpha {
			s.alpha[i] = 0
		}
		s.column(enter, func(r int, v float64) {
			for i := 0; i < s.m; i++ {
				if b := s.binv[i][r]; b != 0 {
					s.alpha[i] += b * v
				}
			}
		})
		// Ratio test: basic i changes by delta_i = -dir*alpha_i per unit step.
		theta := s.ub[enter] - s.lb[enter]
		leave, leaveBound := -1, 0.0
		bestPiv := 0.0
		for i := 0; i < s.m; i++ {
			a := s.alpha[i]
			if math.Abs(a) < pivotTol {
				continue
			}
			delta := -dir * a
			j := s.head[i]
			v := s.x[j]
			var limit, bound float64
			if delta < 0 {
				switch {
				case v > s.ub[j]+tolFor(s.ub[j]):
					bound = s.ub[j]
				case v >= s.lb[j]-tolFor(s.lb[j]) && !math.IsInf(s.lb[j], -1):
					bound = s.lb[j]
				default:
					continue
				}
			} else {
				switch {
				case v < s.lb[j]-tolFor(s.lb[j]):
					bound = s.lb[j]
				case v <= s.ub[j]+tolFor(s.ub[j]) && !math.IsInf(s.ub[j], 1):
					bound = s.ub[j]
				default:
					continue
				}
			}
			limit = math.Max(0, (bound-v)/delta)
			switch {
			case limit < theta-1e-12:
				leave, leaveBound, bestPiv, theta = i, bound, math.Abs(a), limit
			case leave >= 0 && limit <= theta+1e-12:
				// Tie: Bland's rule takes the smallest index, otherwise the largest pivot is the stable choice.
				if bland && j < s.head[leave] || !bland && math.Abs(a) > bestPiv {
					leave, leaveBound, bestPiv, theta = i, bound, math.Abs(a), math.Min(theta, limit)
				}
			}
		}
		if math.IsInf(theta, 1) {
			if phase1 {
				return 0, fmt.Errorf("lp: phase 1 found no blocking variable (numerical trouble)")
			}
			return Unbounded, nil
		}
		if theta <= 1e-12 {
			degenerate++
		} else {
			degenerate = 0
		}
		s.iters++
		s.x[enter] += dir * theta
		for i := 0; i < s.m; i++ {
			if a := s.alpha[i]; a != 0 {
				s.x[s.head[i]] -= dir * a * theta
			}
		}
		if leave < 0 { // the entering variable moved to its other bound
			if dir > 0 {
				s.x[enter] = s.ub[enter]
			} else {
				s.x[enter] = s.lb[enter]
			}
			continue
		}
		out := s.head[leave]
		s.x[out] = leaveBound
		s.pos[out] = -1
		s.head[leave] = enter
		s.pos[enter] = leave
		piv := s.alpha[leave]
		rowr := s.binv[leave]
		for k := range rowr {
			rowr[k] /= piv
		}
		for i := 0; i < s.m; i++ {
			a := s.alpha[i]
			if i == leave || a == 0 {
				continue
			}
			ri := s.binv[i]
			for k, b := range rowr {
				if b != 0 {
					ri[k] -= a * b
				}
			}
		}
		sinceRefresh++
		sinceReinvert++
		if sinceReinvert >= reinvertEvery {
			if err := s.reinvert(); err != nil {
				return 0, err
			}
			sinceReinvert, sinceRefresh = 0, 0
			s.refresh()
		} else if sinceRefresh >= refreshEvery {
			sinceRefresh = 0
			s.refresh()
		}
	}
}

// solveLP solves the relaxation of md with the given structural bounds; it
// stops with ctx's error when ctx is done.
func solveLP(ctx context.Context, md *Model, lb, ub []float64) (Status, []float64, int, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, 0, err
	}
	s := newSimplex(md, lb, ub)
	st, err := s.run(ctx, 200*(s.m+s.n)+10000)
	if err != nil {
		return 0, nil, s.iters, err
	}
	x := append([]float64(nil), s.x[:s.n]...)
	// Clamp to bounds: values within tolerance outside a bound are solver noise.
	for j := range x {
		x[j] = math.Min(math.Max(x[j], lb[j]), ub[j])
	}
	return st, x, s.iters, nil
}
