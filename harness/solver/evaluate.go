package solver

import (
	"math"
	"sort"
)

// The evaluator's network model, shared by every algorithm:
//   - a worker sends at rate r; each share puts frac*r on every arc of its path;
//   - a switch aggregating shares of a job spends sum(frac*r) of its capacity C_s
//     and sends one stream at max(frac*r) of those shares along its stream path;
//   - the PS host's ingress B carries the shares aggregated at the PS and every
//     stream (jobs sharing a PS host share its ingress);
//   - every worker's rate is capped by its job's T.
// Rates are max-min fair (progressive filling): all rates grow together and a
// worker stops when a resource it loads saturates;
//   - results go down the job's result tree (buildResultTrees), one copy per
//     arc, at the rate of the job's fastest worker (a result per fragment,
//     and a worker sends its fragments at its rate); they share each
//     directed link with whatever gradients and partial sums cross it the
//     same way, so every link is checked in both directions.

// resource kinds
const (
	resArc = iota
	resSwitch
	resPS
)

type resource struct {
	kind, id int
	cap      float64
	linear   []term   // worker (global index), coefficient
	groups   [][]term // each group loads max(coef*rate) of its members
	// results are the jobs whose results cross this arc: each loads the
	// largest rate of the job's workers.
	results []int
}

// jobState is, for one job during progressive filling, the largest rate of
// its frozen workers (c) and whether any is still active (d = 1): at
// common rate t its results load max(c, d*t).
type jobState struct{ c, d float64 }

// jobStates computes every job's state; off are the flat worker offsets.
func jobStates(off []int, rate []float64, active []bool, out []jobState) []jobState {
	out = out[:0]
	for j := 0; j+1 < len(off); j++ {
		var st jobState
		for w := off[j]; w < off[j+1]; w++ {
			if active[w] {
				st.d = 1
			} else {
				st.c = math.Max(st.c, rate[w])
			}
		}
		out = append(out, st)
	}
	return out
}

// jobMax is the largest rate of every job's workers.
func jobMax(off []int, rate []float64) []float64 {
	out := make([]float64, len(off)-1)
	for j := range out {
		for w := off[j]; w < off[j+1]; w++ {
			out[j] = math.Max(out[j], rate[w])
		}
	}
	return out
}

type term struct {
	w    int
	coef float64
}

type evaluation struct {
	rates  [][]float64 // [job][worker], Gbps
	lambda float64     // slowest worker
	// loads by resource at the evaluated rates
	arcLoad    []float64
	arcResult  []float64 // the part of arcLoad that is results
	switchLoad []float64 // by node index
	psLoad     map[int]float64
	psCap      map[int]float64
	fanIn      []map[int]int // [job] switch -> workers with a share there
	streamRate []map[int]float64
}

// flat worker indices
func (in *Instance) offsets() []int {
	off := make([]int, len(in.jobs)+1)
	for j, jb := range in.jobs {
		off[j+1] = off[j] + len(jb.workers)
	}
	return off
}

// resources builds the load terms of an assignment.
func (in *Instance) resources(a *assignment) []*resource {
	off := in.offsets()
	byArc := make([]*resource, len(in.arcs))
	byNode := make([]*resource, len(in.names)) // switches and PS hosts
	var all []*resource
	get := func(m []*resource, kind, id int, cap float64) *resource {
		r := m[id]
		if r == nil {
			r = &resource{kind: kind, id: id, cap: cap}
			m[id] = r
			all = append(all, r)
		}
		return r
	}
	for j, jb := range in.jobs {
		groups := map[int][]term{}
		ps := get(byNode, resPS, jb.ps, jb.ingress)
		for w, ss := range a.shares[j] {
			g := off[j] + w
			for _, s := range ss {
				if s.frac <= 0 {
					continue
				}
				for _, ai := range in.pathArcs(s.path) {
					r := get(byArc, resArc, ai, in.arcs[ai].cap)
					r.linear = append(r.linear, term{g, s.frac})
				}
				if s.node == jb.ps {
					ps.linear = append(ps.linear, term{g, s.frac})
					continue
				}
				r := get(byNode, resSwitch, s.node, in.capS[s.node])
				r.linear = append(r.linear, term{g, s.frac})
				groups[s.node] = append(groups[s.node], term{g, s.frac})
			}
		}
		for _, sw := range sortedKeys(groups) {
			members := groups[sw]
			for _, ai := range in.pathArcs(a.streams[j][sw]) {
				r := get(byArc, resArc, ai, in.arcs[ai].cap)
				r.groups = append(r.groups, members)
			}
			ps.groups = append(ps.groups, members)
		}
		for _, ai := range in.resultArcs(j, a) {
			r := get(byArc, resArc, ai, in.arcs[ai].cap)
			r.results = append(r.results, j)
		}
	}
	return all
}

// load of r at the given flat rates; jmax is jobMax of them.
func (r *resource) load(rate, jmax []float64) float64 {
	var l float64
	for _, j := range r.results {
		l += jmax[j]
	}
	for _, t := range r.linear {
		l += t.coef * rate[t.w]
	}
	for _, g := range r.groups {
		m := 0.0
		for _, t := range g {
			m = math.Max(m, t.coef*rate[t.w])
		}
		l += m
	}
	return l
}

// groupState splits a stream group into c, the largest load of its frozen
// members, and d, the largest coefficient of its active ones: at common rate
// t the group loads max(c, d*t).
func groupState(g []term, rate []float64, active []bool) (c, d float64) {
	for _, x := range g {
		if active[x.w] {
			d = math.Max(d, x.coef)
		} else {
			c = math.Max(c, x.coef*rate[x.w])
		}
	}
	return c, d
}

// saturation is the common rate t of the active workers at which r reaches
// its capacity, frozen workers keeping their rates; +Inf if never.
func (r *resource) saturation(rate []float64, active []bool, now float64, js []jobState) float64 {
	if math.IsInf(r.cap, 1) {
		return math.Inf(1)
	}
	// load(t) = base + slope*t + sum_g max(c_g, d_g*t), convex and nondecreasing.
	var base, slope float64
	type kink struct{ c, d float64 }
	var kinks []kink
	for _, t := range r.linear {
		if active[t.w] {
			slope += t.coef
		} else {
			base += t.coef * rate[t.w]
		}
	}
	for _, g := range r.groups {
		c, d := groupState(g, rate, active)
		if d == 0 {
			base += c
		} else {
			kinks = append(kinks, kink{c, d})
		}
	}
	for _, j := range r.results {
		if js[j].d == 0 {
			base += js[j].c
		} else {
			kinks = append(kinks, kink(js[j]))
		}
	}
	if slope == 0 && len(kinks) == 0 {
		return math.Inf(1)
	}
	sort.Slice(kinks, func(i, k int) bool { return kinks[i].c/kinks[i].d < kinks[k].c/kinks[k].d })
	// Before the first breakpoint every kink contributes its constant c.
	constPart := base
	for _, k := range kinks {
		constPart += k.c
	}
	lo := now
	for i := 0; i <= len(kinks); i++ {
		hi := math.Inf(1)
		if i < len(kinks) {
			hi = kinks[i].c / kinks[i].d
		}
		if hi > lo || i == len(kinks) {
			if slope > 0 {
				t := (r.cap - constPart) / slope
				if t <= hi {
					return math.Max(t, lo)
				}
			} else if constPart > r.cap {
				return lo
			}
			lo = math.Max(lo, hi)
		}
		if i < len(kinks) {
			constPart -= kinks[i].c
			slope += kinks[i].d
		}
	}
	return math.Inf(1)
}

// drivers appends the active workers that push r's load up at rate t: those
// with a linear term, and in each group the active members with the largest
// coefficient when they set the group's maximum, and every active worker of
// a job whose results it carries when they set the results' rate.
func (r *resource) drivers(out []int, rate []float64, active []bool, t float64, js []jobState, off []int) []int {
	for _, x := range r.linear {
		if active[x.w] && x.coef > 0 {
			out = append(out, x.w)
		}
	}
	for _, g := range r.groups {
		c, d := groupState(g, rate, active)
		if d == 0 || d*t < c*(1-1e-12) {
			continue
		}
		for _, x := range g {
			if active[x.w] && x.coef == d {
				out = append(out, x.w)
			}
		}
	}
	for _, j := range r.results {
		if js[j].d == 0 || t < js[j].c*(1-1e-12) {
			continue
		}
		for w := off[j]; w < off[j+1]; w++ {
			if active[w] {
				out = append(out, w)
			}
		}
	}
	return out
}

// maxMin computes max-min fair rates by progressive filling.
func (in *Instance) maxMin(res []*resource) []float64 {
	off := in.offsets()
	n := off[len(in.jobs)]
	rate := make([]float64, n)
	active := make([]bool, n)
	capT := make([]float64, n)
	for j, jb := range in.jobs {
		for w := range jb.workers {
			active[off[j]+w] = true
			capT[off[j]+w] = jb.maxRate
		}
	}
	now := 0.0
	left := n
	sat := make([]float64, len(res))
	var freeze []int
	var js []jobState
	for left > 0 {
		js = jobStates(off, rate, active, js)
		next := math.Inf(1)
		for w := range rate {
			if active[w] {
				next = math.Min(next, capT[w])
			}
		}
		for ri, r := range res {
			sat[ri] = r.saturation(rate, active, now, js)
			next = math.Min(next, sat[ri])
		}
		next = math.Max(next, now)
		for w := range rate {
			if active[w] {
				rate[w] = next
			}
		}
		freeze = freeze[:0]
		for w := range rate {
			if active[w] && capT[w] <= next*(1+1e-12) {
				freeze = append(freeze, w)
			}
		}
		for ri, r := range res {
			if sat[ri] <= next*(1+1e-12)+1e-15 {
				freeze = r.drivers(freeze, rate, active, next, js, off)
			}
		}
		if len(freeze) == 0 {
			// Numerical corner (a saturation rounded just above next): stop everyone here.
			for w := range rate {
				if active[w] {
					freeze = append(freeze, w)
				}
			}
		}
		for _, w := range freeze {
			if active[w] {
				active[w] = false
				left--
			}
		}
		now = next
	}
	return rate
}

// evaluate scores an assignment under the evaluator's model.
func (in *Instance) evaluate(a *assignment) *evaluation {
	res := in.resources(a)
	flat := in.maxMin(res)
	return in.loadsAt(a, res, flat)
}

// loadsAt reports loads for given flat rates (the evaluator's, or an algorithm's intended ones).
func (in *Instance) loadsAt(a *assignment, res []*resource, flat []float64) *evaluation {
	off := in.offsets()
	ev := &evaluation{lambda: math.Inf(1), arcLoad: make([]float64, len(in.arcs)), arcResult: make([]float64, len(in.arcs)), switchLoad: make([]float64, len(in.names)),
		psLoad: map[int]float64{}, psCap: map[int]float64{}}
	for j, jb := range in.jobs {
		ev.rates = append(ev.rates, append([]float64(nil), flat[off[j]:off[j+1]]...))
		for _, r := range ev.rates[j] {
			ev.lambda = math.Min(ev.lambda, r)
		}
		fan := map[int]int{}
		stream := map[int]float64{}
		for w, ss := range a.shares[j] {
			for _, s := range ss {
				if s.frac > 0 && s.node != jb.ps {
					fan[s.node]++
					stream[s.node] = math.Max(stream[s.node], s.frac*flat[off[j]+w])
				}
			}
		}
		ev.fanIn = append(ev.fanIn, fan)
		ev.streamRate = append(ev.streamRate, stream)
	}
	jmax := jobMax(off, flat)
	for _, r := range res {
		l := r.load(flat, jmax)
		switch r.kind {
		case resArc:
			ev.arcLoad[r.id] = l
			for _, j := range r.results {
				ev.arcResult[r.id] += jmax[j]
			}
		case resSwitch:
			ev.switchLoad[r.id] = l
		case resPS:
			ev.psLoad[r.id] = l
			ev.psCap[r.id] = r.cap
		}
	}
	return ev
}

// flatten turns [job][worker] rates into the evaluator's flat order.
func flatten(r [][]float64) []float64 {
	var out []float64
	for _, x := range r {
		out = append(out, x...)
	}
	return out
}
