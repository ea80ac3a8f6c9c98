package results

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"
)

// Write writes e's results folder as root/e.Name and returns its path. It
// builds the folder as root/.tmp-NAME and renames it into place once every
// file is written; on any error, or a panic, the temporary folder is removed
// and nothing of e is left under root. An existing folder of that name is
// an error, never overwritten.
func Write(root string, e *Experiment) (dir string, err error) {
	if err := e.check(); err != nil {
		return "", err
	}
	final := filepath.Join(root, e.Name)
	if _, err := os.Lstat(final); err == nil {
		return "", fmt.Errorf("results: %s exists", final)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("results: %w", err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("results: %w", err)
	}
	tmp := filepath.Join(root, ".tmp-"+e.Name)
	if err := os.Mkdir(tmp, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("results: %s exists: another writer is at work, or one crashed (remove it)", tmp)
		}
		return "", fmt.Errorf("results: %w", err)
	}
	renamed := false
	defer func() {
		if !renamed {
			os.RemoveAll(tmp)
		}
	}()
	f := &folder{dir: tmp}
	if err := f.fill(e); err != nil {
		return "", fmt.Errorf("results %s: %w", e.Name, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", fmt.Errorf("results: %w", err)
	}
	renamed = true
	return final, nil
}

// folder writes files into a directory, each one new.
type folder struct {
	dir   string
	files []string
}

func (f *folder) write(name string, data []byte) error {
	return f.stream(name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// stream writes the file name with fill, buffered.
func (f *folder) stream(name string, fill func(io.Writer) error) error {
	// O_EXCL: a runner's extra file must not replace one written here.
	file, err := os.OpenFile(filepath.Join(f.dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	w := bufio.NewWriterSize(file, 1<<16)
	if err := errors.Join(fill(w), w.Flush()); err != nil {
		file.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := file.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	f.files = append(f.files, name)
	return nil
}

// copyDir copies the tree at src into the folder as name/.
func (f *folder) copyDir(name, src string) error {
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(f.dir, name, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(dst, 0o755)
		case d.Type().IsRegular():
			return copyFile(dst, path)
		}
		return fmt.Errorf("%s: not a regular file or directory", path)
	})
	if err != nil {
		return fmt.Errorf("copy %s into %s/: %w", src, name, err)
	}
	f.files = append(f.files, name+"/")
	return nil
}

// copyFile copies the file src to dst as it reads it: a run of 500 hosts
// leaves hundreds of logs, some large.
func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// fill writes every file; summary.json last, as it lists the others.
func (f *folder) fill(e *Experiment) error {
	traffic := e.traffic()
	summary := summarize(e, traffic, nil)
	if err := f.write("fidelity.txt", fidelityText(summary)); err != nil {
		return err
	}
	if err := f.stream("traffic.csv", func(w io.Writer) error { return writeTrafficCSV(w, e, traffic) }); err != nil {
		return err
	}
	if err := f.write("jobs.csv", jobsCSV(e)); err != nil {
		return err
	}
	if err := f.write("switches.csv", switchesCSV(e)); err != nil {
		return err
	}
	if err := f.write("aggregation.csv", aggregationCSV(e)); err != nil {
		return err
	}
	plots, err := drawPlots(e, traffic, summary)
	if err != nil {
		return err
	}
	for _, p := range plots {
		if err := f.write(p.name, p.png); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(e.Files))
	for name := range e.Files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := f.write(name, e.Files[name]); err != nil {
			return err
		}
	}
	if e.Status != "" && e.Status != StatusComplete {
		// Beside summary.json's one-line reason, the whole of it: an
		// endpoint's or switch's failure quotes its log.
		if err := f.write("failure.txt", []byte(fmt.Sprintf("%s: %s\n", e.Status, e.Reason))); err != nil {
			return err
		}
	}
	dirs := make([]string, 0, len(e.Dirs))
	for name := range e.Dirs {
		dirs = append(dirs, name)
	}
	sort.Strings(dirs)
	for _, name := range dirs {
		if err := f.copyDir(name, e.Dirs[name]); err != nil {
			return err
		}
	}
	f.files = append(f.files, "summary.json")
	sort.Strings(f.files)
	summary.Files = f.files
	b, err := json.MarshalIndent(summary, "", "  ")
	if err != nil {
		return fmt.Errorf("encode summary.json: %w", err)
	}
	f.files = f.files[:0] // summary.json is listed already
	return f.write("summary.json", append(b, '\n'))
}

// linkTraffic is one algorithm's traffic samples, read with totals
// counting from each link's first sample (rel), and what the writer
// derives from them once: the sample times, each link's latest sample and
// every host's series. The samples are not copied: a 500-host run has
// millions.
type linkTraffic struct {
	start   time.Time   // of the first sample
	times   []time.Time // distinct sample times, oldest first
	samples []LinkSample
	base    [][2]Count   // per link, its first sample's counts (AB, BA)
	last    []LinkSample // per link, its latest sample, relative; Link -1 when none
	hosts   map[string]*hostSeries
}

func relativeTraffic(links []Link, samples []LinkSample) linkTraffic {
	t := linkTraffic{samples: samples, base: make([][2]Count, len(links)), last: make([]LinkSample, len(links))}
	for i := range t.last {
		t.last[i].Link = -1
	}
	seen := make([]bool, len(links))
	for _, s := range samples {
		if !seen[s.Link] {
			seen[s.Link] = true
			t.base[s.Link] = [2]Count{s.AB, s.BA}
		}
		if r := t.rel(s); t.last[s.Link].Link < 0 || !r.Time.Before(t.last[s.Link].Time) {
			t.last[s.Link] = r
		}
	}
	t.hosts, t.times = hostsSeries(links, samples)
	if len(t.times) > 0 {
		t.start = t.times[0]
	}
	return t
}

// rel is sample s with its totals counted from its link's first sample.
func (t *linkTraffic) rel(s LinkSample) LinkSample {
	b := t.base[s.Link]
	s.AB = Count{Bytes: s.AB.Bytes - b[0].Bytes, Packets: s.AB.Packets - b[0].Packets}
	s.BA = Count{Bytes: s.BA.Bytes - b[1].Bytes, Packets: s.BA.Packets - b[1].Packets}
	return s
}

// fidelityText is the fidelity table (WriteFidelity) of a summary as a file.
func fidelityText(s *Summary) []byte {
	var b bytes.Buffer
	WriteFidelity(&b, s) // a bytes.Buffer does not fail
	return b.Bytes()
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

func csvBytes(rows [][]string) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.WriteAll(rows) // a bytes.Buffer does not fail
	return b.Bytes()
}

// writeTrafficCSV writes one row per algorithm, sample and link, as it
// goes: traffic.csv of a 500-host run has millions of rows.
func writeTrafficCSV(out io.Writer, e *Experiment, traffic []linkTraffic) error {
	w := csv.NewWriter(out)
	if err := w.Write([]string{"algorithm", "seconds", "link", "a", "b",
		"bytes_a_to_b", "packets_a_to_b", "bytes_b_to_a", "packets_b_to_a"}); err != nil {
		return err
	}
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	row := make([]string, 9)
	for i, a := range e.Algorithms {
		t := &traffic[i]
		for _, s := range t.samples {
			s = t.rel(s)
			l := e.Links[s.Link]
			row[0], row[1], row[2], row[3], row[4] = a.Algorithm, seconds(s.Time.Sub(t.start)), strconv.Itoa(s.Link), l.A, l.B
			row[5], row[6], row[7], row[8] = u(s.AB.Bytes), u(s.AB.Packets), u(s.BA.Bytes), u(s.BA.Packets)
			if err := w.Write(row); err != nil {
				return err
			}
		}
	}
	w.Flush()
	return w.Error()
}

// jobsCSV: per algorithm and job, a "job" row (its completion), the PS's
// row and one row per worker.
func jobsCSV(e *Experiment) []byte {
	rows := [][]string{{"algorithm", "job", "role", "host", "index", "start_seconds", "end_seconds", "seconds",
		"goodput_bits_per_second", "sent", "resent", "retries", "controls", "completed", "fragments", "verified", "error"}}
	since := func(t time.Time) string { return seconds(t.Sub(e.Began)) }
	for _, a := range e.Algorithms {
		for _, j := range a.Jobs {
			c := j.Completion()
			failure := ""
			if fails := jobFailures(&j); len(fails) > 0 {
				failure = fails[0]
			}
			rows = append(rows, []string{a.Algorithm, j.Name, "job", j.PS.Host, "", since(c.Start), since(c.End),
				strconv.FormatFloat(c.Seconds, 'f', 6, 64), "", "", "", "", "", "", "", strconv.FormatBool(c.Verified), failure})
			for _, r := range append([]*Endpoint{j.PS}, j.Workers...) {
				index := ""
				if r.Index != nil {
					index = strconv.Itoa(*r.Index)
				}
				rows = append(rows, []string{a.Algorithm, j.Name, r.Role, r.Host, index, since(r.Start), since(r.End),
					strconv.FormatFloat(r.Seconds, 'f', 6, 64), strconv.FormatFloat(r.GoodputBitsPerSec, 'f', 0, 64),
					strconv.Itoa(r.Sent), strconv.Itoa(r.Resent), strconv.Itoa(r.Retries), strconv.Itoa(r.Controls),
					strconv.Itoa(r.Completed), strconv.Itoa(r.Fragments), strconv.FormatBool(r.Verified), failureOf(r)})
			}
		}
	}
	return csvBytes(rows)
}

// switchesCSV: per algorithm, switch and port, the P4 program's port
// counters (what the switch itself saw, beside the veth counters of traffic.csv).
func switchesCSV(e *Experiment) []byte {
	rows := [][]string{{"algorithm", "switch", "port", "rx_packets", "rx_bytes", "tx_packets", "tx_bytes"}}
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	for _, a := range e.Algorithms {
		for _, sw := range a.Switches {
			for _, p := range sw.Ports {
				rows = append(rows, []string{a.Algorithm, sw.Switch, strconv.Itoa(p.Port),
					u(p.Rx.Packets), u(p.Rx.Bytes), u(p.Tx.Packets), u(p.Tx.Bytes)})
			}
		}
	}
	return csvBytes(rows)
}

// aggregationCSV: per algorithm, switch and job, the aggregation events
// (gradproto.Event, one column each).
func aggregationCSV(e *Experiment) []byte {
	header := append([]string{"algorithm", "switch", "job"}, e.Events...)
	rows := [][]string{header}
	for _, a := range e.Algorithms {
		for _, sw := range a.Switches {
			for _, job := range sortedJobs(sw.Jobs) {
				row := []string{a.Algorithm, sw.Switch, strconv.Itoa(int(job))}
				for ev := range e.Events {
					var n uint64
					if ev < len(sw.Jobs[job]) {
						n = sw.Jobs[job][ev]
					}
					row = append(row, strconv.FormatUint(n, 10))
				}
				rows = append(rows, row)
			}
		}
	}
	return csvBytes(rows)
}

func sortedJobs(m map[uint16][]uint64) []uint16 {
	jobs := make([]uint16, 0, len(m))
	for j := range m {
		jobs = append(jobs, j)
	}
	sort.Slice(jobs, func(i, k int) bool { return jobs[i] < jobs[k] })
	return jobs
}

func failureOf(r *Endpoint) string {
	switch {
	case r.Verified:
		return ""
	case r.Failure == "":
		return fmt.Sprintf("%s %s: not verified", r.Role, r.Host)
	}
	return r.Failure
}

// jobFailures says what failed in a job, PS first.
func jobFailures(j *Job) []string {
	var out []string
	for _, r := range append([]*Endpoint{j.PS}, j.Workers...) {
		if f := failureOf(r); f != "" {
			out = append(out, f)
		}
	}
	return out
}
