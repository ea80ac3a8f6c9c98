package fabric

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// NetnsDir is where named network namespaces are bind-mounted, as by `ip netns add`.
const NetnsDir = "/run/netns"

// prepareNetnsDir makes NetnsDir a shared mount point, exactly as ip(8) does,
// so a namespace unmounted here is unmounted in every mount namespace that
// sees it and the kernel can free it promptly.
func prepareNetnsDir() error {
	if err := os.MkdirAll(NetnsDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", NetnsDir, err)
	}
	err := unix.Mount("", NetnsDir, "none", unix.MS_SHARED|unix.MS_REC, "")
	if err == nil {
		return nil
	}
	if err != unix.EINVAL {
		return fmt.Errorf("make %s a shared mount: %w", NetnsDir, err)
	}
	// EINVAL: not a mount point yet; bind it onto itself first.
	if err := unix.Mount(NetnsDir, NetnsDir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind-mount %s onto itself: %w", NetnsDir, err)
	}
	if err := unix.Mount("", NetnsDir, "none", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("make %s a shared mount: %w", NetnsDir, err)
	}
	return nil
}

// nsThread is an OS thread locked to a goroutine that creates namespaces by
// unsharing and always returns to its origin namespace afterwards. Unshare
// only moves the calling thread, so the rest of the process never leaves the
// root namespace.
type nsThread struct {
	origin netns.NsHandle
	broken bool // could not return to origin: the thread must die with its goroutine
}

// lockNsThread locks the calling goroutine to its thread; call release when done.
func lockNsThread() (*nsThread, error) {
	runtime.LockOSThread()
	origin, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("open current network namespace: %w", err)
	}
	return &nsThread{origin: origin}, nil
}

// release unlocks the thread, unless it is stranded in a foreign namespace:
// then it stays locked, and Go destroys it when the goroutine exits.
func (t *nsThread) release() {
	t.origin.Close()
	if !t.broken {
		runtime.UnlockOSThread()
	}
}

// back returns the thread to its origin namespace.
func (t *nsThread) back() error {
	if err := netns.Set(t.origin); err != nil {
		t.broken = true
		return fmt.Errorf("return to the root network namespace: %w", err)
	}
	return nil
}

// enter moves the thread into ns; call back afterwards.
func (t *nsThread) enter(ns netns.NsHandle) error {
	if err := netns.Set(ns); err != nil {
		return fmt.Errorf("enter network namespace: %w", err)
	}
	return nil
}

// inScratchNamespace runs f on a thread inside a new anonymous network
// namespace, which the kernel frees with everything in it once the thread
// has left, even if the process is killed meanwhile.
func inScratchNamespace(f func() error) error {
	th, err := lockNsThread()
	if err != nil {
		return err
	}
	defer th.release()
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("create a network namespace: %w", err)
	}
	result := f()
	if err := th.back(); err != nil {
		return errors.Join(result, err)
	}
	return result
}

// create makes a new network namespace, mounts it as NetnsDir/name and leaves
// the thread inside it, returning an open handle. The caller configures the
// namespace and then calls back. An existing name is an error, never reused.
// On error the thread is back in its origin namespace and nothing is left
// under NetnsDir.
func (t *nsThread) create(name string) (netns.NsHandle, error) {
	path := filepath.Join(NetnsDir, name)
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.EEXIST {
			return -1, fmt.Errorf("network namespace %s already exists", name)
		}
		return -1, fmt.Errorf("create %s: %w", path, err)
	}
	unix.Close(fd)
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		os.Remove(path)
		return -1, fmt.Errorf("create network namespace %s: %w", name, err)
	}
	self := fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid())
	ns, err := netns.GetFromPath(self)
	if err != nil {
		os.Remove(path)
		return -1, errors.Join(fmt.Errorf("open network namespace %s: %w", name, err), t.back())
	}
	if err := unix.Mount(self, path, "none", unix.MS_BIND, ""); err != nil {
		ns.Close()
		os.Remove(path)
		return -1, errors.Join(fmt.Errorf("mount network namespace %s: %w", name, err), t.back())
	}
	return ns, nil
}

// removeNamespace unmounts and removes a named namespace. The kernel frees it
// (and every interface in it) once no process or open handle refers to it, so
// close handles first. A namespace that does not exist is not an error.
func removeNamespace(name string) error {
	path := filepath.Join(NetnsDir, name)
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && err != unix.EINVAL && err != unix.ENOENT {
		return fmt.Errorf("unmount network namespace %s: %w", name, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove network namespace %s: %w", name, err)
	}
	return nil
}

// namespaceExists reports whether NetnsDir/name exists.
func namespaceExists(name string) bool {
	_, err := os.Lstat(filepath.Join(NetnsDir, name))
	return err == nil
}

// writeSysctl sets a sysctl of the calling thread's network namespace
// (/proc/sys/net resolves against the namespace of the task that opens it).
func writeSysctl(key, value string) error {
	path := "/proc/sys/" + key
	if err := os.WriteFile(path, []byte(value), 0); err != nil {
		return fmt.Errorf("sysctl %s=%s: %w", key, value, err)
	}
	return nil
}
