package p4test

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"os/exec"
	"strconv"
	"strings"
)

// simple_switch_grpc answers P4Runtime register reads with UNIMPLEMENTED
// (p4lang/PI issue 376), so the bmv2 target reads registers the way p4c's
// bmv2stf.py does: through simple_switch_CLI on the switch's Thrift port.

// cliOutput runs `simple_switch_CLI --thrift-ip 127.0.0.1 --thrift-port PORT`
// inside the testbed (whose IPv6 is off: not "localhost", which may be ::1 first)
// with command on its standard input and returns what it printed.
func cliOutput(ctx context.Context, tb *testbed, cli string, thriftPort int, command string) (string, error) {
	cmd := exec.CommandContext(ctx, cli, "--thrift-ip", "127.0.0.1", "--thrift-port", strconv.Itoa(thriftPort))
	cmd.Stdin = strings.NewReader(command + "\n")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := tb.do(cmd.Start); err != nil {
		return "", fmt.Errorf("start %s: %w", cli, err)
	}
	if err := cmd.Wait(); err != nil {
		return "", cliFailure(cli, command, thriftPort, err, out.String())
	}
	return out.String(), nil
}

// cliFailure is the error of a simple_switch_CLI that failed. One that
// cannot connect most likely met a simple_switch_grpc without a Thrift
// server, which bmv2 has only when built with --with-thrift.
func cliFailure(cli, command string, thriftPort int, err error, output string) error {
	if strings.Contains(output, "Could not connect") {
		return fmt.Errorf("%s: %s: no Thrift server on port %d: simple_switch_grpc has one only when bmv2 was built "+
			"with --with-thrift, and the bmv2 target reads and writes registers through it (P4Runtime register "+
			"access is unimplemented in simple_switch_grpc): %w; its output:\n%s", cli, command, thriftPort, err, output)
	}
	return fmt.Errorf("%s: %s: %w; its output:\n%s", cli, command, err, output)
}

// cliRun runs one command that prints nothing on success (register_write,
// register_reset); an error message of the CLI becomes the error.
func cliRun(ctx context.Context, tb *testbed, cli string, thriftPort int, command string) error {
	out, err := cliOutput(ctx, tb, cli, thriftPort, command)
	if err != nil {
		return err
	}
	if msg := cliError(out); msg != "" {
		return fmt.Errorf("simple_switch_CLI: %s: %s", command, msg)
	}
	return nil
}

// cliRegisterRead reads a register cell with "register_read NAME INDEX".
func cliRegisterRead(ctx context.Context, tb *testbed, cli string, thriftPort int, register string, index int) (*big.Int, error) {
	out, err := cliOutput(ctx, tb, cli, thriftPort, fmt.Sprintf("register_read %s %d", register, index))
	if err != nil {
		return nil, err
	}
	return parseRegisterRead(out, register, index)
}

// cliLines are the CLI's output lines without its prompts.
func cliLines(output string) []string {
	var lines []string
	for _, line := range strings.Split(output, "\n") {
		if line = strings.TrimSpace(strings.ReplaceAll(line, "RuntimeCmd:", "")); line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

// cliError is the first error message in the CLI's output, or "".
func cliError(output string) string {
	for _, line := range cliLines(output) {
		if strings.HasPrefix(line, "Error") || strings.HasPrefix(line, "Invalid") || strings.Contains(line, "Could not connect") {
			return line
		}
	}
	return ""
}

// parseRegisterRead finds the answer to "register_read NAME INDEX" in
// simple_switch_CLI's output: a line "NAME[INDEX]= VALUE" (after the
// "RuntimeCmd: " prompt), VALUE in decimal. An error message of the CLI
// in place of it becomes the error.
func parseRegisterRead(output, register string, index int) (*big.Int, error) {
	want := fmt.Sprintf("%s[%d]=", register, index)
	for _, line := range cliLines(output) {
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
	if msg := cliError(output); msg != "" {
		return nil, fmt.Errorf("simple_switch_CLI: register_read %s %d: %s", register, index, msg)
	}
	return nil, fmt.Errorf("simple_switch_CLI: register_read %s %d: no %q line in its output:\n%s", register, index, want, strings.TrimSpace(output))
}
