// Package switchhost runs many of grid's embedded switches in one process,
// each inside its own network namespace: a switch's ports are packet
// sockets on the veths of its namespace and its P4Runtime server listens
// in that namespace, so a controller reaches it exactly as it reaches a
// `grid switch` process started there (same address, same device id, one
// switch per listener). Every link stays a real veth that iftop and the
// monitor read.
//
// A fabric's switches in one process share one Go runtime and one
// dataplane.Group, whose workers (one per Go processor) serve the switches
// that have frames: a frame going from one switch to the next (a link the
// spec lists) wakes that switch in user space, not another process, with
// no wake-up from the kernel; and the fabric costs one process's memory
// instead of one per switch. Each switch still takes one packet at a time, as simple_switch
// does (engine.Config.Serial). A switch's namespace holds nothing but the
// switch, so its ports are exclusive (dataplane.Options.Exclusive) when
// the spec says so, as the controller's does.
//
// The controller writes a Spec (JSON) and starts `grid switch-host SPEC`:
//
//	spec, err := switchhost.Load("switches.json")
//	h, err := switchhost.Open(spec, switchhost.Options{})
//	err = h.Serve(ctx)
package switchhost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/grid-ina/grid/harness/dataplane"
	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/internal/specfile"
)

// Spec is the switches one host runs.
type Spec struct {
	Switches []Switch `json:"switches"`
}

// Switch is one switch: what `grid switch`'s command line says, plus the
// network namespace it runs in.
type Switch struct {
	// Name names the switch in logs and errors.
	Name string `json:"name"`
	// Namespace is the path of the switch's network namespace
	// (fabric.Node.NamespacePath).
	Namespace string `json:"namespace"`
	// DeviceID is the P4Runtime device_id.
	DeviceID uint64 `json:"device_id"`
	// GRPCAddr is where the switch's P4Runtime server listens, inside its
	// namespace; "" means dataplane.DefaultGRPCAddr.
	GRPCAddr string `json:"grpc_addr"`
	// CPUPort is the port of PacketIn and PacketOut; 0 means none.
	CPUPort uint32 `json:"cpu_port,omitempty"`
	// Ports are the data-plane ports, with delay and loss emulation.
	Ports []dataplane.PortSpec `json:"ports"`
	// ExclusivePorts says the ports' interfaces carry the switch's
	// frames only, so the namespace's IP stack is spared them
	// (dataplane.Options.Exclusive), as `grid switch --exclusive-ports`.
	ExclusivePorts bool `json:"exclusive_ports,omitempty"`
	// Links are the ports whose links lead to another switch of the
	// host: the host wakes that switch itself after the port sends,
	// and the kernel wakes nobody for the frames the port receives
	// (dataplane.Group.Link). Both ends list the link.
	Links []Link `json:"links,omitempty"`
}

// Link is a port of a switch whose veth leads to port PeerPort of switch
// Peer.
type Link struct {
	Port     uint32 `json:"port"`
	Peer     string `json:"peer"`
	PeerPort uint32 `json:"peer_port"`
}

// Load reads a spec from a JSON file and checks it.
func Load(path string) (*Spec, error) { return specfile.Load[Spec](path) }

// Write writes the spec to path as JSON.
func (s *Spec) Write(path string) error { return specfile.Write(path, s) }

// Check finds what would keep the switches from starting before anything
// is opened: a switch without a name or namespace, a name used twice, a
// link from or to a port a switch does not have, or that its other end
// does not list.
func (s *Spec) Check() error {
	if len(s.Switches) == 0 {
		return errors.New("switches: none given")
	}
	byName := map[string]*Switch{}
	for i, sw := range s.Switches {
		switch {
		case sw.Name == "":
			return fmt.Errorf("switches[%d].name: missing", i)
		case byName[sw.Name] != nil:
			return fmt.Errorf("switches[%d].name: %s is given twice", i, sw.Name)
		case sw.Namespace == "":
			return fmt.Errorf("switches[%d].namespace: missing (switch %s)", i, sw.Name)
		}
		byName[sw.Name] = &s.Switches[i]
	}
	for i, sw := range s.Switches {
		linked := map[uint32]bool{}
		for j, l := range sw.Links {
			field := fmt.Sprintf("switches[%d].links[%d]", i, j)
			peer := byName[l.Peer]
			switch {
			case !sw.hasPort(l.Port):
				return fmt.Errorf("%s.port: switch %s has no port %d", field, sw.Name, l.Port)
			case linked[l.Port]:
				return fmt.Errorf("%s.port: port %d of switch %s is linked twice", field, l.Port, sw.Name)
			case peer == nil:
				return fmt.Errorf("%s.peer: no switch %q", field, l.Peer)
			case !peer.hasPort(l.PeerPort):
				return fmt.Errorf("%s.peer_port: switch %s has no port %d", field, l.Peer, l.PeerPort)
			case !peer.linksTo(l.PeerPort, sw.Name, l.Port):
				return fmt.Errorf("%s: switch %s does not list its port %d's link to port %d of %s", field, l.Peer, l.PeerPort, l.Port, sw.Name)
			}
			linked[l.Port] = true
		}
	}
	return nil
}

func (sw *Switch) hasPort(port uint32) bool {
	for _, p := range sw.Ports {
		if p.Port == port {
			return true
		}
	}
	return false
}

// linksTo says whether sw lists the link from its port to port peerPort
// of peer.
func (sw *Switch) linksTo(port uint32, peer string, peerPort uint32) bool {
	for _, l := range sw.Links {
		if l.Port == port {
			return l.Peer == peer && l.PeerPort == peerPort
		}
	}
	return false
}

// Options configure a Host.
type Options struct {
	// LossSeed seeds every switch's loss emulation (dataplane.Options).
	LossSeed uint64
	// PcapDir, when set, gets a directory per switch (PcapDir/NAME) with
	// its ports' pcap files, as `grid switch --pcap`.
	PcapDir string
	// Logger receives every switch's log, each line naming its switch;
	// nil means slog.Default().
	Logger *slog.Logger
}

// openers is how many switches open at once: opening is mostly waiting
// for the kernel (a grace period for every port's receive ring), and a
// fabric has tens of switches.
const openers = 32

// Host is a set of running switches, which one dataplane.Group receives
// for.
type Host struct {
	names    []string
	switches []*dataplane.Switch
	logs     []*slog.Logger
	group    *dataplane.Group
}

// Open opens every switch in its namespace: ports, pcap files and
// P4Runtime listener. On error nothing stays open.
func Open(spec *Spec, opts Options) (*Host, error) {
	if err := spec.Check(); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	group, err := dataplane.NewGroup(len(spec.Switches), 0)
	if err != nil {
		return nil, err
	}
	h := &Host{names: make([]string, len(spec.Switches)), switches: make([]*dataplane.Switch, len(spec.Switches)),
		logs: make([]*slog.Logger, len(spec.Switches)), group: group}
	errs := make([]error, len(spec.Switches))
	sem := make(chan struct{}, openers)
	var wg sync.WaitGroup
	for i, sw := range spec.Switches {
		h.names[i] = sw.Name
		h.logs[i] = log.With("switch", sw.Name)
		cfg := dataplane.SwitchConfig{DeviceID: sw.DeviceID, Ports: sw.Ports, CPUPort: sw.CPUPort, GRPCAddr: sw.GRPCAddr,
			LossSeed: opts.LossSeed, Logger: h.logs[i], Exclusive: sw.ExclusivePorts, Group: group}
		if opts.PcapDir != "" {
			cfg.PcapDir = filepath.Join(opts.PcapDir, sw.Name)
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			err := fabric.InNamespace(sw.Namespace, func() (err error) {
				h.switches[i], err = dataplane.NewSwitch(cfg)
				return err
			})
			if err != nil {
				errs[i] = fmt.Errorf("switch %s: %w", sw.Name, err)
			}
		})
	}
	wg.Wait()
	index := make(map[string]int, len(spec.Switches))
	for i, sw := range spec.Switches {
		index[sw.Name] = i
	}
	for i, sw := range spec.Switches {
		for _, l := range sw.Links {
			if j := index[l.Peer]; errs[i] == nil && errs[j] == nil && i < j {
				if err := group.Link(h.switches[i].Dataplane(), l.Port, h.switches[j].Dataplane(), l.PeerPort); err != nil {
					errs[i] = fmt.Errorf("switch %s: %w", sw.Name, err)
				}
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, errors.Join(err, h.each(func(_ int, s *dataplane.Switch) error { return s.Close() }), group.Close())
	}
	return h, nil
}

// each runs f on every open switch in parallel and joins the errors.
func (h *Host) each(f func(int, *dataplane.Switch) error) error {
	errs := make([]error, len(h.switches))
	var wg sync.WaitGroup
	for i, s := range h.switches {
		if s != nil {
			wg.Go(func() { errs[i] = f(i, s) })
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Len is the number of switches.
func (h *Host) Len() int { return len(h.switches) }

// Serve runs every switch until ctx is cancelled or one of them fails
// (which stops the others: a fabric with a dead switch is no fabric), then
// closes them all and logs each one's port counters.
func (h *Host) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	err := h.each(func(i int, s *dataplane.Switch) error {
		err := s.Serve(ctx)
		if err != nil {
			err = fmt.Errorf("switch %s: %w", h.names[i], err)
			cancel()
		}
		s.Stats().Log(h.logs[i])
		return err
	})
	return errors.Join(err, h.group.Close())
}
