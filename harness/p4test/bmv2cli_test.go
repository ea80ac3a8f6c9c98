package p4test

import (
	"errors"
	"strings"
	"testing"
)

// cliSession is simple_switch_CLI's output for "register_read" on its
// standard input, in the format of bmv2's tools/runtime_CLI.py: the banner,
// the prompt, and "NAME[INDEX]= VALUE" in decimal.
const cliSession = `Obtaining JSON from switch...
Done
Control utility for runtime P4 table manipulation
RuntimeCmd: GridIngress.unit_tag[7]= 18446744073709551615
RuntimeCmd: 
`

func TestRegisterReadOutputOfTheCLIParses(t *testing.T) {
	v, err := parseRegisterRead(cliSession, "GridIngress.unit_tag", 7)
	if err != nil {
		t.Fatal(err)
	}
	if v.String() != "18446744073709551615" {
		t.Errorf("value %v, want 2^64-1", v)
	}
	zero := strings.ReplaceAll(cliSession, "18446744073709551615", "0")
	if v, err := parseRegisterRead(zero, "GridIngress.unit_tag", 7); err != nil || v.Sign() != 0 {
		t.Errorf("zero cell: %v, %v", v, err)
	}
}

func TestRegisterReadOfAnotherCellIsNotTaken(t *testing.T) {
	_, err := parseRegisterRead(cliSession, "GridIngress.unit_tag", 17)
	if err == nil || !strings.Contains(err.Error(), `no "GridIngress.unit_tag[17]=" line in its output`) {
		t.Errorf("err = %v", err)
	}
}

func TestRegisterReadErrorOfTheCLIBecomesTheError(t *testing.T) {
	out := "Obtaining JSON from switch...\nDone\nControl utility for runtime P4 table manipulation\n" +
		"RuntimeCmd: Error: Invalid register name (nosuch)\nRuntimeCmd: \n"
	_, err := parseRegisterRead(out, "nosuch", 0)
	if err == nil || err.Error() != "simple_switch_CLI: register_read nosuch 0: Error: Invalid register name (nosuch)" {
		t.Errorf("err = %v", err)
	}
	_, err = parseRegisterRead("RuntimeCmd: r[0]= -3\n", "r", 0)
	if err == nil || !strings.Contains(err.Error(), `"-3" is not a register value`) {
		t.Errorf("negative value: %v", err)
	}
}

func TestACLIThatCannotConnectSaysTheSwitchMayHaveNoThriftServer(t *testing.T) {
	// What bmv2's runtime_CLI prints before it exits 1.
	output := "Could not connect to thrift client on port 9090\nMake sure the switch is running and that you have the right port\n"
	err := cliFailure("simple_switch_CLI", "register_read r 0", 9090, errors.New("exit status 1"), output)
	for _, want := range []string{"simple_switch_CLI: register_read r 0: no Thrift server on port 9090", "--with-thrift", "exit status 1", output} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	err = cliFailure("simple_switch_CLI", "register_read r 0", 9090, errors.New("exit status 2"), "Traceback ...")
	if strings.Contains(err.Error(), "Thrift") || !strings.Contains(err.Error(), "exit status 2; its output:\nTraceback") {
		t.Errorf("another failure: %v", err)
	}
}
