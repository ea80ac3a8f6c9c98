package p4test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/grid-ina/grid/harness/bmv2json"
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
// process on veth ports started from cfg (its Kind and Ports are set here,
// see portsFor) and removed again afterwards. opts.Trace also receives the switch's own log. The error is
// for a switch that could not be started or loaded; what goes wrong during
// the test is a failure in the result.
func RunSTF(ctx context.Context, kind TargetKind, cfg RemoteConfig, prog Program, cmds []stf.Command, opts stf.Options) (result *stf.Result, err error) {
	if kind == Engine {
		return stf.Run(prog.JSON, cmds, opts)
	}
	if prog.P4Info == nil {
		return nil, fmt.Errorf("the %s target loads the program over P4Runtime, which needs its P4Info (compile the .p4 source)", kind)
	}
	ports, err := portsFor(cmds, prog.JSON)
	if err != nil {
		return nil, err
	}
	cfg.Kind, cfg.Ports = kind, ports
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
		closeErr := target.Close()
		if result == nil {
			return
		}
		var at stf.Pos // reported at the last line of the test
		if len(cmds) > 0 {
			at = cmds[len(cmds)-1].Position()
		}
		if closeErr != nil {
			result.Failures = append(result.Failures, stf.Failure{Kind: stf.CommandFailed, At: at, Msg: "stopping the switch after the test: " + closeErr.Error()})
		}
		// Where the engine reports an unexpected packet, the switch sent
		// it out of a port the testbed has no veth for.
		dropped := target.DroppedWithoutVeth()
		for _, port := range slices.Sorted(maps.Keys(dropped)) {
			result.Failures = append(result.Failures, stf.Failure{Kind: stf.CommandFailed, At: at, Port: int(port),
				Msg: fmt.Sprintf("%d packet(s) sent to port %d, which has no veth (the switch has ports 0 to %d here; "+
					"on the engine they are unexpected packets)", dropped[port], port, cfg.Ports-1)})
		}
	}()
	return stf.RunOn(ctx, target, prog.JSON, cmds, opts)
}

// minPorts is the fewest ports a remote switch gets: ports a test names
// nowhere still catch what a program sends there by mistake.
const minPorts = 8

// portsFor is how many ports (0 up to it, less one) a remote switch gets for
// a test: one beyond the highest port its packet, expect, multicast node,
// mirroring and port-like action arguments name, at least minPorts.
// Port-like action arguments are those of add and setdefault lines whose
// parameter in progJSON is 9 bits wide, v1model's port number. A packet the
// program sends to a higher port leaves no trace on a veth; grid switch
// counts it (see Remote.DroppedWithoutVeth), bmv2 does not. A port beyond
// what a testbed can have is an error at its line.
func portsFor(cmds []stf.Command, progJSON []byte) (int, error) {
	highest, err := portsNamed(cmds)
	if err != nil {
		return 0, err
	}
	highest = max(highest+1, minPorts-1)
	if prog, err := bmv2json.Parse(progJSON); err == nil {
		// Without a readable program, which the switch then refuses
		// anyway, only the named ports count.
		highest = max(highest, portArgsNamed(cmds, prog))
	}
	return min(highest+1, maxPorts), nil
}

// portsNamed is the highest port a test's packet, expect, multicast node
// and mirroring commands name (0 if none).
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

// portWidth is the width of v1model's port numbers (PortId_t, egress_spec).
const portWidth = 9

// portArgsNamed is the highest value (0 if none) that an add or setdefault
// line gives an action parameter of portWidth bits. An action named by its
// short name may be any of the program's actions of that name; a value
// beyond maxPorts is no port a testbed can have, so it is left out.
func portArgsNamed(cmds []stf.Command, prog *bmv2json.Program) int {
	highest := 0
	for _, c := range cmds {
		var call stf.ActionCall
		switch c := c.(type) {
		case *stf.Add:
			call = c.Action
		case *stf.SetDefault:
			call = c.Action
		default:
			continue
		}
		for _, a := range prog.Actions {
			if a.Name != call.Name && !strings.HasSuffix(a.Name, "."+call.Name) {
				continue
			}
			for _, arg := range call.Args {
				for _, param := range a.RuntimeData {
					if param.Name == arg.Name && param.Bitwidth == portWidth && arg.Value.Value.IsInt64() && arg.Value.Value.Int64() < maxPorts {
						highest = max(highest, int(arg.Value.Value.Int64()))
					}
				}
			}
		}
	}
	return highest
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
