package fabric

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// nodeNamespace returns the namespace path of node in run, which must be up.
func nodeNamespace(run, node string) (string, error) {
	s, err := loadStateCached(run)
	if err != nil {
		return "", err
	}
	n := s.Node(node)
	if n == nil {
		return "", fmt.Errorf("run %q has no node %q (see 'grid ls %s')", run, node, run)
	}
	if s.Status != StatusUp {
		return "", fmt.Errorf("run %q is not up (%s)", run, s.Describe())
	}
	return n.NamespacePath(), nil
}

// Exec replaces the calling process with argv running inside node's namespace,
// as `ip netns exec` does: standard streams, signals and the exit status are
// the command's own. The process is recorded in the run's state first (exec
// keeps the PID and start time), so `grid down` stops it if it still runs.
// Exec returns only on error.
func Exec(run, node string, argv []string) error {
	if err := CheckRoot(); err != nil {
		return err
	}
	if len(argv) == 0 {
		return errors.New("no command given")
	}
	nsPath, err := nodeNamespace(run, node)
	if err != nil {
		return err
	}
	bin, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	self, err := ProcessOf(os.Getpid(), node, "exec")
	if err != nil {
		return err
	}
	if err := RecordProcess(run, self); err != nil {
		return err
	}
	// The exec happens from this thread, which carries the namespace into
	// the new program; the thread never returns to Go code unless exec fails.
	runtime.LockOSThread()
	ns, err := netns.GetFromPath(nsPath)
	if err != nil {
		return fmt.Errorf("open namespace of %s: %w", node, err)
	}
	if err := netns.Set(ns); err != nil {
		return fmt.Errorf("enter namespace of %s: %w", node, err)
	}
	ns.Close()
	remountSys()
	err = unix.Exec(bin, argv, os.Environ())
	// Still here: the thread is in the node's namespace and stays locked, so
	// Go discards it rather than reusing it for other goroutines.
	return fmt.Errorf("exec %s: %w", bin, err)
}

// remountSys gives the calling thread a private mount namespace with a sysfs
// of its network namespace, so /sys/class/net lists the node's interfaces (as
// `ip netns exec` arranges). It is a convenience: on failure the command
// still runs, only with the root namespace's /sys.
func remountSys() {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		slog.Debug("no private mount namespace for exec; /sys shows the root namespace", "err", err)
		return
	}
	if err := unix.Mount("", "/", "none", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
		slog.Debug("cannot make / a slave mount; /sys shows the root namespace", "err", err)
		return
	}
	if err := unix.Unmount("/sys", unix.MNT_DETACH); err != nil {
		slog.Debug("cannot unmount /sys in the private mount namespace", "err", err)
		return
	}
	if err := unix.Mount("sysfs", "/sys", "sysfs", 0, ""); err != nil {
		slog.Debug("cannot mount the namespace's sysfs", "err", err)
	}
}

// Start starts cmd inside node's namespace of run and records it in the run's
// state under role, so `grid down` and `grid clean` stop it. This is how the
// switch back end and the experiment runner attach processes to a run. The
// caller waits for cmd as usual; ForgetProcess removes the record early.
func Start(run, node string, cmd *exec.Cmd, role string) error {
	nsPath, err := nodeNamespace(run, node)
	if err != nil {
		return err
	}
	if err := InNamespace(nsPath, cmd.Start); err != nil {
		return fmt.Errorf("start %s in %s of run %q: %w", cmd.Path, node, run, err)
	}
	return record(run, cmd, node, role)
}

// StartOutside starts cmd in the calling process's own namespaces and
// records it in run's state under role, as Start does for a node's
// process: for a process that enters the nodes' namespaces itself, such as
// the switch host that runs every switch of a run. Its record names no node.
func StartOutside(run string, cmd *exec.Cmd, role string) error {
	if _, err := LoadState(run); err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s for run %q: %w", cmd.Path, run, err)
	}
	return record(run, cmd, "", role)
}

// record records the started cmd in run's state, or kills it.
func record(run string, cmd *exec.Cmd, node, role string) error {
	p, err := ProcessOf(cmd.Process.Pid, node, role)
	if err == nil {
		err = RecordProcess(run, p)
	}
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("record %s process of run %q: %w", role, run, err)
	}
	return nil
}

// InNamespace runs f on an OS thread inside the network namespace at
// nsPath (a file under NetnsDir). The thread returns to the root namespace
// before it is unlocked, or dies with its goroutine if it cannot, also when
// f panics or calls runtime.Goexit. A process forked by f inherits the
// namespace, and sockets f opens stay in it.
func InNamespace(nsPath string, f func() error) (err error) {
	ns, err := netns.GetFromPath(nsPath)
	if err != nil {
		return fmt.Errorf("open namespace %s: %w", nsPath, err)
	}
	defer ns.Close()
	th, err := lockNsThread()
	if err != nil {
		return err
	}
	defer th.release()
	if err := th.enter(ns); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, th.back()) }()
	return f()
}

// NamespacePath is the file under NetnsDir naming the node's namespace, for
// netns.GetFromPath or `ip netns exec`.
func (n *Node) NamespacePath() string { return filepath.Join(NetnsDir, n.Namespace) }

// Do runs f on an OS thread inside the node's namespace, for work that must
// happen there, such as opening AF_PACKET sockets on switch ports (sockets
// stay in the namespace they were opened in). f must not start goroutines
// that expect to be in the namespace: only its own thread is.
func (n *Node) Do(f func() error) error { return InNamespace(n.NamespacePath(), f) }

// OpenPort opens an AF_PACKET socket on the node's interface for port (a
// switch's P4 port, a host's interface number): bound to that interface, it
// receives every frame arriving there, but not those it sends, and sends
// frames out of it as they are. This is how a switch process attaches to its
// ports. The caller closes the descriptor; closing a packet socket waits for
// an RCU grace period, so close many in parallel.
func (n *Node) OpenPort(port int) (int, error) {
	ifc := n.Port(port)
	if ifc == nil {
		return -1, fmt.Errorf("node %s has no port %d", n.Name, port)
	}
	fd := -1
	// Protocol 0 receives nothing until bound; binding a socket that already
	// listened would wait for an RCU grace period to unhook it.
	err := n.Do(func() (err error) {
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return -1, fmt.Errorf("open packet socket in %s: %w", n.Namespace, err)
	}
	const ethPAll = unix.ETH_P_ALL<<8&0xff00 | unix.ETH_P_ALL>>8 // network byte order
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: ethPAll, Ifindex: ifc.Index}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind packet socket to %s in %s: %w", ifc.Name, n.Namespace, err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("packet socket on %s: ignore outgoing frames: %w", ifc.Name, err)
	}
	return fd, nil
}
