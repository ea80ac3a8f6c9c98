package fabric

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/grid-ina/grid/harness/topo"
)

// Options tune Up.
type Options struct {
	// Name is the run name, the prefix of its namespaces; DefaultRunName(t) when empty.
	Name string
	// Workers is how many goroutines build in parallel; 0 means 2 per CPU.
	Workers int
	// HostAddresses, when set, addresses host interfaces (by endpoint) as a
	// course's topology file does (p4lang/tutorials' topology.json) instead
	// of the plan: that address with its prefix route, that MAC and ARP on,
	// as Linux configures an interface by default; no gateway, static
	// neighbour or route (the course's host commands add those).
	HostAddresses map[topo.Endpoint]HostAddress
	// MininetNames names switch ports as Mininet does, NODE-ethPORT
	// (s1-eth1), instead of by the run's tag; bmv2's pcap files take
	// these names. Each switch's ports are in its own namespace, so names
	// of two runs cannot clash.
	MininetNames bool
	// Owned makes the calling process the run's owner (State.Owner): the
	// run lives only as long as it does, like an experiment's fabric, and
	// 'grid ls' shows it dead once the owner is gone without removing it.
	Owned bool
}

// HostAddress is a host interface's address and MAC (Options.HostAddresses).
type HostAddress struct {
	IP  netip.Prefix
	MAC net.HardwareAddr
}

// ErrNotRoot is returned when the fabric lacks the privileges to build.
var ErrNotRoot = errors.New("building network namespaces needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN): run grid as root")

// CheckRoot returns ErrNotRoot unless the process runs as root.
func CheckRoot() error {
	if unix.Geteuid() != 0 {
		return ErrNotRoot
	}
	return nil
}

// CanBuild reports whether this process can build runs: it must be root and
// able to create network namespaces, which root in a container without
// CAP_SYS_ADMIN is not. Tests use it to skip; it tries once and remembers.
var CanBuild = sync.OnceValue(func() error {
	if err := CheckRoot(); err != nil {
		return err
	}
	return inScratchNamespace(func() error { return nil })
})

// Up builds topology t as a run: one network namespace per node, one veth
// pair per link, host addressing, static neighbours and routes, and tbf
// shaping, all named after the run. On any error, or when ctx is cancelled
// (SIGINT or SIGTERM in the CLI), everything built so far is removed before
// Up returns. Nothing is created when the process is not root or t is invalid.
// The returned state is also in StateDir/RUN/state.json.
func Up(ctx context.Context, t *topo.Topology, opts Options) (*State, error) {
	if err := CheckRoot(); err != nil {
		return nil, err
	}
	plan, err := t.Plan()
	if err != nil {
		return nil, err
	}
	run := opts.Name
	if run == "" {
		run = DefaultRunName(t)
	}
	if err := CheckRunName(run); err != nil {
		return nil, err
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = 2 * runtime.NumCPU()
	}
	began := time.Now()

	var bp *blueprint
	var st *State
	err = globalLock(func() error {
		if _, err := os.Stat(runDir(run)); err == nil {
			return fmt.Errorf("run %q exists: remove it with 'grid down %s' or choose another --name", run, run)
		}
		tag, err := freeTag(run)
		if err != nil {
			return err
		}
		if bp, err = newBlueprint(run, tag, t, plan, opts); err != nil {
			return err
		}
		for _, np := range bp.nodes {
			if namespaceExists(np.ns) {
				return fmt.Errorf("network namespace %s already exists (not made by grid for run %q): choose another --name", np.ns, run)
			}
		}
		st = bp.state()
		st.Created = began.UTC()
		self, err := ProcessOf(os.Getpid(), "", "grid-up")
		if err != nil {
			return err
		}
		st.Builder = &self
		if err := os.Mkdir(runDir(run), 0o755); err != nil {
			return fmt.Errorf("create run directory: %w", err)
		}
		if err := st.save(); err != nil {
			os.RemoveAll(runDir(run))
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	b := &builder{bp: bp, workers: workers}
	err = b.build(ctx, st)
	if err == nil {
		st.Status = StatusUp
		if opts.Owned {
			owner := *st.Builder
			owner.Role = "owner"
			st.Owner = &owner
		}
		st.Builder = nil
		err = st.save()
	}
	if err != nil {
		b.bp.closeHandles()
		if rerr := b.rollback(); rerr != nil {
			return nil, fmt.Errorf("%w; rolling back failed too, run 'grid clean': %w", err, rerr)
		}
		return nil, err
	}
	slog.Debug("run up", "run", run, "namespaces", len(bp.nodes), "links", len(bp.links), "took", time.Since(began))
	return st, nil
}

// freeTag picks run's interface tag, avoiding the tags of existing runs.
// Called under the global lock.
func freeTag(run string) (string, error) {
	runs, err := Runs()
	if err != nil {
		return "", err
	}
	used := map[string]bool{}
	for _, r := range runs {
		if s, err := LoadState(r); err == nil {
			used[s.Tag] = true
		}
	}
	for attempt := 0; attempt < 1000; attempt++ {
		if tag := runTag(run, attempt); !used[tag] {
			return tag, nil
		}
	}
	return "", fmt.Errorf("no free interface tag for run %q", run)
}

type builder struct {
	bp      *blueprint
	workers int

	mu      sync.Mutex
	created []string // namespaces mounted so far, removed on rollback
}

func (b *builder) build(ctx context.Context, st *State) error {
	if err := prepareNetnsDir(); err != nil {
		return err
	}
	probe := make(chan error, 1)
	go func() { probe <- probeNetem() }()

	t0 := time.Now()
	if err := b.createNamespaces(ctx); err != nil {
		return err
	}
	t1 := time.Now()
	if err := b.createLinks(ctx); err != nil {
		return err
	}
	t2 := time.Now()
	netemErr := <-probe
	st.Emulation = Emulation{Netem: netemErr == nil}
	if netemErr != nil {
		st.Emulation.NetemError = netemErr.Error()
	}
	if err := b.configure(ctx, netemErr == nil); err != nil {
		return err
	}
	t3 := time.Now()
	if err := b.waitOperUp(ctx); err != nil {
		return err
	}
	t4 := time.Now()
	b.bp.closeHandles()
	if !st.Emulation.Netem {
		for _, l := range st.Links {
			if l.Delay > 0 || l.Loss > 0 {
				st.Emulation.Pending = append(st.Emulation.Pending, l)
			}
		}
		if n := len(st.Emulation.Pending); n > 0 {
			slog.Warn("link delay and loss are NOT applied: netem is unavailable, so the switch back end must emulate them "+
				"(listed by 'grid ls RUN' and under emulation.pending in the run state)",
				"run", b.bp.run, "links", n, "netem_error", st.Emulation.NetemError)
		}
	}
	slog.Debug("build phases", "namespaces", t1.Sub(t0), "links", t2.Sub(t1), "configure", t3.Sub(t2), "wait until operational", t4.Sub(t3))
	return ctx.Err()
}

// parallel hands the job indexes 0..n-1 to up to b.workers goroutines, each
// running worker over the channel (so a worker can hold per-goroutine
// resources: a locked thread, a socket). It stops handing out jobs at the
// first error or when ctx is done, and returns the first error.
func (b *builder) parallel(ctx context.Context, n int, worker func(jobs <-chan int) error) error {
	jobs := make(chan int)
	errs := make(chan error, b.workers)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var once sync.Once
	for w := 0; w < min(b.workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := worker(jobs); err != nil {
				errs <- err
				once.Do(func() { close(stop) })
			}
		}()
	}
feed:
	for i := 0; i < n; i++ {
		select {
		case jobs <- i:
		case <-stop:
			break feed
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return ctx.Err()
}

// createNamespaces creates and mounts one namespace per node, switches off
// IPv6 in it (no link-local addresses, DAD, MLD or router solicitations),
// brings up its loopback and opens the handles the later phases use.
func (b *builder) createNamespaces(ctx context.Context) error {
	ipv6 := true
	if _, err := os.Stat("/proc/sys/net/ipv6"); err != nil {
		ipv6 = false
	}
	return b.parallel(ctx, len(b.bp.nodes), func(jobs <-chan int) error {
		th, err := lockNsThread()
		if err != nil {
			return err
		}
		defer th.release()
		for i := range jobs {
			np := b.bp.nodes[i]
			ns, err := th.create(np.ns)
			if err != nil {
				return err
			}
			b.mu.Lock()
			b.created = append(b.created, np.ns)
			b.mu.Unlock()
			np.handle = ns
			err = setupNamespace(np, ipv6)
			if berr := th.back(); berr != nil {
				return errors.Join(err, berr)
			}
			if err != nil {
				return fmt.Errorf("namespace %s: %w", np.ns, err)
			}
		}
		return nil
	})
}

// setupNamespace runs on a thread inside np's fresh namespace.
func setupNamespace(np *nodePlan, ipv6 bool) error {
	if ipv6 {
		// Writing "all" sets the interfaces present (lo) and "default", which
		// interfaces created later inherit: one write instead of two, each a
		// slow lookup in the namespace's fresh sysctl tables.
		// TestNoInterfaceSendsAnythingByItself proves the veths stay quiet.
		if err := writeSysctl("net/ipv6/conf/all/disable_ipv6", "1"); err != nil {
			return err
		}
	}
	h, err := netlink.NewHandleAt(netns.None(), unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("open rtnetlink socket: %w", err)
	}
	np.nl = h
	if err := h.LinkSetUp(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: 1, Name: "lo"}}); err != nil {
		return fmt.Errorf("bring up lo: %w", err)
	}
	if np.node.Kind != topo.KindSwitch {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open ioctl socket: %w", err)
		}
		np.sock = fd
	}
	return nil
}

// createLinks creates each link as one veth pair whose ends are born inside
// their namespaces with their names, MACs, MTUs and ifindexes, without ARP
// or multicast, the first end up: one rtnetlink request per link, no moves,
// no lookups.
func (b *builder) createLinks(ctx context.Context) error {
	return b.parallel(ctx, len(b.bp.links), func(jobs <-chan int) error {
		sock, err := nl.GetNetlinkSocketAt(netns.None(), netns.None(), unix.NETLINK_ROUTE)
		if err != nil {
			return fmt.Errorf("open rtnetlink socket: %w", err)
		}
		defer sock.Close()
		sh := &nl.SocketHandle{Socket: sock}
		for i := range jobs {
			if err := createVeth(sh, b.bp.links[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// vethFlags are the flags of every veth end: no ARP (neighbours are static),
// no multicast (no IGMP reports polluting traffic counts), and up. Only the
// first end can be created up: the kernel opens the peer before pairing the
// two, and a veth without its peer refuses to open (ENOTCONN), so configure
// brings the peer up.
const (
	vethFlags  = unix.IFF_UP | unix.IFF_NOARP
	vethChange = unix.IFF_UP | unix.IFF_NOARP | unix.IFF_MULTICAST
)

// flags are the interface's flags: vethFlags, or for a host addressed with
// Options.HostAddresses, ARP and multicast on as Linux has them by default.
func (ip *ifacePlan) flags() uint32 {
	if ip.linux {
		return unix.IFF_UP | unix.IFF_MULTICAST
	}
	return vethFlags
}

func createVeth(sh *nl.SocketHandle, lp *linkPlan) error {
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, unix.NLM_F_CREATE|unix.NLM_F_EXCL|unix.NLM_F_ACK)
	req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: sh}
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(lp.a.index)
	msg.Flags = lp.a.flags()
	msg.Change = vethChange
	req.AddData(msg)
	for _, attr := range endAttrs(lp.a) {
		req.AddData(attr)
	}
	info := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	info.AddRtAttr(nl.IFLA_INFO_KIND, nl.NonZeroTerminated("veth"))
	peer := info.AddRtAttr(nl.IFLA_INFO_DATA, nil).AddRtAttr(nl.VETH_INFO_PEER, nil)
	pmsg := nl.NewIfInfomsgChild(peer, unix.AF_UNSPEC)
	pmsg.Index = int32(lp.b.index)
	pmsg.Flags = lp.b.flags() &^ unix.IFF_UP
	pmsg.Change = vethChange
	for _, attr := range endAttrs(lp.b) {
		peer.AddChild(attr)
	}
	req.AddData(info)
	if _, err := req.Execute(unix.NETLINK_ROUTE, 0); err != nil {
		return fmt.Errorf("create veth %s/%s <-> %s/%s: %w", lp.a.node.ns, lp.a.name, lp.b.node.ns, lp.b.name, err)
	}
	return nil
}

// endAttrs are the attributes of one veth end. It has one transmit and one
// receive queue, which is what a veth uses anyway: without the counts the
// kernel allocates a queue per CPU and trims them to one right after, and
// each trim waits for an expedited RCU grace period.
func endAttrs(ip *ifacePlan) []*nl.RtAttr {
	return []*nl.RtAttr{
		nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated(ip.name)),
		nl.NewRtAttr(unix.IFLA_ADDRESS, ip.mac),
		nl.NewRtAttr(unix.IFLA_MTU, nl.Uint32Attr(uint32(ip.mtu))),
		nl.NewRtAttr(unix.IFLA_NUM_TX_QUEUES, nl.Uint32Attr(1)),
		nl.NewRtAttr(unix.IFLA_NUM_RX_QUEUES, nl.Uint32Attr(1)),
		nl.NewRtAttr(unix.IFLA_NET_NS_FD, nl.Uint32Attr(uint32(ip.node.handle))),
	}
}

// configure brings up the second end of every veth, addresses the hosts and
// shapes every interface, node by node in parallel, through the rtnetlink socket each namespace already has open.
func (b *builder) configure(ctx context.Context, netem bool) error {
	return b.parallel(ctx, len(b.bp.nodes), func(jobs <-chan int) error {
		for i := range jobs {
			np := b.bp.nodes[i]
			for _, ip := range np.ifaces {
				if ip.link.b == ip {
					if err := np.nl.LinkSetUp(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: ip.index, Name: ip.name}}); err != nil {
						return fmt.Errorf("%s: bring up %s: %w", np.ns, ip.name, err)
					}
				}
				if ip.host != nil {
					if err := configureHostInterface(np, ip); err != nil {
						return fmt.Errorf("%s %s: %w", np.ns, ip.name, err)
					}
				}
				if err := shape(np.nl, ip, netem); err != nil {
					return fmt.Errorf("%s %s: %w", np.ns, ip.name, err)
				}
			}
		}
		return nil
	})
}

// configureHostInterface switches off transmit checksum offload (raw-socket
// readers on the switch side must see correct checksums), then installs the
// address, a static neighbour entry for the gateway and the route through it.
// The address gets no prefix route: every destination goes through the
// gateway, whose MAC is known, so no ARP is ever needed.
func configureHostInterface(np *nodePlan, ip *ifacePlan) error {
	if err := setTxChecksum(np.sock, ip.name, false); err != nil {
		return err
	}
	hi := ip.host
	link := &netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: ip.index, Name: ip.name}}
	if !hi.IP.IsValid() {
		return fmt.Errorf("addressing plan gives %s no IP address", hi.Host)
	}
	addr := &netlink.Addr{
		IPNet: &net.IPNet{IP: hi.IP.Addr().AsSlice(), Mask: net.CIDRMask(hi.IP.Bits(), hi.IP.Addr().BitLen())},
		Flags: unix.IFA_F_NOPREFIXROUTE,
	}
	if ip.linux {
		addr.Flags = 0 // the prefix route, as Linux adds it
	}
	if err := np.nl.AddrAdd(link, addr); err != nil {
		return fmt.Errorf("add address %s: %w", hi.IP, err)
	}
	if !hi.Gateway.IsValid() {
		return nil
	}
	gw := net.IP(hi.Gateway.AsSlice())
	if err := np.nl.NeighAdd(&netlink.Neigh{
		LinkIndex: ip.index, Family: unix.AF_INET, State: netlink.NUD_PERMANENT,
		IP: gw, HardwareAddr: hi.GatewayMAC,
	}); err != nil {
		return fmt.Errorf("add neighbour %s lladdr %s: %w", gw, hi.GatewayMAC, err)
	}
	// Hosts route the plan's network (topo.HostNetwork) via the gateway and
	// nothing else: a packet for anywhere else fails at the sender with
	// ENETUNREACH instead of reaching a switch and its traffic counts. The
	// first interface's route is in the main table. A multi-homed host's
	// further interfaces each get a routing table whose route leaves
	// through them, chosen by source address: a socket bound to an
	// interface's address sends through that interface.
	hostNet := &net.IPNet{IP: topo.HostNetwork.Addr().AsSlice(), Mask: net.CIDRMask(topo.HostNetwork.Bits(), 32)}
	route := &netlink.Route{LinkIndex: ip.index, Dst: hostNet, Gw: gw, Flags: int(netlink.FLAG_ONLINK)}
	if ip != np.ifaces[0] {
		route.Table = sourceTableBase + ip.port
		rule := netlink.NewRule()
		rule.Src = &net.IPNet{IP: addr.IP, Mask: net.CIDRMask(32, 32)}
		rule.Table = route.Table
		rule.Priority = route.Table
		if err := np.nl.RuleAdd(rule); err != nil {
			return fmt.Errorf("add rule from %s lookup %d: %w", addr.IP, rule.Table, err)
		}
	}
	if err := np.nl.RouteAdd(route); err != nil {
		return fmt.Errorf("add route %s via %s (table %d): %w", topo.HostNetwork, gw, route.Table, err)
	}
	return nil
}

// sourceTableBase + interface number is the routing table (and rule
// priority) of a multi-homed host's interfaces after the first.
const sourceTableBase = 100

// operUpTimeout bounds the wait for the kernel to mark links operational:
// usually tens of milliseconds, but the kernel's link-watch work handles 100
// interfaces per run and can be starved on a loaded machine.
const operUpTimeout = 30 * time.Second

// waitOperUp waits until every interface is operationally up. The kernel
// attaches an interface's qdisc only then (in its link-watch work, shortly
// after the carrier comes on); until that happens it silently drops what is
// sent, so Up returns only once every link carries frames.
func (b *builder) waitOperUp(ctx context.Context) error {
	deadline := time.Now().Add(operUpTimeout)
	return b.parallel(ctx, len(b.bp.nodes), func(jobs <-chan int) error {
		for i := range jobs {
			np := b.bp.nodes[i]
			for {
				down, err := notOperUp(np)
				if err != nil {
					return err
				}
				if down == "" {
					break
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("%s: interface %s not operational after %v", np.ns, down, operUpTimeout)
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				time.Sleep(time.Millisecond)
			}
		}
		return nil
	})
}

// notOperUp returns the name of an interface of np that is not yet
// operationally up, or "" when all are.
func notOperUp(np *nodePlan) (string, error) {
	if len(np.ifaces) == 0 {
		return "", nil
	}
	links, err := np.nl.LinkList()
	if err != nil {
		return "", fmt.Errorf("%s: list interfaces: %w", np.ns, err)
	}
	up := map[int]bool{}
	for _, l := range links {
		up[l.Attrs().Index] = l.Attrs().OperState == netlink.OperUp
	}
	for _, ip := range np.ifaces {
		if !up[ip.index] {
			return ip.name, nil
		}
	}
	return "", nil
}

// tbfLatency bounds the time a packet waits in a shaped queue (tc's "latency"):
// the queue holds rate*tbfLatency bytes beyond the burst, and at least
// tbfMinQueue: a slow link (an emulation scaled down to a few Mbit/s) still
// buffers the windows of the workers that share it, as a switch's buffers
// would, rather than dropping their fragments at the first burst.
const (
	tbfLatency  = 20 * time.Millisecond
	tbfMinQueue = 64 << 10
)

// tbfParams returns the tbf burst and limit in bytes for a rate in bytes/s:
// the burst covers a millisecond at line rate, and at least two full frames so
// a frame always fits the bucket.
func tbfParams(rateBytes float64, mtu int) (burst, limit uint32) {
	b := math.Max(rateBytes/1000, float64(2*(mtu+14)))
	l := b + math.Max(rateBytes*tbfLatency.Seconds(), tbfMinQueue)
	return uint32(math.Min(b, math.MaxUint32/2)), uint32(math.Min(l, math.MaxUint32))
}

// QueueDelay is the longest a frame waits in the shaped queue of a link of
// the given bandwidth (bits/s) and MTU: a full tbf queue drained at the
// link's rate; 0 for an unshaped link. Retransmission timeouts shorter than
// this fire while the fragment is still queued.
func QueueDelay(bandwidth float64, mtu int) time.Duration {
	if bandwidth <= 0 {
		return 0
	}
	_, limit := tbfParams(bandwidth/8, mtu)
	return time.Duration(float64(limit) * 8 / bandwidth * float64(time.Second))
}

// shape adds the root qdisc rootQdisc chooses for an interface, if any.
func shape(h *netlink.Handle, ip *ifacePlan, netem bool) error {
	q := rootQdisc(ip, netem)
	if q == nil {
		return nil
	}
	if err := h.QdiscAdd(q); err != nil {
		l := ip.link.link
		if n, ok := q.(*netlink.Netem); ok {
			return fmt.Errorf("add netem (delay %v, loss %g%%, rate %d B/s): %w", l.Delay, l.Loss, n.Rate64, err)
		}
		return fmt.Errorf("add tbf rate %.0f bit/s: %w", float64(l.Bandwidth), err)
	}
	return nil
}

// rootQdisc is the qdisc shaping an interface's egress to its link (each
// direction is shaped at its sender): tbf at the link's bandwidth; when netem
// exists and the link has delay or loss, netem instead, doing both rate and
// impairment; nil for an unshaped link.
func rootQdisc(ip *ifacePlan, netem bool) netlink.Qdisc {
	l := ip.link.link
	attrs := netlink.QdiscAttrs{LinkIndex: ip.index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT}
	if netem && (l.Delay > 0 || l.Loss > 0) {
		return netlink.NewNetem(attrs, netemParams(l, ip.mtu))
	}
	if l.Bandwidth <= 0 {
		return nil
	}
	return tbfQdisc(attrs, float64(l.Bandwidth), ip.mtu)
}

// tbfQdisc shapes to bits per second an interface of the given MTU; the
// rates topo.CheckLinkBandwidth admits keep its burst time within tbf's
// 32-bit ticks.
func tbfQdisc(attrs netlink.QdiscAttrs, bits float64, mtu int) *netlink.Tbf {
	rateBytes := bits / 8
	burst, limit := tbfParams(rateBytes, mtu)
	return &netlink.Tbf{
		QdiscAttrs: attrs,
		Rate:       uint64(rateBytes),
		Buffer:     netlink.Xmittime(uint64(rateBytes), burst),
		Limit:      limit,
	}
}

// netemDefaultLimit is netem's own queue limit in packets (tc's default).
const netemDefaultLimit = 1000

// netemParams are the netem settings for link l: its delay, loss and rate.
// netem counts the packets its delay line holds against its limit, so the
// limit covers a full link's worth of frames in flight over the delay plus
// tbfLatency of queueing, or netem's default when that is larger: at 100
// Gbit/s and 2 ms the default would drop most of a window.
func netemParams(l *topo.Link, mtu int) netlink.NetemQdiscAttrs {
	rateBytes := float64(l.Bandwidth) / 8
	limit := uint32(netemDefaultLimit)
	if inFlight := rateBytes * (l.Delay + tbfLatency).Seconds() / float64(mtu+14); inFlight > netemDefaultLimit {
		limit = uint32(math.Min(math.Ceil(inFlight), math.MaxUint32))
	}
	return netlink.NetemQdiscAttrs{
		Latency: uint32(min(l.Delay.Microseconds(), math.MaxUint32)),
		Loss:    float32(l.Loss),
		Rate64:  uint64(rateBytes),
		Limit:   limit,
	}
}

// rollback removes what a failed or interrupted build created: its namespaces
// (which takes their interfaces with them) and then the run's state.
func (b *builder) rollback() error {
	b.mu.Lock()
	created := b.created
	b.mu.Unlock()
	if err := removeNamespaces(created, b.workers); err != nil {
		return err
	}
	if err := os.RemoveAll(runDir(b.bp.run)); err != nil {
		return fmt.Errorf("remove state of run %q: %w", b.bp.run, err)
	}
	slog.Info("rolled back", "run", b.bp.run, "namespaces", len(created))
	return nil
}

// removeNamespaces removes namespaces in parallel (unmounting waits for RCU
// grace periods, which overlap across threads).
func removeNamespaces(names []string, workers int) error {
	if workers <= 0 {
		workers = 2 * runtime.NumCPU()
	}
	jobs := make(chan string)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for w := 0; w < min(workers, len(names)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range jobs {
				if err := removeNamespace(name); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	for _, n := range names {
		jobs <- n
	}
	close(jobs)
	wg.Wait()
	return errors.Join(errs...)
}
