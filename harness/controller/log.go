package controller

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
)

// quoteTail is how much of a switch's log an error quotes.
const quoteTail = 4 << 10

// logHasLine reports whether the log at path has a line starting with prefix.
func logHasLine(path, prefix string) bool {
	b, err := os.ReadFile(path)
	return err == nil && (bytes.HasPrefix(b, []byte(prefix)) || bytes.Contains(b, []byte("\n"+prefix)))
}

// quoteLog returns the end of the log at path, indented, for an error
// message; "" when it is empty or unreadable.
func quoteLog(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var cut bool
	if fi, err := f.Stat(); err == nil && fi.Size() > quoteTail {
		f.Seek(-quoteTail, io.SeekEnd)
		cut = true
	}
	b, err := io.ReadAll(f)
	text := strings.TrimRight(string(b), "\n")
	if err != nil || text == "" {
		return ""
	}
	head := fmt.Sprintf("; its output (%s):\n", path)
	if cut {
		head = fmt.Sprintf("; the end of its output (%s):\n", path)
	}
	return head + "    " + strings.ReplaceAll(text, "\n", "\n    ")
}
