package lab

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Tmux opens a tmux session named after the lab's run with a window per
// host, each a shell on that host (Mininet's "xterm h1 h2 ..."), and one
// more in the lab's folder for the student's controller. The session is
// left detached; `tmux attach -t RUN` shows it. An existing session of the
// run is replaced.
func (l *Lab) Tmux() error {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		return errors.New("tmux is not installed (apt-get install tmux)")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	run := func(args ...string) error {
		out, err := exec.Command(tmux, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	exec.Command(tmux, "kill-session", "-t", l.Run).Run() // a session left from before
	if err := run("new-session", "-d", "-s", l.Run, "-n", "lab", "-c", l.Dir); err != nil {
		return err
	}
	for _, h := range l.Hosts {
		shell := fmt.Sprintf("%q lab shell --name %q %q", self, l.Run, h.Name)
		if err := run("new-window", "-d", "-t", l.Run, "-n", h.Name, "-c", l.Dir, shell); err != nil {
			return err
		}
	}
	return nil
}
