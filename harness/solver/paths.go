package solver

import "slices"

// routeCache memoises k shortest paths. A host with one link has the paths
// of its switch with itself in front, so hosts behind the same switch share entries.
type routeCache struct {
	in    *Instance
	dc    distCache
	k     int
	paths map[[2]int][][]int
	arcs  map[[2]int][][]int
}

func (in *Instance) newRouteCache(dc distCache, k int) *routeCache {
	return &routeCache{in: in, dc: dc, k: k, paths: map[[2]int][][]int{}, arcs: map[[2]int][][]int{}}
}

// get returns the node paths and their arcs from src to dst.
func (rc *routeCache) get(src, dst int) ([][]int, [][]int) {
	key := [2]int{src, dst}
	if p, ok := rc.paths[key]; ok {
		return p, rc.arcs[key]
	}
	in := rc.in
	var ps [][]int
	if !in.sw[src] && len(in.out[src]) == 1 && in.arcs[in.out[src][0]].to != dst {
		rack, _ := rc.get(in.arcs[in.out[src][0]].to, dst)
		for _, p := range rack {
			ps = append(ps, append([]int{src}, p...))
		}
	} else {
		ps = in.kShortest(rc.dc, src, dst, rc.k)
	}
	as := make([][]int, len(ps))
	for i, p := range ps {
		as[i] = in.pathArcs(p)
	}
	rc.paths[key], rc.arcs[key] = ps, as
	return ps, as
}

// kShortest returns up to k loop-free paths from src to dst with the fewest
// hops (Yen's algorithm on hop counts), transiting switches only. The first
// is shortestPath's; ties among later ones keep port order.
func (in *Instance) kShortest(c distCache, src, dst, k int) [][]int {
	first := in.shortestPath(c, src, dst, nil)
	if first == nil {
		return nil
	}
	paths := [][]int{first}
	var cands [][]int
	for len(paths) < k {
		last := paths[len(paths)-1]
		for i := 0; i+1 < len(last); i++ {
			root := last[:i+1]
			bannedArc := map[int]bool{}
			for _, p := range paths {
				if len(p) > i+1 && slices.Equal(p[:i+1], root) {
					bannedArc[in.arcFrom(p[i], p[i+1])] = true
				}
			}
			bannedNode := map[int]bool{}
			for _, v := range root[:i] {
				bannedNode[v] = true
			}
			spur := in.bfsPath(root[i], dst, bannedNode, bannedArc)
			if spur == nil {
				continue
			}
			p := append(slices.Clone(root[:i]), spur...)
			if !containsPath(paths, p) && !containsPath(cands, p) {
				cands = append(cands, p)
			}
		}
		if len(cands) == 0 {
			break
		}
		best := 0
		for i, p := range cands {
			if len(p) < len(cands[best]) {
				best = i
			}
		}
		paths = append(paths, cands[best])
		cands = slices.Delete(cands, best, best+1)
	}
	return paths
}

func containsPath(ps [][]int, p []int) bool {
	for _, q := range ps {
		if slices.Equal(p, q) {
			return true
		}
	}
	return false
}

// bfsPath is a fewest-hop path avoiding the banned nodes and arcs, transiting switches only.
func (in *Instance) bfsPath(src, dst int, bannedNode, bannedArc map[int]bool) []int {
	prev := make([]int, len(in.names))
	for i := range prev {
		prev[i] = -2
	}
	prev[src] = -1
	queue := []int{src}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		if v == dst {
			break
		}
		if v != src && !in.sw[v] {
			continue
		}
		for _, a := range in.out[v] {
			u := in.arcs[a].to
			if prev[u] != -2 || bannedNode[u] || bannedArc[a] || in.arcs[a].cap <= 0 {
				continue
			}
			prev[u] = v
			queue = append(queue, u)
		}
	}
	if prev[dst] == -2 {
		return nil
	}
	var path []int
	for v := dst; v != -1; v = prev[v] {
		path = append(path, v)
	}
	slices.Reverse(path)
	return path
}

// balancer spreads paths over equal-cost arcs: it picks the arc carrying the
// fewest paths so far (lowest port on ties) and counts the paths it is told about.
type balancer struct{ use []float64 }

func (in *Instance) newBalancer() *balancer { return &balancer{use: make([]float64, len(in.arcs))} }

func (b *balancer) choose(cands []int) int {
	best := cands[0]
	for _, a := range cands[1:] {
		if b.use[a] < b.use[best] {
			best = a
		}
	}
	return best
}

func (b *balancer) add(in *Instance, path []int, weight float64) {
	for _, a := range in.pathArcs(path) {
		b.use[a] += weight
	}
}
