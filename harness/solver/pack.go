package solver

import (
	"context"
	"sort"
)

// packFirsts is how many of the largest switches packStart tries as the
// first aggregator when the greedy choice fails; packScored how many
// switches per opening get their reach computed exactly.
const (
	packFirsts = 4
	packScored = 6
)

// route is a candidate path with its arcs.
type route struct {
	nodes, arcs []int
}

// packer places workers greedily for packStart.
type packer struct {
	in     *Instance
	dc     distCache
	routes *routeCache
	memo   map[[2]int][]route
	// results lists the jobs whose results cross each arc (staticResults).
	results map[int][]int
}

func (pk *packer) routesOf(w, node int) []route {
	key := [2]int{w, node}
	if r, ok := pk.memo[key]; ok {
		return r
	}
	ps, as := pk.routes.get(w, node)
	out := make([]route, len(ps))
	for i := range ps {
		out[i] = route{ps[i], as[i]}
	}
	pk.memo[key] = out
	return out
}

func fitsIn(room []float64, arcs []int) bool {
	for _, a := range arcs {
		if room[a] < 1 {
			return false
		}
	}
	return true
}

func takeIn(room []float64, arcs []int) {
	for _, a := range arcs {
		room[a]--
	}
}

// packAt is a link-aware greedy placement at a common rate lambda: every
// worker sends exactly lambda, so each link, switch and PS has room for
// floor(capacity/lambda) flows. Job by job it opens the programmable switch
// that can take the most of the workers still left (its stream to the PS
// must fit too; candidates are ranked by a cheap estimate — room on the
// switch and on its incoming links — and the best few placed exactly on a
// scratch copy), then places the left workers on the open aggregators
// nearest first, each over the first of its k shortest paths with room.
// When no switch can take two workers the rest go straight to the PS.
// first, when not -1, is opened first for every job. It reports whether
// every worker found a place.
func (pk *packer) packAt(lambda float64, first int) (*assignment, bool) {
	in, dc := pk.in, pk.dc
	room := make([]float64, len(in.arcs))
	for i, a := range in.arcs {
		room[i] = slotsAt(a.cap, lambda)
	}
	// Results take one flow on every arc of their job's tree.
	for ai, js := range pk.results {
		if room[ai] -= float64(len(js)); room[ai] < 0 {
			return nil, false
		}
	}
	scratch := make([]float64, len(room))
	swRoom := make([]float64, len(in.names))
	for _, s := range in.progList {
		swRoom[s] = slotsAt(in.capS[s], lambda)
	}
	psRoom := map[int]float64{}
	for _, jb := range in.jobs {
		if lambda > jb.maxRate*(1+1e-12) {
			return nil, false
		}
		psRoom[jb.ps] = slotsAt(jb.ingress, lambda)
	}
	a := in.newAssignment()
	for j, jb := range in.jobs {
		left := map[int]bool{}
		for w := range jb.workers {
			left[w] = true
		}
		// byDistance lists the left workers nearest to s first.
		byDistance := func(s int) []int {
			d := in.dist(dc, s)
			ws := sortedKeys(left)
			sort.SliceStable(ws, func(x, y int) bool { return d[jb.workers[ws[x]]] < d[jb.workers[ws[y]]] })
			return ws
		}
		// fill places the left workers on aggregator s, nearest first, each
		// over the first of its routes with room, and returns how many it placed.
		// Workers that fit nowhere earlier cannot fit later (room only shrinks),
		// so each aggregator is filled once, right after it opens.
		fill := func(s int, room []float64, commit bool) float64 {
			placed := 0.0
			for _, w := range byDistance(s) {
				if placed >= swRoom[s] {
					break
				}
				for _, r := range pk.routesOf(jb.workers[w], s) {
					if fitsIn(room, r.arcs) {
						takeIn(room, r.arcs)
						placed++
						if commit {
							a.shares[j][w] = []share{{node: s, frac: 1, path: r.nodes}}
							delete(left, w)
						}
						break
					}
				}
			}
			if commit {
				swRoom[s] -= placed
			}
			return placed
		}
		openedCount := 0
		for len(left) > 0 && psRoom[jb.ps] >= 1 {
			type cand struct {
				s        int
				estimate float64
				stream   route
			}
			var cands []cand
			for _, s := range in.progList {
				if swRoom[s] < 2 || a.streams[j][s] != nil || openedCount == 0 && first >= 0 && s != first {
					continue
				}
				p := in.shortestPath(dc, s, jb.ps, nil)
				if p == nil {
					continue
				}
				stream := route{p, in.pathArcs(p)}
				if !fitsIn(room, stream.arcs) {
					continue
				}
				// Workers reach s over its incoming links, or sit right under it.
				est := 0.0
				for _, ai := range in.out[s] {
					back := in.arcFrom(in.arcs[ai].to, s)
					if in.sw[in.arcs[ai].to] {
						est += room[back]
					}
				}
				for w := range left {
					if in.arcs[in.out[jb.workers[w]][0]].to == s {
						est++
					}
				}
				cands = append(cands, cand{s, min(est, swRoom[s]), stream})
			}
			sort.SliceStable(cands, func(x, y int) bool {
				if cands[x].estimate != cands[y].estimate {
					return cands[x].estimate > cands[y].estimate
				}
				return in.capS[cands[x].s] > in.capS[cands[y].s]
			})
			if len(cands) > packScored {
				cands = cands[:packScored]
			}
			best, bestReach := -1, 1.0
			var bestStream route
			for _, c := range cands {
				copy(scratch, room)
				takeIn(scratch, c.stream.arcs)
				reach := fill(c.s, scratch, false)
				if reach > bestReach || reach == bestReach && best >= 0 && in.capS[c.s] > in.capS[best] {
					best, bestReach, bestStream = c.s, reach, c.stream
				}
			}
			if best < 0 {
				break
			}
			takeIn(room, bestStream.arcs)
			psRoom[jb.ps]--
			a.streams[j][best] = bestStream.nodes
			fill(best, room, true)
			openedCount++
		}
		// Left workers may still fit if one placed worker moves aside.
		var opened []int
		for s := range a.streams[j] {
			opened = append(opened, s)
		}
		sort.Ints(opened)
		// Only worth it for a few: with many left the rate is out of reach anyway.
		if len(left) <= max(4, len(jb.workers)/32) {
			for _, w := range sortedKeys(left) {
				if pk.augment(a, j, w, opened, room, swRoom) {
					delete(left, w)
				}
			}
		}
		// The rest send to the PS directly, one stream each.
		for _, w := range sortedKeys(left) {
			placed := false
			for _, r := range pk.routesOf(jb.workers[w], jb.ps) {
				if psRoom[jb.ps] >= 1 && fitsIn(room, r.arcs) {
					takeIn(room, r.arcs)
					psRoom[jb.ps]--
					a.shares[j][w] = []share{{node: jb.ps, frac: 1, path: r.nodes}}
					placed = true
					break
				}
			}
			if !placed {
				return nil, false
			}
		}
	}
	return a, true
}

// packStart bisects packAt over the candidate rates in (floor, ceiling] and
// returns the placement at the highest rate it managed, nil if none. It
// stops with ctx's error once ctx is done.
func (in *Instance) packStart(ctx context.Context, dc distCache, k int, floor, ceiling float64) (*assignment, error) {
	pk := &packer{in: in, dc: dc, routes: in.newRouteCache(dc, k), memo: map[[2]int][]route{}, results: in.staticResults()}
	firsts := append([]int(nil), in.progList...)
	sort.SliceStable(firsts, func(x, y int) bool { return in.capS[firsts[x]] > in.capS[firsts[y]] })
	if len(firsts) > packFirsts {
		firsts = firsts[:packFirsts]
	}
	var best *assignment
	feasible := func(l float64) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		// When the greedy choice of the first aggregator fails, the largest switches get a turn.
		for _, f := range append([]int{-1}, firsts...) {
			if a, ok := pk.packAt(l, f); ok {
				best = a
				return true, nil
			}
		}
		return false, nil
	}
	inRange := func(c float64) bool { return c > floor*(1+1e-9) && c <= ceiling*(1+1e-9) }
	// The PS's ingress is the usual bottleneck: bisect over B/q first, then
	// over every candidate between the rate found and the next B/q above it.
	var coarse []float64
	for _, jb := range in.jobs {
		for q := 1; q <= in.Workers()+len(in.progList); q++ {
			if c := jb.ingress / float64(q); inRange(c) {
				coarse = append(coarse, c)
			}
		}
	}
	lo, err := maxMinBisect(coarse, feasible)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		lo = floor
	}
	hi := ceiling
	for _, c := range coarse {
		if c > lo*(1+1e-9) && c < hi {
			hi = c
		}
	}
	var fine []float64
	for _, c := range in.rateCandidates(true) {
		if c > lo*(1+1e-9) && c < hi*(1-1e-9) && inRange(c) {
			fine = append(fine, c)
		}
	}
	if len(fine) > 0 {
		maxMinBisect(fine, feasible) //nolint:errcheck // errNoneFeasible keeps the coarse result
	}
	return best, ctx.Err()
}

// augment places left worker w of job j on one of the open aggregators by
// moving one placed worker of the job that blocks w's route onto another
// route (to any open aggregator) with room. It updates room and swRoom.
func (pk *packer) augment(a *assignment, j, w int, open []int, room, swRoom []float64) bool {
	in := pk.in
	jb := in.jobs[j]
	for _, A := range open {
		for _, r := range pk.routesOf(jb.workers[w], A) {
			var blocked []int
			for _, ai := range r.arcs {
				if room[ai] < 1 {
					blocked = append(blocked, ai)
				}
			}
			if len(blocked) == 0 && swRoom[A] >= 1 {
				takeIn(room, r.arcs)
				swRoom[A]--
				a.shares[j][w] = []share{{node: A, frac: 1, path: r.nodes}}
				return true
			}
			for v, ss := range a.shares[j] {
				if v == w || len(ss) != 1 || ss[0].node == jb.ps {
					continue
				}
				X, old := ss[0].node, in.pathArcs(ss[0].path)
				if !containsAll(old, blocked) && len(blocked) > 0 || len(blocked) == 0 && X != A {
					continue // moving v frees neither w's blocked links nor room at A
				}
				// Take v off its route, then look for a new one for v that leaves room for w.
				for _, ai := range old {
					room[ai]++
				}
				swRoom[X]++
				if swRoom[A] >= 1 && fitsIn(room, r.arcs) {
					takeIn(room, r.arcs)
					swRoom[A]--
					for _, B := range open {
						if swRoom[B] < 1 {
							continue
						}
						for _, q := range pk.routesOf(jb.workers[v], B) {
							if fitsIn(room, q.arcs) {
								takeIn(room, q.arcs)
								swRoom[B]--
								a.shares[j][v] = []share{{node: B, frac: 1, path: q.nodes}}
								a.shares[j][w] = []share{{node: A, frac: 1, path: r.nodes}}
								return true
							}
						}
					}
					// No new home for v: undo w.
					for _, ai := range r.arcs {
						room[ai]++
					}
					swRoom[A]++
				}
				takeIn(room, old)
				swRoom[X]--
			}
		}
	}
	return false
}

func containsAll(set, items []int) bool {
	for _, x := range items {
		found := false
		for _, y := range set {
			if x == y {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
