package lab

import (
	"fmt"
	"io"
	"os/exec"
	"sync"

	"github.com/grid-ina/grid/harness/fabric"
)

// HostArgs replaces every argument that names a host of the lab by its IP
// address, as Mininet's CLI does: "h1 ping h2" pings h2's address.
func (l *Lab) HostArgs(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = a
		for _, h := range l.Hosts {
			if a == h.Name {
				out[i] = h.IP
			}
		}
	}
	return out
}

// Exec replaces the process with argv (host names replaced by their
// addresses) running on a host of the lab.
func (l *Lab) Exec(host string, argv []string) error {
	return fabric.Exec(l.Run, host, l.HostArgs(argv))
}

// PingAll pings every host from every other host once, in parallel, and
// prints the result as Mininet's pingall does; it returns how many pings
// were answered and how many were sent.
func (l *Lab) PingAll(out io.Writer) (received, sent int, err error) {
	st, err := fabric.LoadState(l.Run)
	if err != nil {
		return 0, 0, err
	}
	n := len(l.Hosts)
	ok := make([][]bool, n)
	var wg sync.WaitGroup
	limit := make(chan struct{}, 8)
	for i, src := range l.Hosts {
		ok[i] = make([]bool, n)
		node := st.Node(src.Name)
		if node == nil {
			return 0, 0, fmt.Errorf("host %s is not in run %s", src.Name, l.Run)
		}
		for j, dst := range l.Hosts {
			if i == j {
				continue
			}
			wg.Go(func() {
				limit <- struct{}{}
				defer func() { <-limit }()
				ok[i][j] = node.Do(func() error { return exec.Command("ping", "-c", "1", "-W", "1", dst.IP).Run() }) == nil
			})
		}
	}
	wg.Wait()
	fmt.Fprintln(out, "*** Ping: testing ping reachability")
	for i, src := range l.Hosts {
		fmt.Fprintf(out, "%s ->", src.Name)
		for j, dst := range l.Hosts {
			if i == j {
				continue
			}
			sent++
			if ok[i][j] {
				received++
				fmt.Fprintf(out, " %s", dst.Name)
			} else {
				fmt.Fprint(out, " X")
			}
		}
		fmt.Fprintln(out)
	}
	dropped := 0
	if sent > 0 {
		dropped = 100 * (sent - received) / sent
	}
	fmt.Fprintf(out, "*** Results: %d%% dropped (%d/%d received)\n", dropped, received, sent)
	return received, sent, nil
}
