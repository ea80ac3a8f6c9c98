package p4test

import (
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
