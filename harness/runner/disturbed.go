package runner

import (
	"fmt"

	"github.com/grid-ina/grid/harness/internal/cputime"
)

// Thresholds beyond which an outcome's figures are not the emulated
// network's alone.
const (
	// othersCoresLimit is how much CPU (in cores, averaged over the jobs'
	// run) other processes may take before they have slowed this run.
	othersCoresLimit = 0.25
	// cpuBoundShare is the part of the machine's cores this run's own
	// processes may use before its rates are the CPU's rather than the
	// modelled links'.
	cpuBoundShare = 0.9
	// resentLimit is the share of fragments that may be resent after
	// timeouts before the timings are the transport's recovery rather than
	// the network's rates.
	resentLimit = 0.01
)

// disturbances are the reasons o's timings and rates should not be read
// as clean measurements of the emulated network.
func disturbances(o *Outcome) []string {
	var why []string
	why = append(why, cpuDisturbances(o.CPU)...)
	var sent, resent int
	for _, j := range o.Jobs {
		for _, w := range j.Workers {
			if w != nil {
				sent += w.Sent
				resent += w.Resent
			}
		}
	}
	if sent > 0 && float64(resent) > resentLimit*float64(sent) {
		why = append(why, fmt.Sprintf("%d of %d fragments (%.1f%%) were resent after timeouts or losses", resent, sent, 100*float64(resent)/float64(sent)))
	}
	return why
}

func cpuDisturbances(sh cputime.Share) []string {
	if sh.Wall <= 0 {
		return nil
	}
	var why []string
	if others := sh.OthersCores(); others > othersCoresLimit {
		why = append(why, fmt.Sprintf("other processes used %.2f of the machine's %d cores while the jobs ran", others, sh.Cores))
	}
	if ours := sh.TreeCores(); ours > cpuBoundShare*float64(sh.Cores) {
		why = append(why, fmt.Sprintf("the run was CPU-bound: its processes used %.2f of %d cores, so its rates are the CPU's, not the modelled links'", ours, sh.Cores))
	}
	return why
}
