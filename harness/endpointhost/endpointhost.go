// Package endpointhost runs many emulated endpoints (the workers and PSs of
// harness/endpoint) in one process, each with its UDP socket in its own
// host's network namespace: a thread enters the namespace, opens the
// socket and comes back, and the socket stays in the namespace it was
// opened in, so its datagrams leave through that host's interface exactly
// as those of a `grid worker` process started there. One process instead
// of one per endpoint: a run's endpoints are ready in milliseconds, not a
// process start each, and cost a goroutine and a few kilobytes each, not a
// Go runtime.
//
// Each endpoint keeps what a process of its own has: its report file
// (endpoint.WriteReport) and its log file (its log lines and the summary
// `grid worker` prints). The runner writes a Spec (JSON) and starts
// `grid endpoint-host SPEC`:
//
//	spec, err := endpointhost.Load("endpoints.json")
//	h, err := endpointhost.Open(ctx, spec)
//	failed := h.Run(ctx, start) // start: closed on SIGUSR1
//
// Workers whose job spec says "start": "signal" send once start is closed;
// once every worker has ended, the PSs are stopped (as the runner stops
// PS processes), so the host exits when the jobs are done.
package endpointhost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"

	"github.com/grid-ina/grid/harness/endpoint"
	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/internal/specfile"
)

// Spec is the endpoints one host runs.
type Spec struct {
	Endpoints []Endpoint `json:"endpoints"`
}

// Endpoint is one worker or PS: what `grid worker` or `grid ps` gets on its
// command line, plus its namespace and log file.
type Endpoint struct {
	// Name names the endpoint in errors, e.g. "job1-worker0".
	Name string `json:"name"`
	// Namespace is the path of its host's network namespace
	// (fabric.Node.NamespacePath); "" is the host process's own.
	Namespace string `json:"namespace,omitempty"`
	// Spec is the job's endpoint spec file (harness/endpoint).
	Spec string `json:"spec"`
	// Role is endpoint.RoleWorker or endpoint.RolePS; Index the worker's
	// member index.
	Role  string `json:"role"`
	Index int    `json:"index,omitempty"`
	// Report and Log are the files the endpoint's report and log go to.
	Report string `json:"report"`
	Log    string `json:"log"`
}

// Load reads a spec from a JSON file and checks it.
func Load(path string) (*Spec, error) { return specfile.Load[Spec](path) }

// Write writes the spec to path as JSON.
func (s *Spec) Write(path string) error { return specfile.Write(path, s) }

// Check names the first endpoint field that is missing or wrong.
func (s *Spec) Check() error {
	if len(s.Endpoints) == 0 {
		return errors.New("endpoints: none")
	}
	names, reports := map[string]int{}, map[string]int{}
	for i, e := range s.Endpoints {
		switch {
		case e.Name == "":
			return fmt.Errorf("endpoints[%d].name: missing", i)
		case e.Spec == "":
			return fmt.Errorf("endpoints[%d] (%s).spec: missing", i, e.Name)
		case e.Report == "":
			return fmt.Errorf("endpoints[%d] (%s).report: missing", i, e.Name)
		case e.Log == "":
			return fmt.Errorf("endpoints[%d] (%s).log: missing", i, e.Name)
		case e.Role != endpoint.RoleWorker && e.Role != endpoint.RolePS:
			return fmt.Errorf("endpoints[%d] (%s).role: %q, want %q or %q", i, e.Name, e.Role, endpoint.RoleWorker, endpoint.RolePS)
		}
		if j, dup := names[e.Name]; dup {
			return fmt.Errorf("endpoints[%d].name: %s is endpoints[%d]'s too", i, e.Name, j)
		}
		if j, dup := reports[e.Report]; dup {
			return fmt.Errorf("endpoints[%d] (%s).report: %s is endpoints[%d]'s too", i, e.Name, e.Report, j)
		}
		names[e.Name], reports[e.Report] = i, i
	}
	return nil
}

// Host is a set of endpoints with their sockets open.
type Host struct {
	eps []*hosted
}

type hosted struct {
	Endpoint
	spec *endpoint.Spec
	conn *net.UDPConn
	log  *os.File
}

// Open loads every endpoint's job spec, creates its log file and opens its
// socket in its namespace. Nothing stays open when it fails.
func Open(ctx context.Context, s *Spec) (_ *Host, err error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	h := &Host{}
	defer func() {
		if err != nil {
			h.Close()
		}
	}()
	specs := map[string]*endpoint.Spec{}
	for _, e := range s.Endpoints {
		spec := specs[e.Spec]
		if spec == nil {
			if spec, err = endpoint.LoadSpec(e.Spec); err != nil {
				return nil, fmt.Errorf("%s: %w", e.Name, err)
			}
			specs[e.Spec] = spec
		}
		ep := &hosted{Endpoint: e, spec: spec}
		h.eps = append(h.eps, ep)
		if err := os.MkdirAll(filepath.Dir(e.Log), 0o755); err != nil {
			return nil, fmt.Errorf("%s: log: %w", e.Name, err)
		}
		if ep.log, err = os.Create(e.Log); err != nil {
			return nil, fmt.Errorf("%s: log: %w", e.Name, err)
		}
		listen := func() (err error) {
			ep.conn, err = endpoint.Listen(ctx, spec, e.Role, e.Index)
			return err
		}
		if e.Namespace != "" {
			err = fabric.InNamespace(e.Namespace, listen)
		} else {
			err = listen()
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name, err)
		}
	}
	return h, nil
}

// Len is the number of endpoints.
func (h *Host) Len() int { return len(h.eps) }

// Close closes the sockets and log files (Run closes them itself).
func (h *Host) Close() {
	for _, ep := range h.eps {
		if ep.conn != nil {
			ep.conn.Close()
		}
		if ep.log != nil {
			ep.log.Close()
		}
	}
}

// Run runs every endpoint until its job is done, its deadline passes or
// ctx is cancelled; workers on "start": "signal" wait for start. Once every
// worker has ended the PSs are stopped. Each endpoint's report and summary
// are written to its files; Run returns the endpoints that did not verify
// (their reports say why) and the errors of those that could not run or
// write their report.
func (h *Host) Run(ctx context.Context, start <-chan struct{}) (unverified []string, err error) {
	defer h.Close()
	psCtx, stopPSs := context.WithCancel(ctx)
	defer stopPSs()
	errs := make([]error, len(h.eps))
	verified := make([]bool, len(h.eps))
	var workers, pss sync.WaitGroup
	for i, ep := range h.eps {
		opts := []endpoint.Option{endpoint.UseConn(ep.conn), endpoint.WithLogger(slog.New(slog.NewTextHandler(ep.log, nil)))}
		ep.conn = nil // the endpoint closes it
		run := func(ctx context.Context) (*endpoint.Report, error) {
			if ep.Role == endpoint.RolePS {
				return endpoint.RunPS(ctx, ep.spec, opts...)
			}
			return endpoint.RunWorker(ctx, ep.spec, ep.Index, append(opts, endpoint.StartOn(start))...)
		}
		group, runCtx := &workers, ctx
		if ep.Role == endpoint.RolePS {
			group, runCtx = &pss, psCtx
		}
		group.Go(func() { verified[i], errs[i] = ep.run(runCtx, run) })
	}
	workers.Wait()
	stopPSs()
	pss.Wait()
	for i, ep := range h.eps {
		if errs[i] == nil && !verified[i] {
			unverified = append(unverified, ep.Name)
		}
	}
	return unverified, errors.Join(errs...)
}

// run runs the endpoint and writes its report and summary.
func (ep *hosted) run(ctx context.Context, run func(context.Context) (*endpoint.Report, error)) (verified bool, err error) {
	rep, err := run(ctx)
	if err != nil {
		fmt.Fprintf(ep.log, "grid %s: %v\n", ep.Role, err)
		return false, fmt.Errorf("%s: %w", ep.Name, err)
	}
	if err := endpoint.WriteReport(ep.Report, rep); err != nil {
		return false, fmt.Errorf("%s: %w", ep.Name, err)
	}
	rep.WriteSummary(ep.log)
	return rep.Verified, nil
}
