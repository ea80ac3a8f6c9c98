package dataplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/p4rt"
)

// DefaultGRPCAddr is where simple_switch_grpc's P4Runtime server listens
// unless told otherwise.
const DefaultGRPCAddr = "0.0.0.0:9559"

// SwitchConfig is what simple_switch_grpc's command line says about a
// switch.
type SwitchConfig struct {
	// DeviceID is the P4Runtime device_id (--device-id).
	DeviceID uint64
	// Ports are the data-plane ports (-i PORT@INTERFACE), with grid's
	// delay and loss emulation.
	Ports []PortSpec
	// CPUPort is the port whose packets become PacketIn messages and where
	// PacketOut messages enter (--cpu-port); 0 means none.
	CPUPort uint32
	// GRPCAddr is the P4Runtime server's host:port (--grpc-server-addr);
	// "" means DefaultGRPCAddr. Port 0 picks a free port (see Addr).
	GRPCAddr string
	// Listener, when set, is where the P4Runtime server serves instead of
	// listening on GRPCAddr: it may belong to another network namespace
	// than the ports (grid switch --port-netns keeps the server where
	// controllers can reach it, as Mininet's switches share the root
	// namespace). The switch closes it.
	Listener net.Listener
	// Program, when set, is a bmv2 JSON the switch runs from the start,
	// with empty tables, until a controller commits a forwarding pipeline,
	// as simple_switch_grpc does with a program on its command line. nil
	// (--no-p4) drops every frame until then.
	Program []byte
	// PriorityQueues is the number of egress queues per port
	// (--priority-queues); 0 means 1.
	PriorityQueues int
	// PcapDir, LossSeed, Logger, Exclusive and Group are as in Options.
	PcapDir   string
	LossSeed  uint64
	Logger    *slog.Logger
	Exclusive bool
	Group     *Group
	// Trace, when set, receives the engine's per-packet log (parser
	// states, tables, actions, drops) of Program and of the pipelines
	// controllers set, as bmv2's --log-console.
	Trace io.Writer
}

// Switch is grid's embedded P4Runtime switch, the drop-in for
// simple_switch_grpc: a Dataplane whose pipeline is a P4Runtime server
// (package p4rt) over the engine.
type Switch struct {
	dp   *Dataplane
	rt   *p4rt.Server
	grpc *grpc.Server
	lis  net.Listener
	log  *slog.Logger

	queues *Queues

	// initial runs SwitchConfig.Program until controlled is set.
	initial    *engine.Switch
	controlled atomic.Bool

	closeOnce sync.Once
	closeErr  error
}

// NewSwitch loads the program, opens the ports in the calling thread's
// network namespace and listens for P4Runtime clients; Serve then runs the
// switch. On error nothing stays open.
func NewSwitch(cfg SwitchConfig) (sw *Switch, err error) {
	if cfg.Listener != nil {
		defer func() {
			if err != nil {
				cfg.Listener.Close()
			}
		}()
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Switch{log: log}
	if cfg.PriorityQueues == 0 {
		cfg.PriorityQueues = 1
	}
	if s.queues, err = NewQueues(cfg.Ports, cfg.PriorityQueues); err != nil {
		return nil, err
	}
	if cfg.Program != nil {
		prog, err := engine.Load(cfg.Program)
		if err != nil {
			return nil, fmt.Errorf("program: %w", err)
		}
		s.initial = engine.NewSwitch(prog, engine.Config{Trace: cfg.Trace, Serial: true, Queues: s.queues})
	}
	dp, err := Open(cfg.Ports, Options{PcapDir: cfg.PcapDir, LossSeed: cfg.LossSeed, Logger: log, Exclusive: cfg.Exclusive,
		Group: cfg.Group})
	if err != nil {
		return nil, err
	}
	s.dp = dp
	s.rt = p4rt.NewServer(p4rt.Options{DeviceID: cfg.DeviceID, CPUPort: cfg.CPUPort, Logger: log,
		Transmit: dp.Transmit, Trace: cfg.Trace, Queues: s.queues})
	addr := cfg.GRPCAddr
	if addr == "" {
		addr = DefaultGRPCAddr
	}
	if s.lis = cfg.Listener; s.lis == nil {
		s.lis, err = net.Listen("tcp", addr)
	}
	if err != nil {
		dp.Close()
		return nil, fmt.Errorf("P4Runtime server: %w", err)
	}
	var opts []grpc.ServerOption
	if s.initial != nil {
		opts = append(opts, grpc.UnaryInterceptor(s.watchPipeline))
	}
	s.grpc = grpc.NewServer(opts...)
	s.rt.Register(s.grpc)
	s.grpc.RegisterService(&queueServiceDesc, s)
	return s, nil
}

// watchPipeline notices the first pipeline a controller commits, which
// replaces the program given on the command line.
func (s *Switch) watchPipeline(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handle grpc.UnaryHandler) (any, error) {
	resp, err := handle(ctx, req)
	if r, ok := req.(*p4v1.SetForwardingPipelineConfigRequest); ok && err == nil {
		switch r.Action {
		case p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT, p4v1.SetForwardingPipelineConfigRequest_COMMIT,
			p4v1.SetForwardingPipelineConfigRequest_RECONCILE_AND_COMMIT:
			if !s.controlled.Swap(true) {
				s.log.Info("the controller's pipeline replaces the program given at start")
			}
		}
	}
	return resp, err
}

// Queues is the switch's egress queue model, for set_queue_rate and
// set_queue_depth.
func (s *Switch) Queues() *Queues { return s.queues }

// Addr is the address the P4Runtime server listens on.
func (s *Switch) Addr() net.Addr { return s.lis.Addr() }

// Ports are the switch's data-plane ports.
func (s *Switch) Ports() []PortSpec { return s.dp.Ports() }

// Stats are the data plane's counters.
func (s *Switch) Stats() Stats { return s.dp.Stats() }

// Dataplane is the switch's data plane, for Group.Link.
func (s *Switch) Dataplane() *Dataplane { return s.dp }

// Process is the switch's pipeline: the program given at start until a
// controller commits one, then the P4Runtime server's.
func (s *Switch) Process(port uint32, frame []byte, emit func(engine.Output)) error {
	if s.initial != nil && !s.controlled.Load() {
		return s.initial.Process(port, frame, emit)
	}
	return s.rt.Process(port, frame, emit)
}

// Serve runs the switch until ctx is cancelled (or the server or a port
// fails), then closes everything: the P4Runtime connections, the listener
// and the ports.
func (s *Switch) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- s.grpc.Serve(s.lis) }()
	ran := make(chan error, 1)
	go func() { ran <- s.dp.Run(ctx, s) }()
	var errs []error
	select {
	case <-ctx.Done():
	case err := <-served:
		errs = append(errs, fmt.Errorf("P4Runtime server on %s: %w", s.lis.Addr(), err))
		served = nil
	case err := <-ran:
		errs = append(errs, err)
		ran = nil
	}
	cancel()
	// Stop, not GracefulStop: a controller's stream stays open until it
	// leaves.
	s.grpc.Stop()
	if served != nil {
		// nil after Stop, or ErrServerStopped when Stop came first (a
		// signal right after the start).
		if err := <-served; !errors.Is(err, grpc.ErrServerStopped) {
			errs = append(errs, err)
		}
	}
	if ran != nil {
		errs = append(errs, <-ran)
	}
	errs = append(errs, s.Close())
	return errors.Join(errs...)
}

// Close closes the switch without serving: for a Switch whose Serve is never
// called (Serve closes it itself).
func (s *Switch) Close() error {
	s.closeOnce.Do(func() {
		s.grpc.Stop()
		if err := s.lis.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			s.closeErr = err
		}
		s.closeErr = errors.Join(s.closeErr, s.dp.Close())
	})
	return s.closeErr
}
