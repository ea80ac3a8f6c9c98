package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// version is set at link time: -ldflags "-X main.version=v0.1.0".
var version = "0.1.0-dev"

func init() {
	register(&cli.Command{
		Name:  "version",
		Usage: "print grid's version, the commit it was built from and the Go version",
		Action: func(c *cli.Context) error {
			printVersion(c)
			return nil
		},
	})
	// grid --version says the same as grid version; -v stays --verbose.
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version, as 'grid version' does"}
	cli.VersionPrinter = printVersion
}

func printVersion(c *cli.Context) {
	fmt.Fprintf(c.App.Writer, "grid %s\ncommit %s\n%s %s/%s\n", version, buildCommit(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// buildCommit reads the VCS stamp Go embeds in binaries built inside a git
// checkout; "unknown" when built with -buildvcs=false or outside git.
func buildCommit() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "unknown", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
