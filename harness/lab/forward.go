package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/grid-ina/grid/harness/fabric"
)

// Forward relays TCP connections accepted on listen, in the namespace
// the process runs in (the root namespace, where a course's controller
// runs), to target inside node's namespace of run, until ctx ends. It is
// how bmv2 switches, whose P4Runtime and Thrift servers listen inside
// their namespaces, are reached at 127.0.0.1:50051+N as under Mininet.
func Forward(ctx context.Context, run, node, listen, target string) error {
	st, err := fabric.LoadState(run)
	if err != nil {
		return err
	}
	n := st.Node(node)
	if n == nil {
		return fmt.Errorf("run %s has no node %s", run, node)
	}
	lis, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		lis.Close()
	}()
	slog.Info("forwarding", "listen", listen, "node", node, "target", target)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		conn, err := lis.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		wg.Go(func() {
			defer conn.Close()
			var up net.Conn
			err := n.Do(func() error {
				var err error
				up, err = net.DialTimeout("tcp", target, 5*time.Second)
				return err
			})
			if err != nil {
				slog.Warn("cannot reach the switch", "node", node, "target", target, "err", err)
				return
			}
			defer up.Close()
			done := make(chan struct{}, 2)
			relay := func(dst, src net.Conn) {
				io.Copy(dst, src)
				if tc, ok := dst.(*net.TCPConn); ok {
					tc.CloseWrite()
				}
				done <- struct{}{}
			}
			go relay(up, conn)
			go relay(conn, up)
			<-done
			<-done
		})
	}
}
