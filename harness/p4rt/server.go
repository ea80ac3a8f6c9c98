package p4rt

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grid-ina/grid/harness/engine"
)

// APIVersion is the P4Runtime version Capabilities reports.
const APIVersion = "1.5.0"

// Options configure a Server.
type Options struct {
	// DeviceID is the device_id every request must carry.
	DeviceID uint64
	// CPUPort is the port of the controller: PacketOut messages enter the
	// pipeline on it and packets the program sends to it become PacketIn
	// messages. 0 means there is none (PacketOut is refused and packets
	// sent to port 0 are ordinary packets).
	CPUPort uint32
	// Ports, when non-zero, is the number of data-plane ports 0..Ports-1:
	// Process refuses other ingress ports (except CPUPort), and packets sent
	// to other ports (except CPUPort) are dropped.
	Ports uint32
	// Logger receives the server's log; nil discards it.
	Logger *slog.Logger
	// Now is the clock of meters and timestamps; nil means time.Now.
	Now func() time.Time
	// Trace, when set, receives the engine's per-packet trace of every
	// pipeline (bmv2 --log-console style: parser states, tables, actions,
	// drops). nil turns tracing off, which costs nothing.
	Trace io.Writer
	// Transmit receives the packets that PacketOut messages make the
	// pipeline send to data-plane ports (the data plane's transmit
	// function; Output.Data is only valid during the call). nil drops them.
	Transmit func(engine.Output)
	// Queues, when set, is the egress queue model of every pipeline
	// (engine.Config.Queues).
	Queues engine.Queues
}

// Server is a P4Runtime server over the engine. Its zero value is not
// usable: create it with NewServer.
type Server struct {
	p4v1.UnimplementedP4RuntimeServer

	// pipe is the committed pipeline, read without locks by Process.
	// It comes first, and opts' port numbers right after it: what a
	// packet reads of the server lies in one cache line (a switch host's
	// many switches leave few of theirs in the CPU's caches).
	pipe atomic.Pointer[pipeline]
	opts Options
	log  *slog.Logger
	// mu serialises control-plane changes (Write, pipeline changes)
	// against each other and against Read.
	mu sync.RWMutex
	// saved is the config of VERIFY_AND_SAVE, waiting for COMMIT.
	saved *pipeline

	arb arbitration
}

// NewServer creates a server with no pipeline: it answers Capabilities and
// arbitration at once, Write and Read after SetForwardingPipelineConfig.
func NewServer(opts Options) *Server {
	s := &Server{opts: opts, log: opts.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.arb.init()
	return s
}

// idleSweep is how often idle entries are looked for (bmv2's ageing
// monitor sweeps on a similar period).
const idleSweep = 100 * time.Millisecond

// sweepIdleEntries streams IdleTimeoutNotifications for pl's idle entries
// until another pipeline replaces it.
func (s *Server) sweepIdleEntries(pl *pipeline) {
	t := time.NewTicker(idleSweep)
	defer t.Stop()
	for range t.C {
		if s.pipe.Load() != pl {
			return
		}
		s.mu.RLock()
		n := pl.idleNotification()
		s.mu.RUnlock()
		if n != nil {
			s.toPrimary(&p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_IdleTimeoutNotification{IdleTimeoutNotification: n}})
		}
	}
}

// Register registers the P4Runtime service on g.
func (s *Server) Register(g *grpc.Server) { p4v1.RegisterP4RuntimeServer(g, s) }

// LoadPipeline installs a pipeline as SetForwardingPipelineConfig with
// VERIFY_AND_COMMIT does: all tables, groups, sessions and extern state
// start afresh.
func (s *Server) LoadPipeline(p4info *p4configv1.P4Info, bmv2JSON []byte) error {
	pl, err := newPipeline(p4info, bmv2JSON, &s.opts)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commit(pl)
	return nil
}

// commit makes pl the running pipeline; the caller holds s.mu.
func (s *Server) commit(pl *pipeline) {
	pl.send = s.toPrimary
	if old := s.pipe.Swap(pl); old != nil {
		releaseReplaced()
	}
	for _, td := range pl.tables {
		if td.idleTimeout {
			go s.sweepIdleEntries(pl)
			break
		}
	}
	s.saved = nil
	s.log.Info("pipeline committed", "tables", len(pl.tables), "actions", len(pl.actions))
}

// emitter wraps a data-plane emit function: outputs to the CPU port become
// PacketIn messages, outputs to ports outside the switch are dropped. It
// lives on the stack of Process (the engine keeps no emit function past
// its call), so that Process allocates nothing of its own.
type emitter struct {
	s    *Server
	pl   *pipeline
	next func(engine.Output)
}

func (e *emitter) emit(o engine.Output) {
	s := e.s
	switch {
	case s.opts.CPUPort != 0 && o.Port == s.opts.CPUPort:
		s.packetIn(e.pl, o.Data)
	case s.opts.Ports != 0 && o.Port >= s.opts.Ports:
		s.log.Debug("dropped packet to a port outside the switch", "port", o.Port)
	case e.next != nil:
		e.next(o)
	}
}

// Process runs one frame received on a data-plane port through the
// current pipeline and calls emit for every packet that leaves on a
// data-plane port. Without a pipeline the frame is dropped. It is safe to
// call from many goroutines, also while the control plane writes.
func (s *Server) Process(port uint32, frame []byte, emit func(engine.Output)) error {
	pl := s.pipe.Load()
	if pl == nil {
		return nil
	}
	if s.opts.Ports != 0 && port >= s.opts.Ports && (s.opts.CPUPort == 0 || port != s.opts.CPUPort) {
		return fmt.Errorf("ingress port %d: the switch has ports 0..%d", port, s.opts.Ports-1)
	}
	return s.run(pl, port, frame, emit)
}

func (s *Server) run(pl *pipeline, port uint32, frame []byte, emit func(engine.Output)) error {
	e := emitter{s: s, pl: pl, next: emit}
	return pl.sw.Process(port, frame, e.emit)
}

// Capabilities reports the P4Runtime version.
func (s *Server) Capabilities(context.Context, *p4v1.CapabilitiesRequest) (*p4v1.CapabilitiesResponse, error) {
	return &p4v1.CapabilitiesResponse{P4RuntimeApiVersion: APIVersion}, nil
}

func (s *Server) checkDevice(id uint64) error {
	if id != s.opts.DeviceID {
		return status.Errorf(codes.NotFound, "device_id: %d is not this device (%d)", id, s.opts.DeviceID)
	}
	return nil
}

// writerRequest is what Write and SetForwardingPipelineConfig requests
// share: who sends them.
type writerRequest interface {
	GetDeviceId() uint64
	GetRole() string
	GetRoleId() uint64
	GetElectionId() *p4v1.Uint128
}

// checkWriter accepts a request that changes the switch only from the
// primary controller of the default role of this device.
func (s *Server) checkWriter(req writerRequest) error {
	if err := s.checkDevice(req.GetDeviceId()); err != nil {
		return err
	}
	if err := checkRole(req.GetRole(), req.GetRoleId()); err != nil {
		return err
	}
	return s.arb.checkPrimary(req.GetElectionId())
}

// checkRole refuses roles other than the default one with NOT_FOUND, as
// the specification asks for a role the device does not know.
func checkRole(role string, roleID uint64) error {
	if role != "" || roleID != 0 {
		return status.Errorf(codes.NotFound, "role: %q (id %d) is not a role of this device: it has only the default role", role, roleID)
	}
	return nil
}

// SetForwardingPipelineConfig verifies, saves or commits a pipeline. The
// device config is the bmv2 JSON, as for simple_switch_grpc.
func (s *Server) SetForwardingPipelineConfig(_ context.Context, req *p4v1.SetForwardingPipelineConfigRequest) (*p4v1.SetForwardingPipelineConfigResponse, error) {
	if err := s.checkWriter(req); err != nil {
		return nil, err
	}
	build := func() (*pipeline, error) {
		pl, err := newPipeline(req.GetConfig().GetP4Info(), req.GetConfig().GetP4DeviceConfig(), &s.opts)
		if err != nil {
			return nil, status.Error(codes.InvalidArgument, err.Error())
		}
		pl.cookie = req.GetConfig().GetCookie()
		return pl, nil
	}
	switch req.Action {
	case p4v1.SetForwardingPipelineConfigRequest_VERIFY:
		if _, err := build(); err != nil {
			return nil, err
		}
	case p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_SAVE:
		pl, err := build()
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.saved = pl
		s.mu.Unlock()
	case p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT:
		pl, err := build()
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.commit(pl)
		s.mu.Unlock()
	case p4v1.SetForwardingPipelineConfigRequest_COMMIT:
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.saved == nil {
			return nil, status.Error(codes.FailedPrecondition, "action: COMMIT without a config saved by VERIFY_AND_SAVE")
		}
		s.commit(s.saved)
	case p4v1.SetForwardingPipelineConfigRequest_RECONCILE_AND_COMMIT:
		return nil, status.Error(codes.Unimplemented, "action: RECONCILE_AND_COMMIT is not supported (as in simple_switch_grpc); use VERIFY_AND_COMMIT, which resets all state")
	default:
		return nil, status.Errorf(codes.InvalidArgument, "action: %s is not a valid action", req.Action)
	}
	return &p4v1.SetForwardingPipelineConfigResponse{}, nil
}

// GetForwardingPipelineConfig returns the committed pipeline, or an empty
// config when none is committed.
func (s *Server) GetForwardingPipelineConfig(_ context.Context, req *p4v1.GetForwardingPipelineConfigRequest) (*p4v1.GetForwardingPipelineConfigResponse, error) {
	if err := s.checkDevice(req.DeviceId); err != nil {
		return nil, err
	}
	cfg := &p4v1.ForwardingPipelineConfig{}
	pl := s.pipe.Load()
	if pl == nil {
		return &p4v1.GetForwardingPipelineConfigResponse{Config: cfg}, nil
	}
	cfg.Cookie = pl.cookie
	switch req.ResponseType {
	case p4v1.GetForwardingPipelineConfigRequest_ALL:
		cfg.P4Info, cfg.P4DeviceConfig = pl.info, pl.json
	case p4v1.GetForwardingPipelineConfigRequest_COOKIE_ONLY:
	case p4v1.GetForwardingPipelineConfigRequest_P4INFO_AND_COOKIE:
		cfg.P4Info = pl.info
	case p4v1.GetForwardingPipelineConfigRequest_DEVICE_CONFIG_AND_COOKIE:
		cfg.P4DeviceConfig = pl.json
	default:
		return nil, status.Errorf(codes.InvalidArgument, "response_type: %s is not a valid response type", req.ResponseType)
	}
	return &p4v1.GetForwardingPipelineConfigResponse{Config: cfg}, nil
}

// pipelineOrError returns the committed pipeline or FAILED_PRECONDITION.
func (s *Server) pipelineOrError() (*pipeline, error) {
	pl := s.pipe.Load()
	if pl == nil {
		return nil, status.Error(codes.FailedPrecondition, "no forwarding pipeline config: call SetForwardingPipelineConfig first")
	}
	return pl, nil
}
