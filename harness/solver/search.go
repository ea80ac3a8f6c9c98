package solver

import (
	"context"
	"math"
	"slices"
	"sort"
)

// search improves an assignment by local moves, each scored by the full
// evaluator: reroute a slow worker over another of its k shortest paths, move
// it to another aggregation node, or close an aggregator (moving its workers
// to the nearest other aggregator or the PS), which frees PS ingress. It takes
// the first move that improves the score (lambda, then fewer workers at
// lambda, then the sum of rates) and stops when none does or the budget of
// evaluations is spent.
type search struct {
	in          *Instance
	dc          distCache
	onlyReroute bool // Geryon: keep every worker at the PS, change paths only
	// ceiling is an upper bound on lambda (0: none); reaching it ends the search.
	ceiling float64
	routes  *routeCache
	evals   int
	// ctx, when set, stops the search once it is done.
	ctx context.Context
}

func (in *Instance) newSearch(dc distCache, k int) *search {
	return &search{in: in, dc: dc, routes: in.newRouteCache(dc, k)}
}

type score struct {
	lambda float64
	atMin  int
	sum    float64
}

func scoreOf(ev *evaluation) score {
	s := score{lambda: ev.lambda}
	for _, rs := range ev.rates {
		for _, r := range rs {
			s.sum += r
			if r <= ev.lambda*(1+1e-9) {
				s.atMin++
			}
		}
	}
	return s
}

func (a score) better(b score) bool {
	const eps = 1e-9
	switch {
	case a.lambda > b.lambda*(1+eps)+1e-12:
		return true
	case a.lambda < b.lambda*(1-eps)-1e-12:
		return false
	case a.atMin != b.atMin:
		return a.atMin < b.atMin
	}
	return a.sum > b.sum*(1+eps)+1e-12
}

func (s *search) kPaths(w, node int) [][]int {
	p, _ := s.routes.get(w, node)
	return p
}

func (s *search) eval(a *assignment) (*evaluation, score) {
	s.evals++
	ev := s.in.evaluate(a)
	return ev, scoreOf(ev)
}

// improve runs the local search for at most budget evaluations.
func (s *search) improve(a *assignment, budget int) *assignment {
	in := s.in
	s.in.completeStreams(a, s.dc, nil)
	ev, cur := s.eval(a)
	for s.evals < budget && (s.ceiling == 0 || cur.lambda < s.ceiling*(1-1e-9)) && (s.ctx == nil || s.ctx.Err() == nil) {
		var next *assignment
		var nextScore score
		try := func(c *assignment) bool {
			if s.evals >= budget {
				return true
			}
			in.completeStreams(c, s.dc, nil)
			_, sc := s.eval(c)
			if sc.better(cur) {
				next, nextScore = c, sc
				return true
			}
			return false
		}
		s.moves(a, ev, try)
		if next == nil {
			break
		}
		a, cur = next, nextScore
		ev = in.evaluate(a)
	}
	return a
}

// slowest lists (job, worker) pairs at the minimum rate, most constrained first.
func slowest(ev *evaluation, limit int) [][2]int {
	var out [][2]int
	for j, rs := range ev.rates {
		for w, r := range rs {
			if r <= ev.lambda*(1+1e-6)+1e-12 {
				out = append(out, [2]int{j, w})
			}
		}
	}
	if len(out) > limit {
		// Spread the sample over the slow workers instead of taking one rack.
		step := float64(len(out)) / float64(limit)
		var sample [][2]int
		for i := 0; i < limit; i++ {
			sample = append(sample, out[int(float64(i)*step)])
		}
		out = sample
	}
	return out
}

// moves offers candidate assignments to try until it returns true.
func (s *search) moves(a *assignment, ev *evaluation, try func(*assignment) bool) {
	in := s.in
	slow := slowest(ev, 12)
	if !s.onlyReroute {
		// Close the aggregators with the smallest fan-in first.
		for j, jb := range in.jobs {
			aggs := sortedKeys(ev.fanIn[j])
			sort.SliceStable(aggs, func(x, y int) bool { return ev.fanIn[j][aggs[x]] < ev.fanIn[j][aggs[y]] })
			for i, sw := range aggs {
				if i >= 6 {
					break
				}
				others := append(slices.DeleteFunc(slices.Clone(aggs), func(v int) bool { return v == sw }), jb.ps)
				c := a.clone()
				for w := range jb.workers {
					if !usesNode(c.shares[j][w], sw) {
						continue
					}
					c.shares[j][w] = []share{s.nearest(jb.workers[w], others)}
				}
				if try(c) {
					return
				}
			}
		}
	}
	for _, jw := range slow {
		j, w := jw[0], jw[1]
		jb := in.jobs[j]
		wi := jb.workers[w]
		cur := a.shares[j][w]
		if len(cur) == 1 {
			for _, p := range s.kPaths(wi, cur[0].node) {
				if slices.Equal(p, cur[0].path) {
					continue
				}
				c := a.clone()
				c.shares[j][w] = []share{{node: cur[0].node, frac: 1, path: p}}
				if try(c) {
					return
				}
			}
		}
		if s.onlyReroute {
			continue
		}
		for _, node := range s.targets(a, ev, j) {
			if len(cur) == 1 && cur[0].node == node {
				continue
			}
			ps := s.kPaths(wi, node)
			if len(ps) == 0 {
				continue
			}
			c := a.clone()
			c.shares[j][w] = []share{{node: node, frac: 1, path: ps[0]}}
			if try(c) {
				return
			}
		}
	}
}

func usesNode(ss []share, node int) bool {
	for _, s := range ss {
		if s.node == node {
			return true
		}
	}
	return false
}

// nearest is a share to the closest of the candidate nodes (first on ties).
func (s *search) nearest(w int, nodes []int) share {
	best, bestD := -1, math.MaxInt
	for _, n := range nodes {
		if d := s.in.dist(s.dc, n)[w]; d >= 0 && d < bestD {
			best, bestD = n, d
		}
	}
	return share{node: best, frac: 1, path: s.in.shortestPath(s.dc, w, best, nil)}
}

// targets are the nodes a slow worker of job j may move to: the job's open
// aggregators with spare capacity, its PS, and the unused programmable
// switches with the most capacity left.
func (s *search) targets(a *assignment, ev *evaluation, j int) []int {
	in := s.in
	var out []int
	for _, sw := range sortedKeys(ev.fanIn[j]) {
		if ev.switchLoad[sw] < in.capS[sw]*(1-1e-9) {
			out = append(out, sw)
		}
	}
	out = append(out, in.jobs[j].ps)
	var unused []int
	for _, sw := range in.progList {
		if _, open := ev.fanIn[j][sw]; !open {
			unused = append(unused, sw)
		}
	}
	sort.SliceStable(unused, func(x, y int) bool {
		return in.capS[unused[x]]-ev.switchLoad[unused[x]] > in.capS[unused[y]]-ev.switchLoad[unused[y]]
	})
	if len(unused) > 3 {
		unused = unused[:3]
	}
	return append(out, unused...)
}
