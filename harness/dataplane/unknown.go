package dataplane

import (
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strconv"
)

// unknownEgressMsg is the message of the lines LogUnknownEgress writes.
const unknownEgressMsg = "frames sent to a port without an interface were dropped"

// Log logs each port's counters, and the frames no port took: in total
// and, at warning level, by port number (LogUnknownEgress). A switch does
// this as it exits.
func (s Stats) Log(log *slog.Logger) {
	for _, p := range s.Ports {
		log.Info("port counters", "port", p.PortSpec.String(), "rx_frames", p.RxFrames, "rx_bytes", p.RxBytes,
			"tx_frames", p.TxFrames, "tx_bytes", p.TxBytes, "loss_drops", p.LossDrops, "queue_drops", p.QueueDrops,
			"tx_errors", p.TxErrors, "rx_errors", p.RxErrors, "rx_drops", p.RxDrops, "unsent_at_stop", p.UnsentAtStop)
	}
	if s.PipelineErrors+s.UnknownEgress > 0 {
		log.Info("pipeline counters", "errors", s.PipelineErrors, "to_ports_without_interface", s.UnknownEgress)
	}
	if s.LateWakes > 0 {
		log.Info("receive counters", "late_wakes", s.LateWakes)
	}
	s.LogUnknownEgress(log)
}

// LogUnknownEgress logs, at warning level, one line per port number the
// pipeline sent frames to that had no interface, with their count. `grid
// switch` logs them as it exits; ParseUnknownEgress reads them back from
// its output, which is how a test driver learns of packets that left the
// switch where it could not see them (P4Runtime has no counter for it).
func (s Stats) LogUnknownEgress(log *slog.Logger) {
	for _, port := range slices.Sorted(maps.Keys(s.UnknownEgressByPort)) {
		log.Warn(unknownEgressMsg, "port", port, "frames", s.UnknownEgressByPort[port])
	}
}

// unknownEgressLine matches a LogUnknownEgress line in the output of
// slog's text handler and of its default handler (which does not quote the
// message).
var unknownEgressLine = regexp.MustCompile(regexp.QuoteMeta(unknownEgressMsg) + `"? port=(\d+) frames=(\d+)`)

// ParseUnknownEgress reads the frame counts LogUnknownEgress logged in a
// switch's output, by port number; nil when there are none.
func ParseUnknownEgress(output []byte) map[uint32]uint64 {
	var counts map[uint32]uint64
	for _, m := range unknownEgressLine.FindAllSubmatch(output, -1) {
		port, err1 := strconv.ParseUint(string(m[1]), 10, 32)
		frames, err2 := strconv.ParseUint(string(m[2]), 10, 64)
		if err1 != nil || err2 != nil {
			continue // digits too many for the type: not a line of ours
		}
		if counts == nil {
			counts = map[uint32]uint64{}
		}
		counts[uint32(port)] += frames
	}
	return counts
}
