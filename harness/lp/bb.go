package lp

import (
	"context"
	"math"
)

// intTol is how far from an integer a value may be and still count as integral.
const intTol = 1e-6

// branchAndBound solves a model with integer variables depth first, branching
// on the most fractional variable and pruning nodes whose relaxation cannot
// beat the incumbent. It is meant for small instances; nodeLimit bounds the
// work, and so does ctx: once it is done the search stops with status Limit
// (the caller tells a time limit from a cancellation).
func branchAndBound(ctx context.Context, md *Model, nodeLimit int) (*Solution, error) {
	n := len(md.vars)
	sign := 1.0 // minimisation view of the objective
	if md.maximize {
		sign = -1
	}
	type node struct{ lb, ub []float64 }
	root := node{make([]float64, n), make([]float64, n)}
	for j, v := range md.vars {
		root.lb[j], root.ub[j] = v.lb, v.ub
		if v.integer {
			root.lb[j], root.ub[j] = math.Ceil(v.lb-intTol), math.Floor(v.ub+intTol)
		}
	}
	sol := &Solution{Backend: "embedded", Status: Infeasible}
	var incumbent []float64
	incObj := math.Inf(1)
	stack := []node{root}
	for len(stack) > 0 {
		if sol.Nodes >= nodeLimit || ctx.Err() != nil {
			sol.Status = Limit
			break
		}
		nd := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		sol.Nodes++
		st, x, it, err := solveLP(ctx, md, nd.lb, nd.ub)
		sol.Iterations += it
		if ctx.Err() != nil {
			sol.Status = Limit
			break
		}
		if err != nil {
			return nil, err
		}
		if st == Unbounded {
			if incumbent == nil {
				sol.Status = Unbounded
				return sol, nil
			}
			continue
		}
		if st != Optimal {
			continue
		}
		z := sign * md.objectiveValue(x)
		if z >= incObj-1e-9*(1+math.Abs(incObj)) {
			continue
		}
		branch, frac := -1, 0.0
		for j, v := range md.vars {
			if !v.integer {
				continue
			}
			f := math.Abs(x[j] - math.Round(x[j]))
			if f > intTol && f > frac {
				branch, frac = j, f
			}
		}
		if branch < 0 {
			for j, v := range md.vars {
				if v.integer {
					x[j] = math.Round(x[j])
				}
			}
			incumbent, incObj = x, z
			continue
		}
		down := node{append([]float64(nil), nd.lb...), append([]float64(nil), nd.ub...)}
		up := node{append([]float64(nil), nd.lb...), append([]float64(nil), nd.ub...)}
		down.ub[branch] = math.Floor(x[branch])
		up.lb[branch] = math.Ceil(x[branch])
		// Explore the nearer side first (pushed last).
		if x[branch]-math.Floor(x[branch]) < 0.5 {
			stack = append(stack, up, down)
		} else {
			stack = append(stack, down, up)
		}
	}
	if incumbent != nil {
		sol.Values, sol.Feasible = incumbent, true
		sol.Objective = md.objectiveValue(incumbent)
		if sol.Status != Limit {
			sol.Status = Optimal
		}
	}
	return sol, nil
}
