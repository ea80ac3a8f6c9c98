// Package monitor accounts a fabric run's traffic the way iftop does: it
// samples the kernel counters of every interface of every node (rtnetlink,
// one socket kept open per namespace, namespaces read in parallel) and
// reports, per topology link (veth pair) and direction, bytes and packets
// since the first sample, rates averaged over the last 2, 10 and 40 seconds,
// and the peak rate over one interval.
//
// A veth end's transmit counters are what crossed the link in that direction;
// the receive counters of the other end normally agree, and a difference is
// frames the veth dropped. Frames count whole, from the Ethernet header on,
// without preamble or FCS. The experiment runner keeps every sample
// (LinkSamples) for its results; `grid monitor RUN` shows a live table
// (FormatTable).
//
// Use:
//
//	m, err := monitor.New(state, monitor.Options{Interval: time.Second}) // takes the first sample: totals count from it
//	m.Start(ctx) // samples every interval
//	// ... traffic ...
//	err = m.Sample()           // a last sample now, between ticks
//	m.Close()                  // stops, and closes the sockets: before fabric.Down
//	snap := m.Snapshot()       // per link: totals, 2/10/40 s rates, peak
//	samples := m.LinkSamples() // per sample and link: cumulative totals
//
// A sample of a k=4 fat-tree (36 namespaces, 96 interfaces) takes about
// 0.2 ms, of a k=8 one (208 namespaces, 768 interfaces) about 1 ms on two
// cores (BenchmarkSampleFatTreeK4, K8).
package monitor
