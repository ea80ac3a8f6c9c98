package lp

import (
	"context"
	"errors"
	"testing"
	"time"
)

// bigLP takes the embedded simplex well over a second: long enough that a
// cancellation arrives while it pivots.
func bigLP() *Model { return randomLP(11, 150, 150) }

// bigMILP is a knapsack family branch and bound cannot finish quickly.
func bigMILP() *Model {
	m := NewModel("knapsacks")
	var terms []Term
	var obj []Term
	for i := 0; i < 60; i++ {
		v := m.AddVar("x", 0, 1, true)
		terms = append(terms, Term{v, float64(1000 + 37*i%101)})
		obj = append(obj, Term{v, float64(1000 + 41*i%97)})
	}
	m.AddConstraint("weight", terms, LE, 30000.5)
	m.SetObjective(obj, true)
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
