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
package monitor
