package monitor

import (
	"time"

	"github.com/grid-ina/grid/harness/fabric"
)

// Windows are the spans the rates of a Snapshot average over, as iftop's
// "last 2s", "last 10s" and "last 40s" columns.
var Windows = [3]time.Duration{2 * time.Second, 10 * time.Second, 40 * time.Second}

// Counters are one interface's kernel counters (rtnl_link_stats64).
type Counters struct {
	RxBytes, RxPackets, RxDropped uint64
	TxBytes, TxPackets, TxDropped uint64
}

// Sample is every interface's counters at one time, indexed like
// Monitor.Interfaces.
type Sample struct {
	Time     time.Time
	Counters []Counters
}

// Interface is one sampled veth end of the run.
type Interface struct {
	Node string
	Name string
	Port int
	// Link is the index of its link in LinkInfos (and in the state's Links).
	Link int
}

// LinkInfo names a link (a veth pair) of the run: A and B as topology files
// write endpoints ("s1:p3", "h1:eth0"), IfA and IfB its two interfaces.
type LinkInfo struct {
	Index    int
	A, B     string
	NodeA    string
	NodeB    string
	IfA, IfB string
	RateBits float64 // shaped bandwidth per direction; 0: unshaped
}

// Totals are bytes and packets counted in one direction of a link since the
// monitor's first sample.
type Totals struct {
	Bytes   uint64
	Packets uint64
}

// Direction is one direction of a link (A to B or B to A) in a Snapshot.
type Direction struct {
	// Sent is what the sending end transmitted (its tx counters); rates and
	// peaks are of Sent.
	Sent Totals
	// Received is what the far end counted as received; less than Sent when
	// the veth dropped frames (its peer was down).
	Received Totals
	// Rates are bytes per second averaged over Windows (2 s, 10 s, 40 s), or
	// over the time since the first sample when that is shorter.
	Rates [3]float64
	// Peak is the highest rate over one sampling interval, bytes per second.
	Peak float64
}

// LinkStats is one link in a Snapshot.
type LinkStats struct {
	LinkInfo
	AB, BA Direction
}

// Snapshot is the traffic of every link as of the latest sample.
type Snapshot struct {
	Time    time.Time // of the latest sample
	Since   time.Time // of the first sample, where totals start
	Samples int       // taken so far
	Links   []LinkStats
}

// LinkSample is one link's cumulative traffic at one sample, since the
// first: what results write to traffic.csv.
type LinkSample struct {
	Time   time.Time
	Link   int
	AB, BA Totals
}

// ends are the interface slots of a link's two ends.
type ends struct{ a, b int }

// account keeps the samples and derives per-link traffic from them. It
// knows nothing of namespaces, so its arithmetic is tested on made-up samples.
type account struct {
	links  []LinkInfo
	ends   []ends
	keep   int // samples kept; 0: all
	first  Sample
	recent []Sample // the kept samples, oldest first; the last is the latest
	taken  int
	peaks  [][2]float64 // per link: A to B, B to A
}

func newAccount(links []LinkInfo, e []ends, keep int) *account {
	return &account{links: links, ends: e, keep: keep, peaks: make([][2]float64, len(links))}
}

// sent returns the bytes and packets the end at slot from sent between two samples.
func sent(old, cur Sample, from int) Totals {
	return Totals{
		Bytes:   cur.Counters[from].TxBytes - old.Counters[from].TxBytes,
		Packets: cur.Counters[from].TxPackets - old.Counters[from].TxPackets,
	}
}

func received(old, cur Sample, at int) Totals {
	return Totals{
		Bytes:   cur.Counters[at].RxBytes - old.Counters[at].RxBytes,
		Packets: cur.Counters[at].RxPackets - old.Counters[at].RxPackets,
	}
}

func (a *account) add(s Sample) {
	if a.taken == 0 {
		a.first = s
	} else {
		prev := a.recent[len(a.recent)-1]
		if dt := s.Time.Sub(prev.Time).Seconds(); dt > 0 {
			for i, e := range a.ends {
				a.peaks[i][0] = max(a.peaks[i][0], float64(sent(prev, s, e.a).Bytes)/dt)
				a.peaks[i][1] = max(a.peaks[i][1], float64(sent(prev, s, e.b).Bytes)/dt)
			}
		}
	}
	a.taken++
	a.recent = append(a.recent, s)
	if a.keep > 0 && len(a.recent) > a.keep {
		// Copy rather than reslice, so the dropped samples are freed.
		a.recent = append(a.recent[:0:0], a.recent[len(a.recent)-a.keep:]...)
	}
}

// base returns the sample a rate over window w starts from: the latest one
// at least w (less half an interval of timer jitter) before the latest
// sample, or the oldest kept when none is that old.
func (a *account) base(w, slack time.Duration) Sample {
	last := a.recent[len(a.recent)-1]
	for i := len(a.recent) - 2; i >= 0; i-- {
		if last.Time.Sub(a.recent[i].Time) >= w-slack {
			return a.recent[i]
		}
	}
	return a.recent[0]
}

func (a *account) snapshot(interval time.Duration) Snapshot {
	snap := Snapshot{Samples: a.taken, Links: make([]LinkStats, len(a.links))}
	for i := range a.links {
		snap.Links[i].LinkInfo = a.links[i]
	}
	if a.taken == 0 {
		return snap
	}
	last := a.recent[len(a.recent)-1]
	snap.Time, snap.Since = last.Time, a.first.Time
	var bases [len(Windows)]Sample
	for w := range Windows {
		bases[w] = a.base(Windows[w], interval/2)
	}
	for i, e := range a.ends {
		ls := &snap.Links[i]
		ls.AB = direction(a.first, last, bases, e.a, e.b, a.peaks[i][0])
		ls.BA = direction(a.first, last, bases, e.b, e.a, a.peaks[i][1])
	}
	return snap
}

func direction(first, last Sample, bases [len(Windows)]Sample, from, to int, peak float64) Direction {
	d := Direction{Sent: sent(first, last, from), Received: received(first, last, to), Peak: peak}
	for w, b := range bases {
		if dt := last.Time.Sub(b.Time).Seconds(); dt > 0 {
			d.Rates[w] = float64(sent(b, last, from).Bytes) / dt
		}
	}
	return d
}

// linkSamples flattens the kept samples into per-link cumulative totals.
func (a *account) linkSamples() []LinkSample {
	out := make([]LinkSample, 0, len(a.recent)*len(a.ends))
	for _, s := range a.recent {
		for i, e := range a.ends {
			out = append(out, LinkSample{Time: s.Time, Link: i, AB: sent(a.first, s, e.a), BA: sent(a.first, s, e.b)})
		}
	}
	return out
}

// ifaceKey names an interface of a run: host interfaces share names (every
// host has an eth0), so the node is part of it.
type ifaceKey struct{ node, name string }

// layout lists the run's interfaces and links and where each link's ends
// are among the interfaces.
func layout(st *fabric.State) ([]Interface, []LinkInfo, []ends, map[ifaceKey]int, error) {
	var ifaces []Interface
	// Host interfaces share names (every host has an eth0), so the key is the node too.
	slot := map[ifaceKey]int{} // -> index in ifaces
	for _, n := range st.Nodes {
		for _, ifc := range n.Interfaces {
			slot[ifaceKey{n.Name, ifc.Name}] = len(ifaces)
			ifaces = append(ifaces, Interface{Node: n.Name, Name: ifc.Name, Port: ifc.Port, Link: -1})
		}
	}
	links := make([]LinkInfo, len(st.Links))
	e := make([]ends, len(st.Links))
	for i, l := range st.Links {
		a, okA := slot[ifaceKey{l.A.Node, l.IfA}]
		b, okB := slot[ifaceKey{l.B.Node, l.IfB}]
		for _, end := range []struct {
			ok          bool
			field, node string
			iface       string
		}{{okA, "if_a", l.A.Node, l.IfA}, {okB, "if_b", l.B.Node, l.IfB}} {
			if !end.ok {
				return nil, nil, nil, nil, errorf(st, "links[%d] (%s-%s).%s: node %s has no interface %s", i,
					st.EndpointString(l.A), st.EndpointString(l.B), end.field, end.node, end.iface)
			}
		}
		ifaces[a].Link, ifaces[b].Link = i, i
		links[i] = LinkInfo{Index: i, A: st.EndpointString(l.A), B: st.EndpointString(l.B),
			NodeA: l.A.Node, NodeB: l.B.Node, IfA: l.IfA, IfB: l.IfB, RateBits: l.RateBits}
		e[i] = ends{a, b}
	}
	return ifaces, links, e, slot, nil
}
