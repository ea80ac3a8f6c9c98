// Package fabric turns a topo.Topology into real network namespaces and veth
// links, fast and without leaks: the job Mininet does, in Go.
//
// Up builds a run: one namespace per host and per switch (RUN-NODE, bind-mounted
// under /run/netns like `ip netns add`), one veth pair per link created straight
// into both namespaces with a single rtnetlink request, host addresses, static
// neighbours and routes (no ARP), IPv6 and multicast off, transmit checksum
// offload off on hosts, and tbf shaping per link. Namespaces are created in
// parallel on threads that unshare and then return to the root namespace.
//
// A run's state (StateDir/RUN/state.json) is written before anything is built
// and lists every namespace and interface: the switch back end reads its ports
// there (Node.Interfaces, Port = P4 port) and attaches to them (Node.OpenPort,
// Node.Do, or a bmv2 process started with Start and -i PORT@NAME). Components
// that start processes in a run record them (Start, RecordProcess) so Down and
// Clean stop them.
// Down removes one run by unmounting its namespaces, which makes the kernel
// delete their interfaces in one batch; Clean removes everything left by
// crashed or interrupted runs, found in the kernel (namespaces named after
// the run, processes inside them or working on its folders) and on disk
// (its temporary folders, TempDir) as well as in the state, which may be
// missing or corrupt (leftovers.go). A run built for a process (Options.Owned)
// shows as dead once that process is gone without removing it.
package fabric
