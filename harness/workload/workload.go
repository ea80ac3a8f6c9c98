// Package workload describes training jobs: which host is each job's
// parameter server, which hosts are its workers, what model it trains and the
// rate cap of its workers. Jobs come from a YAML file (workloads/jobs/*.yaml)
// or, by default, from the roles in a topology: one job with the PS host and
// every worker host.
package workload

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/grid-ina/grid/harness/topo"
	"gopkg.in/yaml.v3"
)

// Job is one data-parallel training job with a single parameter server.
type Job struct {
	Name    string
	PS      string   // host name of the parameter server
	Workers []string // host names of the workers, in file order
	// Model names a profile in Models; empty when unspecified.
	Model string
	// MaxRate caps each worker's sending rate (GRID's T); 0 means the
	// smaller of the PS ingress and the worker's own link.
	MaxRate topo.Bandwidth
	Line    int // line of the job in its file, for error messages
}

// Error is a problem in a jobs file, located like a topology error:
// "workloads/jobs/x.yaml:7: jobs[0].workers[2]: unknown host "w9"".
type Error = topo.Error

// Default is the job a topology's roles describe: its only PS and all its
// workers. It fails when the topology has no PS, several, or no workers.
func Default(t *topo.Topology) ([]Job, error) {
	ps := t.PSs()
	switch {
	case len(ps) == 0:
		return nil, fmt.Errorf("topology %s has no host with role ps: give a jobs file", t.Name)
	case len(ps) > 1:
		return nil, fmt.Errorf("topology %s has %d parameter servers: give a jobs file saying which workers belong to which", t.Name, len(ps))
	}
	job := Job{Name: "job1", PS: ps[0].Name}
	for _, w := range t.Workers() {
		job.Workers = append(job.Workers, w.Name)
	}
	if len(job.Workers) == 0 {
		return nil, fmt.Errorf("topology %s has no host with role worker", t.Name)
	}
	return []Job{job}, nil
}

// Load reads a jobs file and checks it against the topology.
func Load(path string, t *topo.Topology) ([]Job, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read jobs: %w", err)
	}
	return Parse(data, path, t)
}

// Parse reads jobs from YAML:
//
//	jobs:
//	  - name: vgg16          # unique
//	    ps: ps               # a host of the topology
//	    workers: [w1, w2]    # hosts of the topology, at least one
//	    model: vgg16         # optional, a name from Models
//	    max_rate: 3Gbps      # optional cap T on each worker's rate
func Parse(data []byte, source string, t *topo.Topology) ([]Job, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, &Error{Source: source, Msg: err.Error()}
	}
	fail := func(n *yaml.Node, field, format string, args ...any) error {
		return &Error{Source: source, Line: n.Line, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, &Error{Source: source, Line: 1, Msg: "want a mapping with the key jobs"}
	}
	top := root.Content[0]
	var seq *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if k.Value != "jobs" {
			return nil, fail(k, k.Value, "unknown key (want jobs)")
		}
		seq = v
	}
	if seq == nil || seq.Kind != yaml.SequenceNode || len(seq.Content) == 0 {
		return nil, &Error{Source: source, Line: top.Line, Field: "jobs", Msg: "want a non-empty list of jobs"}
	}
	var jobs []Job
	names := map[string]bool{}
	workerOf := map[string]string{}
	for i, jn := range seq.Content {
		path := fmt.Sprintf("jobs[%d]", i)
		if jn.Kind != yaml.MappingNode {
			return nil, fail(jn, path, "want a mapping")
		}
		job := Job{Line: jn.Line}
		var workerNodes []*yaml.Node
		for k := 0; k+1 < len(jn.Content); k += 2 {
			key, val := jn.Content[k], jn.Content[k+1]
			field := path + "." + key.Value
			switch key.Value {
			case "name", "ps", "model", "max_rate":
				if val.Kind != yaml.ScalarNode {
					return nil, fail(val, field, "want a single value")
				}
			}
			switch key.Value {
			case "name":
				job.Name = val.Value
			case "ps":
				job.PS = val.Value
				if err := checkHost(t, val.Value, topo.RolePS); err != nil {
					return nil, fail(val, field, "%v", err)
				}
			case "model":
				if _, ok := Models[strings.ToLower(val.Value)]; !ok {
					return nil, fail(val, field, "unknown model %q (known: %s)", val.Value, strings.Join(ModelNames(), ", "))
				}
				job.Model = strings.ToLower(val.Value)
			case "max_rate":
				bw, err := topo.ParseBandwidth(val.Value)
				if err != nil {
					return nil, fail(val, field, "%v", err)
				}
				if bw <= 0 {
					return nil, fail(val, field, "max_rate must be positive")
				}
				job.MaxRate = bw
			case "workers":
				if val.Kind != yaml.SequenceNode || len(val.Content) == 0 {
					return nil, fail(val, field, "want a non-empty list of worker hosts")
				}
				for w, wn := range val.Content {
					wf := fmt.Sprintf("%s[%d]", field, w)
					if err := checkHost(t, wn.Value, topo.RoleWorker); err != nil {
						return nil, fail(wn, wf, "%v", err)
					}
					job.Workers = append(job.Workers, wn.Value)
					workerNodes = append(workerNodes, wn)
				}
			default:
				return nil, fail(key, field, "unknown key (want name, ps, workers, model, max_rate)")
			}
		}
		switch {
		case job.Name == "":
			return nil, fail(jn, path+".name", "missing")
		case names[job.Name]:
			return nil, fail(jn, path+".name", "duplicate job name %q", job.Name)
		case job.PS == "":
			return nil, fail(jn, path+".ps", "missing")
		case len(job.Workers) == 0:
			return nil, fail(jn, path+".workers", "missing")
		case slices.Contains(job.Workers, job.PS):
			return nil, fail(jn, path+".workers", "the PS %s cannot also be a worker", job.PS)
		}
		names[job.Name] = true
		reach := reachableThroughSwitches(t, job.PS)
		for w, wn := range workerNodes {
			if other, dup := workerOf[wn.Value]; dup {
				return nil, fail(wn, fmt.Sprintf("%s.workers[%d]", path, w), "host %s is already a worker of job %s", wn.Value, other)
			}
			if !reach[wn.Value] {
				return nil, fail(wn, fmt.Sprintf("%s.workers[%d]", path, w), "worker %s cannot reach its PS %s through switches", wn.Value, job.PS)
			}
			workerOf[wn.Value] = job.Name
		}
		jobs = append(jobs, job)
	}
	return jobs, nil
}

// checkHost says why name cannot play role: unknown, a switch. A host whose
// topology role differs is accepted: jobs files may reassign roles.
func checkHost(t *topo.Topology, name string, role topo.Role) error {
	if name == "" {
		return fmt.Errorf("empty host name")
	}
	n := t.Node(name)
	if n == nil {
		return fmt.Errorf("unknown host %q in topology %s", name, t.Name)
	}
	if n.Kind != topo.KindHost {
		return fmt.Errorf("%s is a switch, the %s must be a host", name, role)
	}
	return nil
}

// reachableThroughSwitches is the set of nodes reachable from host along
// links whose inner nodes are all switches: traffic never transits a host.
func reachableThroughSwitches(t *topo.Topology, host string) map[string]bool {
	seen := map[string]bool{host: true}
	queue := []string{host}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n != host {
			if node := t.Node(n); node == nil || node.Kind != topo.KindSwitch {
				continue // reached, but traffic does not pass through it
			}
		}
		for _, adj := range t.Neighbors(n) {
			if !seen[adj.Peer.Node] {
				seen[adj.Peer.Node] = true
				queue = append(queue, adj.Peer.Node)
			}
		}
	}
	return seen
}
