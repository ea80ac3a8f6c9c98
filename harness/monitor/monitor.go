package monitor

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/grid-ina/grid/harness/fabric"
)

// Options tune a Monitor.
type Options struct {
	// Interval is how often Start samples; 0 means 1 s.
	Interval time.Duration
	// Keep is how many samples are kept for rates and LinkSamples; 0 keeps
	// all, which an experiment wants for its traffic.csv. The 40 s rate
	// needs 40 s / Interval + 1 samples.
	Keep int
	// Workers is how many namespaces are read in parallel; 0 means GOMAXPROCS.
	Workers int
}

// Monitor samples the interface counters of one fabric run. Its methods are
// safe for concurrent use.
type Monitor struct {
	run     string
	opts    Options
	ifaces  []Interface
	readers []*reader

	// sampling serialises Sample with itself and with Close, which closes
	// the sockets Sample reads; readers is nil once closed.
	sampling sync.Mutex

	mu   sync.Mutex
	acct *account
	err  error // the first error of Start's sampling, which stopped it

	startOnce sync.Once
	stop      context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

func errorf(st *fabric.State, format string, args ...any) error {
	return fmt.Errorf("monitor run %q: "+format, append([]any{st.Run}, args...)...)
}

// New opens one rtnetlink socket in each namespace of the run and takes the
// first sample, from which totals count. Close it before the run is taken
// down: an open socket keeps its namespace, and so the run's interfaces, alive.
func New(st *fabric.State, opts Options) (*Monitor, error) {
	if opts.Interval == 0 {
		opts.Interval = time.Second
	}
	if opts.Interval < 0 || opts.Keep < 0 || opts.Workers < 0 {
		return nil, errorf(st, "negative option: interval %v, keep %d, workers %d", opts.Interval, opts.Keep, opts.Workers)
	}
	if opts.Workers == 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	ifaces, links, e, slot, err := layout(st)
	if err != nil {
		return nil, err
	}
	m := &Monitor{run: st.Run, opts: opts, ifaces: ifaces, acct: newAccount(links, e, opts.Keep)}
	for _, n := range st.Nodes {
		if len(n.Interfaces) == 0 {
			continue
		}
		slots := make(map[int]int, len(n.Interfaces))
		for _, ifc := range n.Interfaces {
			slots[ifc.Index] = slot[ifaceKey{n.Name, ifc.Name}]
		}
		r, err := openReader(&n, slots)
		if err != nil {
			m.closeHandles()
			return nil, errorf(st, "node %s: %w", n.Name, err)
		}
		m.readers = append(m.readers, r)
	}
	if err := m.Sample(); err != nil {
		m.closeHandles()
		return nil, err
	}
	return m, nil
}

// Sample reads every interface's counters now and adds the sample. Start
// calls it every interval; call it directly to sample at chosen moments.
func (m *Monitor) Sample() error {
	m.sampling.Lock()
	defer m.sampling.Unlock()
	if m.readers == nil {
		return fmt.Errorf("monitor run %q: closed", m.run)
	}
	began := time.Now()
	s := Sample{Counters: make([]Counters, len(m.ifaces))}
	jobs := make(chan *reader)
	errs := make([]error, m.opts.Workers)
	var wg sync.WaitGroup
	for w := range m.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range jobs {
				if err := r.read(s.Counters); err != nil && errs[w] == nil {
					errs[w] = err
				}
			}
		}()
	}
	for _, r := range m.readers {
		jobs <- r
	}
	close(jobs)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("monitor run %q: %w", m.run, err)
	}
	// The sample's time is the middle of its reads: one namespace's can
	// come a second after another's on a starved CPU, and a time at either
	// end puts every counter on one side of it.
	s.Time = began.Add(time.Since(began) / 2)
	m.mu.Lock()
	m.acct.add(s)
	m.mu.Unlock()
	return nil
}

// Start samples every Interval in the background until ctx ends or Close is
// called. A sampling error stops it; Err returns that error. Calling Start
// again does nothing.
func (m *Monitor) Start(ctx context.Context) {
	m.startOnce.Do(func() {
		ctx, m.stop = context.WithCancel(ctx)
		m.done = make(chan struct{})
		go m.loop(ctx)
	})
}

func (m *Monitor) loop(ctx context.Context) {
	defer close(m.done)
	tick := time.NewTicker(m.opts.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := m.Sample(); err != nil {
				m.mu.Lock()
				m.err = err
				m.mu.Unlock()
				return
			}
		}
	}
}

// Err returns the error that stopped Start's sampling, or nil.
func (m *Monitor) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// Interval returns the sampling interval.
func (m *Monitor) Interval() time.Duration { return m.opts.Interval }

// Interfaces lists the sampled interfaces, in the order of Sample.Counters.
func (m *Monitor) Interfaces() []Interface { return append([]Interface(nil), m.ifaces...) }

// Links lists the run's links, in the state's order.
func (m *Monitor) Links() []LinkInfo { return append([]LinkInfo(nil), m.acct.links...) }

// Snapshot returns every link's traffic as of the latest sample.
func (m *Monitor) Snapshot() Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.acct.snapshot(m.opts.Interval)
}

// Samples returns the kept samples, oldest first. They share their
// counters with the monitor: read them, do not change them.
func (m *Monitor) Samples() []Sample {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Sample(nil), m.acct.recent...)
}

// LinkSamples returns every link's cumulative traffic at each kept sample,
// sample by sample, links in order.
func (m *Monitor) LinkSamples() []LinkSample {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.acct.linkSamples()
}

// Close stops sampling and closes the netlink sockets. The samples stay
// readable.
func (m *Monitor) Close() error {
	m.closeOnce.Do(func() {
		m.startOnce.Do(func() {}) // a later Start must not begin sampling
		if m.stop != nil {
			m.stop()
			<-m.done
		}
		m.closeHandles()
	})
	return nil
}

func (m *Monitor) closeHandles() {
	m.sampling.Lock()
	defer m.sampling.Unlock()
	for _, r := range m.readers {
		r.close()
	}
	m.readers = nil
}
