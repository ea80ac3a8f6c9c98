package p4test

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/grid-ina/grid/harness/stf"
)

// CompileFor compiles a P4 file for a kind of target: with p4c-bm2-ss for
// Bmv2 (real bmv2 runs what the reference compiler makes of the program),
// with the embedded compiler for the others.
func CompileFor(ctx context.Context, kind TargetKind, path string, opts CompileOptions) (Program, error) {
	if kind == Bmv2 {
		return CompileWithP4c(ctx, path, opts)
	}
	return CompileEmbedded(path, opts)
}

// RunSTF runs an STF test on a fresh switch of the given kind loaded with
// prog: for Engine in this process (stf.Run), for the others a switch
// process on veth ports started from cfg (its Kind and Ports are set here:
// one port more than the highest port the test names) and removed again
// afterwards. opts.Trace also receives the switch's own log. The error is
// for a switch that could not be started or loaded; what goes wrong during
// the test is a failure in the result.
func RunSTF(ctx context.Context, kind TargetKind, cfg RemoteConfig, prog Program, cmds []stf.Command, opts stf.Options) (result *stf.Result, err error) {
	if kind == Engine {
		return stf.Run(prog.JSON, cmds, opts)
	}
	if prog.P4Info == nil {
		return nil, fmt.Errorf("the %s target loads the program over P4Runtime, which needs its P4Info (compile the .p4 source)", kind)
	}
	highest, err := portsNamed(cmds)
	if err != nil {
		return nil, err
	}
	cfg.Kind, cfg.Ports = kind, highest+1
	if opts.Trace != nil {
		// The runner's trace and the switch's log interleave.
		w := &lockedWriter{w: opts.Trace}
		opts.Trace, cfg.Log = w, w
	}
	target, err := StartRemote(ctx, cfg, prog)
	if err != nil {
		return nil, err
	}
	// Deferred, so the switch and its namespace go also on a panic.
	defer func() {
		if closeErr := target.Close(); closeErr != nil && result != nil {
			var at stf.Pos // reported at the last line of the test
			if len(cmds) > 0 {
				at = cmds[len(cmds)-1].Position()
			}
			result.Failures = append(result.Failures, stf.Failure{Kind: stf.CommandFailed, At: at, Msg: "stopping the switch after the test: " + closeErr.Error()})
		}
	}()
	return stf.RunOn(ctx, target, prog.JSON, cmds, opts)
}

// portsNamed is the highest port a test's packet, expect, multicast node
// and mirroring commands name (0 if none): a remote switch gets ports 0 up
// to it. A packet the program sends to any higher port vanishes, as on a
// switch without that interface. A port beyond what a testbed can have is
// an error at its line.
func portsNamed(cmds []stf.Command) (int, error) {
	type port struct {
		n    int64 // maxPorts when it does not even fit an int64
		text string
	}
	highest := 0
	for _, c := range cmds {
		var ports []port
		switch c := c.(type) {
		case *stf.Packet:
			ports = []port{{int64(c.Port), strconv.Itoa(c.Port)}}
		case *stf.Expect:
			ports = []port{{int64(c.Port), strconv.Itoa(c.Port)}}
		case *stf.Direct:
			var args []stf.Number
			switch c.Name {
			case "mc_node_create", "mc_node_update":
				if len(c.Args) > 1 {
					args = c.Args[1:]
				}
			case "mirroring_add":
				if len(c.Args) > 1 {
					args = c.Args[1:2]
				}
			}
			for _, a := range args {
				p := port{maxPorts, a.Text}
				if a.Value.IsInt64() {
					p.n = a.Value.Int64()
				}
				ports = append(ports, p)
			}
		}
		for _, p := range ports {
			if p.n >= maxPorts {
				return 0, fmt.Errorf("%s: port %s: a switch on veth ports has ports 0 to %d here", c.Position(), p.text, maxPorts-1)
			}
			highest = max(highest, int(p.n))
		}
	}
	return highest, nil
}

// lockedWriter serializes writes from the runner and the switch's output.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
