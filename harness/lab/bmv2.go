package lab

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/grid-ina/grid/harness/controller"
	"github.com/grid-ina/grid/harness/fabric"
)

// Backends a lab runs its switches on.
const (
	BackendGrid = "grid" // grid switch, the default
	BackendBmv2 = "bmv2" // real simple_switch_grpc, as the tutorials' VM has it
)

// startBmv2Switch starts simple_switch_grpc for switch number i as the
// tutorials' launcher does, inside the switch's namespace, and a grid
// lab forward process that makes its P4Runtime server (and its Thrift
// server, when the port is free here) reachable from the root namespace
// at the tutorials' addresses. bmv2 has no per-port delay or rate: link
// latency is not applied (the kernel here has no netem), and the
// bandwidth's tbf holds back its transmit as Mininet's TCLink does.
func (ex *Exercise) startBmv2Switch(st *fabric.State, i int, sw Switch, opts Options) (SwitchProcess, func() error, error) {
	node := st.Node(sw.Name)
	port := opts.GRPCBasePort + i
	sp := SwitchProcess{Name: sw.Name, DeviceID: uint64(i), GRPCAddr: "127.0.0.1:" + strconv.Itoa(port),
		ThriftPort: DefaultThriftBasePort + i, Log: filepath.Join(ex.Dir, "logs", sw.Name+".log")}
	bin, err := exec.LookPath(controller.SimpleSwitchGRPC)
	if err != nil {
		return sp, nil, fmt.Errorf("--backend bmv2: %w (scripts/setup.sh puts the p4tools bundle's bin/ on PATH)", err)
	}
	argv := []string{bin}
	for _, ifc := range node.Interfaces {
		argv = append(argv, "-i", fmt.Sprintf("%d@%s", ifc.Port, ifc.Name))
	}
	program := ex.switchProgram(sw)
	if ex.NoP4 && sw.Program == "" {
		program = "--no-p4"
	}
	argv = append(argv, "--pcap", filepath.Join(ex.Dir, "pcaps"), "--device-id", strconv.Itoa(i), program,
		"--log-console", "--thrift-port", strconv.Itoa(sp.ThriftPort), "--", "--grpc-server-addr", "0.0.0.0:"+strconv.Itoa(port))
	if sw.CPUPort > 0 {
		argv = append(argv, "--cpu-port", strconv.Itoa(sw.CPUPort))
	}
	if sw.PriorityQueues > 0 {
		argv = append(argv, "--priority-queues", strconv.Itoa(sw.PriorityQueues))
	}
	p, err := controller.StartProcess(st.Run, sw.Name, "bmv2", argv, sp.Log, true)
	if err != nil {
		return sp, nil, err
	}
	sp.PID = p.PID()
	forward := func(addr string, log string) (*controller.Process, error) {
		return controller.StartProcess(st.Run, "", "lab-forward", []string{opts.Grid, "lab", "forward", "--name", st.Run, "--node", sw.Name, addr, addr},
			filepath.Join(ex.Dir, "logs", log), true)
	}
	fwd, err := forward(sp.GRPCAddr, sw.Name+"-forward.log")
	if err != nil {
		return sp, nil, err
	}
	thriftAddr := "127.0.0.1:" + strconv.Itoa(sp.ThriftPort)
	if !listening(thriftAddr) {
		if _, err := forward(thriftAddr, sw.Name+"-thrift-forward.log"); err != nil {
			return sp, nil, err
		}
	}
	wait := func() error {
		deadline := time.Now().Add(30 * time.Second)
		for {
			inside := node.Do(func() error {
				c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 100*time.Millisecond)
				if err == nil {
					c.Close()
				}
				return err
			}) == nil
			if inside && listening(sp.GRPCAddr) {
				return nil
			}
			select {
			case <-p.Exited():
				return fmt.Errorf("simple_switch_grpc exited (%v); its log %s says:\n%s", p.ExitErr(), sp.Log, tail(sp.Log, 20))
			case <-fwd.Exited():
				return fmt.Errorf("its forwarder exited (%v):\n%s", fwd.ExitErr(), tail(fwd.Log, 10))
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				return errors.New("simple_switch_grpc did not listen for P4Runtime within 30 s; its log says:\n" + tail(sp.Log, 20))
			}
		}
	}
	return sp, wait, nil
}

// runBmv2CLI feeds a cli_input file to simple_switch_CLI on the switch's
// Thrift port inside its namespace, as the tutorials' runner does; the
// output goes to logs/sN_cli_output.log.
func (ex *Exercise) runBmv2CLI(st *fabric.State, sw Switch, sp SwitchProcess) error {
	cli, err := exec.LookPath("simple_switch_CLI")
	if err != nil {
		return fmt.Errorf("switch %s: cli_input on bmv2 needs simple_switch_CLI: %w", sw.Name, err)
	}
	in, err := os.Open(ex.Path(sw.CLIInput))
	if err != nil {
		return fmt.Errorf("%s: switches.%s.cli_input: %w", ex.Topology.Path, sw.Name, err)
	}
	defer in.Close()
	out, err := os.Create(filepath.Join(ex.Dir, "logs", sw.Name+"_cli_output.log"))
	if err != nil {
		return err
	}
	defer out.Close()
	return st.Node(sw.Name).Do(func() error {
		cmd := exec.Command(cli, "--thrift-port", strconv.Itoa(sp.ThriftPort))
		cmd.Stdin, cmd.Stdout, cmd.Stderr = in, out, out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("switch %s: simple_switch_CLI: %w (see logs/%s_cli_output.log)", sw.Name, err, sw.Name)
		}
		return nil
	})
}
