package fabric

import (
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/topo"
)

func TestCheckRunNameRejectsUnsafeNames(t *testing.T) {
	for _, bad := range []string{"", "-x", "Ft4", "a b", "a/b", "a.b", strings.Repeat("a", maxRunName+1)} {
		if err := CheckRunName(bad); err == nil {
			t.Errorf("CheckRunName(%q) accepted a bad name", bad)
		}
	}
	for _, good := range []string{"ft4", "fattree-k8", "0run", strings.Repeat("a", maxRunName)} {
		if err := CheckRunName(good); err != nil {
			t.Errorf("CheckRunName(%q): %v", good, err)
		}
	}
}

func TestDefaultRunNameComesFromTheFileName(t *testing.T) {
	cases := []struct {
		topo *topo.Topology
		want string
	}{
		{&topo.Topology{Name: "x", Source: "topologies/fattree-k4.yaml"}, "fattree-k4"},
		{&topo.Topology{Name: "x", Source: "/tmp/My Topo_v2.yml"}, "my-topo-v2"},
		{&topo.Topology{Name: "leafspine-60"}, "leafspine-60"},
		{&topo.Topology{Name: "___"}, "grid"},
		{&topo.Topology{Name: strings.Repeat("ab-", 20)}, "ab-ab-ab-ab-ab-ab-ab-ab-ab-ab-ab"},
	}
	for _, c := range cases {
		got := DefaultRunName(c.topo)
		if got != c.want {
			t.Errorf("DefaultRunName(%q, %q) = %q, want %q", c.topo.Name, c.topo.Source, got, c.want)
		}
		if err := CheckRunName(got); err != nil {
			t.Errorf("default name %q is not a valid run name: %v", got, err)
		}
	}
}

func TestRunTagIsStableShortAndVariesWithAttempt(t *testing.T) {
	a, b := runTag("ft4", 0), runTag("ft4", 0)
	if a != b {
		t.Fatalf("tag of the same run differs: %q %q", a, b)
	}
	if len(a) != tagLen || a[0] != 'g' {
		t.Fatalf("tag %q: want 'g' and 3 base-36 digits", a)
	}
	if runTag("ft4", 1) == a {
		t.Fatalf("retry attempt gave the same tag %q", a)
	}
	seen := map[string]string{}
	collisions := 0
	for i := 0; i < 200; i++ {
		run := "gt" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26))
		tag := runTag(run, 0)
		if other, dup := seen[tag]; dup && other != run {
			collisions++
		}
		seen[tag] = run
	}
	if collisions > 5 {
		t.Fatalf("%d tag collisions among 200 runs: the hash spreads badly", collisions)
	}
}

func TestInterfaceNamesFitLinuxLimitAndMatchThePattern(t *testing.T) {
	name, err := ifaceName("g0ab", topo.KindSwitch, 80, 510)
	if err != nil || name != "g0abs80p510" {
		t.Fatalf("switch port name = %q, %v", name, err)
	}
	name, err = ifaceName("g0ab", topo.KindHost, 500, 3)
	if err != nil || name != "eth3" {
		t.Fatalf("host interface name = %q, %v", name, err)
	}
	if !ifnameRE.MatchString("g0abs80p510") {
		t.Errorf("%q does not match the pattern clean uses", "g0abs80p510")
	}
	if _, err := ifaceName("g0ab", topo.KindSwitch, 12345678, 510); err == nil {
		t.Fatal("a 17-character name was accepted")
	}
	for _, foreign := range []string{"eth0", "veth1234", "docker0", "gabcs1", "g0abx1p1", "g0abh500e3"} {
		if ifnameRE.MatchString(foreign) {
			t.Errorf("clean would take %q for a grid interface", foreign)
		}
	}
}
