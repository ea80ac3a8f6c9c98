package p4test

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// simple_switch_grpc answers P4Runtime register reads with UNIMPLEMENTED
// (p4lang/PI issue 376), so the bmv2 target reads registers the way p4c's
// bmv2stf.py does: through simple_switch_CLI on the switch's Thrift port.

// cliRegisterRead runs `simple_switch_CLI --thrift-port PORT` inside the
// testbed with "register_read NAME INDEX" on its standard input and
// returns the cell's value.
func cliRegisterRead(ctx context.Context, tb *testbed, cli string, thriftPort int, register string, index int) (*big.Int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, "--thrift-port", strconv.Itoa(thriftPort))
	cmd.Stdin = strings.NewReader(fmt.Sprintf("register_read %s %d\n", register, index))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := tb.do(cmd.Start); err != nil {
		return nil, fmt.Errorf("start %s: %w", cli, err)
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("%s register_read %s %d: %w; its output:\n%s", cli, register, index, err, out.String())
	}
	return parseRegisterRead(out.String(), register, index)
}

// parseRegisterRead finds the answer to "register_read NAME INDEX" in
// simple_switch_CLI's output: a line "NAME[INDEX]= VALUE" (after the
// "RuntimeCmd: " prompt), VALUE in decimal. An error message of the CLI
// in place of it becomes the error.
func parseRegisterRead(output, register string, index int) (*big.Int, error) {
	want := fmt.Sprintf("%s[%d]=", register, index)
	for _, line := range strings.Split(output, "\n") {
		line = strings.TrimSpace(strings.ReplaceAll(line, "RuntimeCmd:", ""))
		text, ok := strings.CutPrefix(line, want)
		if !ok {
			continue
		}
		v, ok := new(big.Int).SetString(strings.TrimSpace(text), 10)
		if !ok || v.Sign() < 0 {
			return nil, fmt.Errorf("simple_switch_CLI: register_read %s %d: %q is not a register value", register, index, strings.TrimSpace(text))
		}
		return v, nil
	}
	for _, line := range strings.Split(output, "\n") {
		line = strings.TrimSpace(strings.ReplaceAll(line, "RuntimeCmd:", ""))
		if strings.HasPrefix(line, "Error") || strings.HasPrefix(line, "Invalid") || strings.Contains(line, "Could not connect") {
			return nil, fmt.Errorf("simple_switch_CLI: register_read %s %d: %s", register, index, line)
		}
	}
	return nil, fmt.Errorf("simple_switch_CLI: register_read %s %d: no %q line in its output:\n%s", register, index, want, strings.TrimSpace(output))
}
