package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/lab"
)

// readmeCommand is one "$ grid ..." line of a console block in README.md with
// the output lines that follow it.
type readmeCommand struct {
	line     int
	root     bool
	args     []string
	expected []string
}

// readmeCommands extracts the commands of every ```console block.
func readmeCommands(t *testing.T, path string) []readmeCommand {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []readmeCommand
	inBlock := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```console"):
			inBlock = true
		case strings.HasPrefix(line, "```"):
			inBlock = false
		case inBlock && (strings.HasPrefix(line, "$ ") || strings.HasPrefix(line, "# ")):
			// "# " is root's prompt: Debian 12 has no sudo.
			fields := strings.Fields(line[2:])
			c := readmeCommand{line: n, root: line[0] == '#'}
			if fields[0] == "sudo" {
				t.Fatalf("README.md:%d: write root's commands after a '#' prompt, not with sudo (Debian 12 has none)", n)
			}
			if fields[0] != "grid" {
				t.Fatalf("README.md:%d: console blocks run grid commands only, not %q", n, fields[0])
			}
			c.args = fields[1:]
			cmds = append(cmds, c)
		case inBlock && strings.TrimSpace(line) != "":
			if len(cmds) == 0 {
				t.Fatalf("README.md:%d: output before any command", n)
			}
			cmds[len(cmds)-1].expected = append(cmds[len(cmds)-1].expected, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cmds
}

// normalize folds runs of white space, so expected table rows need not match
// the column padding.
func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestREADMEExamplesRunAndPrintWhatTheySay(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(t, filepath.Join(root, "README.md"))
	if len(cmds) < 8 {
		t.Fatalf("found only %d README commands; the parser lost some", len(cmds))
	}
	bin := buildGrid(t)
	// The examples write their outputs as /tmp/grid-readme-*.
	t.Cleanup(func() {
		leftovers, _ := filepath.Glob(filepath.Join(os.TempDir(), "grid-readme-*"))
		for _, p := range leftovers {
			os.RemoveAll(p)
		}
	})
	isRoot := os.Geteuid() == 0
	for _, c := range cmds {
		if c.root && !isRoot {
			t.Logf("README.md:%d: skipped, needs root: grid %s", c.line, strings.Join(c.args, " "))
			continue
		}
		if len(c.args) > 1 && c.args[0] == "lab" && !strings.HasPrefix(c.args[1], "-") && c.args[1] != "check" {
			run := lab.RunName(filepath.Join(root, c.args[1]))
			t.Cleanup(func() {
				if _, err := fabric.LoadState(run); err == nil {
					lab.Stop(run)
				}
			})
		}
		for i, a := range c.args {
			if a == "--name" && i+1 < len(c.args) && c.args[0] == "up" {
				run := c.args[i+1]
				t.Cleanup(func() {
					if _, err := fabric.LoadState(run); err == nil {
						fabric.Down(run)
					}
				})
			}
		}
		cmd := exec.Command(bin, c.args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("README.md:%d: grid %s: %v\n%s", c.line, strings.Join(c.args, " "), err, out)
		}
		got := normalize(string(out))
		for _, want := range c.expected {
			if !strings.Contains(got, normalize(want)) {
				t.Errorf("README.md:%d: grid %s printed\n%s\nwhich lacks %q", c.line, strings.Join(c.args, " "), out, want)
			}
		}
	}
}

// TestREADMEFirstCommandsNeedNoSudo: the two commands a newcomer copies
// first run as root on Debian 12, which has no sudo: they are the scripts
// themselves, executable, and the scripts call no sudo either.
func TestREADMEFirstCommandsNeedNoSudo(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var first []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "    ") {
			first = append(first, strings.Fields(line)[0])
		} else if len(first) > 0 {
			break
		}
	}
	if len(first) != 2 || first[0] != "scripts/run.sh" || first[1] != "scripts/test.sh" {
		t.Fatalf("the README starts with %q, want scripts/run.sh and scripts/test.sh", first)
	}
	scripts, _ := filepath.Glob(filepath.Join(root, "scripts", "*.sh"))
	for _, s := range append(first, "scripts/setup.sh") {
		path := filepath.Join(root, s)
		fi, err := os.Stat(path)
		if err != nil || fi.Mode()&0o111 == 0 && s != "scripts/setup.sh" {
			t.Errorf("%s: not an executable script (%v)", s, err)
		}
	}
	for _, s := range scripts {
		text, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			if code, _, _ := strings.Cut(line, "#"); strings.Contains(" "+code, " sudo ") {
				t.Errorf("%s:%d calls sudo: %s", filepath.Base(s), i+1, line)
			}
		}
	}
}
