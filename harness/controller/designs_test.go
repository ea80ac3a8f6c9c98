package controller

import (
	"reflect"
	"strings"
	"testing"
)

func TestEarlierBuildsRunTheDesignsWhoseCommandTheyHave(t *testing.T) {
	has := func(build, command string) bool { return build != "/old" || command == "switch" }
	designs, err := withBefore(todaysDesigns, "c7=/new,8d=/old", has)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"process-per-switch", "one-process", "process-per-switch-c7", "one-process-c7", "process-per-switch-8d"}
	if got := designNames(designs); !reflect.DeepEqual(got, want) {
		t.Fatalf("designs %v, want %v", got, want)
	}
	for i, binary := range []string{"", "", "/new", "/new", "/old"} {
		if got := designs[i].opts(Options{}).Binary; got != binary {
			t.Errorf("%s runs %q, want %q", designs[i].name, got, binary)
		}
	}
	if got := designs[4].opts(Options{}).Hosting; got != ProcessPerSwitch {
		t.Errorf("process-per-switch-8d hosts its switches as %v", got)
	}
	// one process now reports its ratios to every build's process per
	// switch and to every earlier build's one process
	if got := peersOf(designs, 1); !reflect.DeepEqual(got, []int{0, 2, 3, 4}) {
		t.Errorf("peers of one-process: %v, want [0 2 3 4]", got)
	}
	for _, i := range []int{0, 2, 3, 4} {
		if got := peersOf(designs, i); got != nil {
			t.Errorf("%s reports ratios to %v, want none", designs[i].name, got)
		}
	}
	if len(todaysDesigns) != 2 {
		t.Fatalf("withBefore changed today's designs: %v", designNames(todaysDesigns))
	}
}

func TestAnUnnamedEarlierBuildIsBefore(t *testing.T) {
	designs, err := withBefore(todaysDesigns, "/some/grid", func(string, string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"process-per-switch", "one-process", "process-per-switch-before", "one-process-before"}
	if got := designNames(designs); !reflect.DeepEqual(got, want) {
		t.Fatalf("designs %v, want %v", got, want)
	}
	if designs, _ := withBefore(todaysDesigns, "", nil); len(designs) != len(todaysDesigns) {
		t.Fatalf("no earlier build gave %v", designNames(designs))
	}
}

func TestEarlierBuildsListedWronglyAreRefused(t *testing.T) {
	for _, before := range []string{"=/grid", "name=", "a=/x,a=/y", "/x,/y", "/x,"} {
		if _, err := withBefore(todaysDesigns, before, func(string, string) bool { return true }); err == nil {
			t.Errorf("GRID_BENCH_BEFORE=%q accepted", before)
		}
	}
}

func TestDesignsNamedAloneRunInTheirOrderAndReportTheirRatiosToEachOther(t *testing.T) {
	all, err := withBefore(todaysDesigns, "main=/main,8d=/old", func(build, command string) bool { return build != "/old" || command == "switch" })
	if err != nil {
		t.Fatal(err)
	}
	designs, err := only(all, "one-process-main,one-process,process-per-switch-8d")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"one-process", "one-process-main", "process-per-switch-8d"}
	if got := designNames(designs); !reflect.DeepEqual(got, want) {
		t.Fatalf("designs %v, want %v", got, want)
	}
	if got := peersOf(designs, 0); !reflect.DeepEqual(got, []int{1, 2}) {
		t.Errorf("peers of one-process: %v, want [1 2]", got)
	}
	if got := peersOf(designs, 1); got != nil {
		t.Errorf("one-process-main reports ratios to %v, want none", got)
	}
	if kept, _ := only(all, ""); len(kept) != len(all) {
		t.Errorf("no names kept %v", designNames(kept))
	}
	if _, err := only(all, "one-process,two-process"); err == nil || !strings.Contains(err.Error(), "two-process") || !strings.Contains(err.Error(), "one-process-main") {
		t.Errorf("an unknown design name gave %v, want an error naming it and listing the designs", err)
	}
}
