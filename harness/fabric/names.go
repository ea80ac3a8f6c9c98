package fabric

import (
	"fmt"
	"hash/fnv"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/grid-ina/grid/harness/topo"
)

// maxRunName keeps namespace names (RUN-NODE) short enough to type.
const maxRunName = 32

var runNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// CheckRunName reports whether name can name a run.
func CheckRunName(name string) error {
	if len(name) > maxRunName {
		return fmt.Errorf("run name %q is longer than %d characters", name, maxRunName)
	}
	if !runNameRE.MatchString(name) {
		return fmt.Errorf("run name %q: use lower-case letters, digits and '-', starting with a letter or digit", name)
	}
	return nil
}

// DefaultRunName derives a run name from a topology file name
// ("topologies/fattree-k4.yaml" -> "fattree-k4"), or from the topology's own
// name when it was generated rather than read from a file.
func DefaultRunName(t *topo.Topology) string {
	base := t.Name
	if t.Source != "" {
		base = strings.TrimSuffix(filepath.Base(t.Source), filepath.Ext(t.Source))
	}
	var b strings.Builder
	for _, r := range strings.ToLower(base) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > maxRunName {
		name = strings.TrimRight(name[:maxRunName], "-")
	}
	if name == "" {
		name = "grid"
	}
	return name
}

// NamespaceName is the network namespace of node in run, as listed by `ip netns list`.
func NamespaceName(run, node string) string { return run + "-" + node }

// Host interfaces are named as the topology file names them (eth0, eth1, ...),
// as in Mininet and p4lang/tutorials: they are born inside the host's own
// namespace, where no other run's names can clash. Switch ports carry the run's
// tag so every port of a run is recognisable in any namespace (and in the root
// namespace, should one ever stray there), yet stay within Linux's 15
// characters: TAGs<id>p<port> ("g3kzs5p2", P4 port 2 of the switch with id 5);
// bmv2 attaches to them as -i 2@g3kzs5p2.
const (
	tagLen    = 4
	maxIfname = 15
)

// ifnameRE matches every switch port name the fabric creates; clean uses it to
// find strays in the root namespace. Host ends never stray there: each veth is
// created in one request with both ends inside their namespaces.
var ifnameRE = regexp.MustCompile(`^g[0-9a-z]{3}s[0-9]+p[0-9]+$`)

// runTag is the interface-name prefix of a run: "g" and three base-36 digits of
// a hash of the run name. attempt > 0 picks another tag when two live runs'
// tags collide; the chosen tag is recorded in the run's state.
func runTag(run string, attempt int) string {
	h := fnv.New32a()
	h.Write([]byte(run))
	if attempt > 0 {
		fmt.Fprintf(h, "#%d", attempt)
	}
	s := strconv.FormatUint(uint64(h.Sum32()%(36*36*36)), 36)
	return "g" + strings.Repeat("0", 3-len(s)) + s
}

// ifaceName is the kernel name of port on node (host interface or switch port).
func ifaceName(tag string, kind topo.Kind, nodeID, port int) (string, error) {
	var name string
	if kind == topo.KindSwitch {
		name = fmt.Sprintf("%ss%dp%d", tag, nodeID, port)
	} else {
		name = fmt.Sprintf("eth%d", port)
	}
	if len(name) > maxIfname {
		return "", fmt.Errorf("interface name %q for node id %d port %d exceeds Linux's %d characters", name, nodeID, port, maxIfname)
	}
	return name, nil
}
