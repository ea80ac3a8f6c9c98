package lp

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

// bigLP takes the embedded simplex well over a second: long enough that a
// cancellation arrives while it pivots.
func bigLP() *Model { return randomLP(11, 150, 150) }

// bigMILP is a market split instance (Cornuéjols and Dawande): equality
// knapsacks whose slack must reach zero. Branch and bound, CBC's cuts
// included, needs far more than a second for it, so a cancellation always
// arrives while it searches.
func bigMILP() *Model {
	rng := rand.New(rand.NewPCG(5, 9))
	const rows, cols = 5, 40
	m := NewModel("market split")
	x := make([]Var, cols)
	for j := range x {
		x[j] = m.AddVar("x", 0, 1, true)
	}
	var obj []Term
	for i := 0; i < rows; i++ {
		terms := make([]Term, 0, cols+2)
		total := 0
		for j := range x {
			a := rng.IntN(100)
			total += a
			terms = append(terms, Term{x[j], float64(a)})
		}
		over, under := m.AddVar("over", 0, Inf, false), m.AddVar("under", 0, Inf, false)
		terms = append(terms, Term{over, -1}, Term{under, 1})
		m.AddConstraint("split", terms, EQ, float64(total/2))
		obj = append(obj, Term{over, 1}, Term{under, 1})
	}
	m.SetObjective(obj, false)
	return m
}

func TestEveryBackendStopsWithTheContextsErrorWhenCancelled(t *testing.T) {
	for _, b := range backends(t) {
		for name, m := range map[string]*Model{"lp": bigLP(), "milp": bigMILP()} {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(30*time.Millisecond, cancel)
			sol, err := Solve(ctx, m, Options{Backend: b})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s %s: cancelled solve returned %v, %v; want context.Canceled", b, name, sol, err)
			}
			cancel()
		}
	}
}

func TestEveryBackendStopsWithTheContextsErrorAtItsDeadline(t *testing.T) {
	for _, b := range backends(t) {
		for name, m := range map[string]*Model{"lp": bigLP(), "milp": bigMILP()} {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			sol, err := Solve(ctx, m, Options{Backend: b})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s %s: solve past its deadline returned %v, %v; want context.DeadlineExceeded", b, name, sol, err)
			}
			cancel()
		}
	}
}

func TestATimeLimitIsAnUndecidedAnswerNotAnError(t *testing.T) {
	for _, b := range backends(t) {
		sol, err := Solve(context.Background(), bigMILP(), Options{Backend: b, TimeLimit: 50 * time.Millisecond})
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if sol.Status == Infeasible {
			t.Errorf("%s: a MILP stopped by its time limit says infeasible", b)
		}
	}
}
