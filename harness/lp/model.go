// Package lp models linear and mixed-integer programs and solves them with
// either an embedded pure-Go simplex (plus branch and bound for integers) or
// the COIN-OR CBC command-line solver. Both backends receive the same Model, so
// the choice of backend changes results only within solver tolerance.
package lp

import (
	"fmt"
	"math"
)

// Var identifies a variable of one Model.
type Var int

// Term is one coefficient times one variable.
type Term struct {
	Var  Var
	Coef float64
}

// Sense is the direction of a constraint.
type Sense int

const (
	LE Sense = iota // sum <= rhs
	GE              // sum >= rhs
	EQ              // sum == rhs
)

func (s Sense) String() string {
	switch s {
	case LE:
		return "<="
	case GE:
		return ">="
	case EQ:
		return "=="
	}
	return fmt.Sprintf("Sense(%d)", int(s))
}

// Inf is an infinite bound.
var Inf = math.Inf(1)

type variable struct {
	name    string
	lb, ub  float64
	integer bool
}

// row is a constraint lo <= sum(terms) <= hi; lo or hi may be infinite.
type row struct {
	name   string
	terms  []Term
	lo, hi float64
}

// Model is a linear program: variables with bounds and integrality flags,
// linear constraints and a linear objective. The zero value is not usable; use NewModel.
type Model struct {
	Name     string
	vars     []variable
	rows     []row
	obj      []Term
	maximize bool
}

// NewModel returns an empty model (minimising 0).
func NewModel(name string) *Model { return &Model{Name: name} }

// AddVar adds a variable with bounds lb <= v <= ub (use -Inf/Inf for none).
func (m *Model) AddVar(name string, lb, ub float64, integer bool) Var {
	m.vars = append(m.vars, variable{name: name, lb: lb, ub: ub, integer: integer})
	return Var(len(m.vars) - 1)
}

// AddConstraint adds sum(terms) <sense> rhs. Terms naming the same variable are summed.
func (m *Model) AddConstraint(name string, terms []Term, sense Sense, rhs float64) {
	r := row{name: name, terms: mergeTerms(terms), lo: math.Inf(-1), hi: math.Inf(1)}
	switch sense {
	case LE:
		r.hi = rhs
	case GE:
		r.lo = rhs
	case EQ:
		r.lo, r.hi = rhs, rhs
	}
	m.rows = append(m.rows, r)
}

// SetObjective sets the linear objective and its direction.
func (m *Model) SetObjective(terms []Term, maximize bool) {
	m.obj = mergeTerms(terms)
	m.maximize = maximize
}

// NumVars is the number of variables.
func (m *Model) NumVars() int { return len(m.vars) }

// NumConstraints is the number of constraints.
func (m *Model) NumConstraints() int { return len(m.rows) }

// VarName is the name given to v.
func (m *Model) VarName(v Var) string { return m.vars[v].name }

// HasIntegers says whether any variable is integer.
func (m *Model) HasIntegers() bool {
	for _, v := range m.vars {
		if v.integer {
			return true
		}
	}
	return false
}

// Relaxation returns a copy of m with every integrality flag dropped.
func (m *Model) Relaxation() *Model {
	r := *m
	r.vars = append([]variable(nil), m.vars...)
	for i := range r.vars {
		r.vars[i].integer = false
	}
	return &r
}

// check rejects models no backend can read: NaN coefficients, inverted bounds, unknown variables.
func (m *Model) check() error {
	for _, v := range m.vars {
		if math.IsNaN(v.lb) || math.IsNaN(v.ub) || v.lb > v.ub || math.IsInf(v.lb, 1) || math.IsInf(v.ub, -1) {
			return fmt.Errorf("lp model %q: variable %q has bounds [%g, %g]", m.Name, v.name, v.lb, v.ub)
		}
	}
	checkTerms := func(what string, ts []Term) error {
		for _, t := range ts {
			if int(t.Var) < 0 || int(t.Var) >= len(m.vars) {
				return fmt.Errorf("lp model %q: %s uses unknown variable %d", m.Name, what, t.Var)
			}
			if math.IsNaN(t.Coef) || math.IsInf(t.Coef, 0) {
				return fmt.Errorf("lp model %q: %s has coefficient %g for %q", m.Name, what, t.Coef, m.vars[t.Var].name)
			}
		}
		return nil
	}
	if err := checkTerms("objective", m.obj); err != nil {
		return err
	}
	for _, r := range m.rows {
		if err := checkTerms("constraint "+r.name, r.terms); err != nil {
			return err
		}
		if math.IsNaN(r.lo) || math.IsNaN(r.hi) || r.lo > r.hi {
			return fmt.Errorf("lp model %q: constraint %q has range [%g, %g]", m.Name, r.name, r.lo, r.hi)
		}
	}
	return nil
}

func mergeTerms(ts []Term) []Term {
	idx := make(map[Var]int, len(ts))
	out := make([]Term, 0, len(ts))
	for _, t := range ts {
		if i, ok := idx[t.Var]; ok {
			out[i].Coef += t.Coef
			continue
		}
		idx[t.Var] = len(out)
		out = append(out, t)
	}
	return out
}

// Status is the outcome of a solve.
type Status int

const (
	Optimal Status = iota
	Infeasible
	Unbounded
	// Limit means a node or time limit stopped branch and bound; Values hold the
	// best integer solution found, if any (Solution.Feasible says).
	Limit
)

func (s Status) String() string {
	switch s {
	case Optimal:
		return "optimal"
	case Infeasible:
		return "infeasible"
	case Unbounded:
		return "unbounded"
	case Limit:
		return "limit"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Solution is a backend's answer.
type Solution struct {
	Status    Status
	Objective float64   // in the model's own sense (maximised value for a maximisation)
	Values    []float64 // one per variable, indexed by Var
	Feasible  bool      // Values satisfy the model (always true when Status is Optimal)
	Backend   string    // "embedded" or "cbc"
	// Iterations is the number of simplex pivots (embedded) summed over branch-and-bound nodes.
	Iterations int
	// Nodes is the number of branch-and-bound nodes solved (embedded, models with integers).
	Nodes int
}

// Value is the value of v in s.
func (s *Solution) Value(v Var) float64 { return s.Values[v] }

// objectiveValue evaluates the model's objective at x.
func (m *Model) objectiveValue(x []float64) float64 {
	var z float64
	for _, t := range m.obj {
		z += t.Coef * x[t.Var]
	}
	return z
}

// MaxViolation is the largest amount by which x violates a bound, a constraint
// or (for integer variables) integrality; 0 when x is feasible.
func (m *Model) MaxViolation(x []float64) float64 {
	worst := 0.0
	for i, v := range m.vars {
		worst = math.Max(worst, math.Max(v.lb-x[i], x[i]-v.ub))
		if v.integer {
			worst = math.Max(worst, math.Abs(x[i]-math.Round(x[i])))
		}
	}
	for _, r := range m.rows {
		var s float64
		for _, t := range r.terms {
			s += t.Coef * x[t.Var]
		}
		worst = math.Max(worst, math.Max(r.lo-s, s-r.hi))
	}
	return worst
}
