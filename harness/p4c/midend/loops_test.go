package midend

import (
	"strconv"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/p4c/frontend"
	"github.com/grid-ina/grid/harness/p4c/frontend/check"
)

func lowerWithLoops(t *testing.T, src string) *Program {
	t.Helper()
	return lowerWith(t, src, frontend.Options{Features: check.Features{Loops: true}})
}

func countOps(a *Action, op string) int {
	n := 0
	for _, p := range a.Prims {
		if p.Op == op {
			n++
		}
	}
	return n
}

func TestLoopWithConstantTripCountIsUnrolledWithoutBackwardJumps(t *testing.T) {
	p := lowerWithLoops(t, skeleton(`
    action sum() {
        for (bit<8> i = 0; i < 4; i = i + 1) {
            if (i == 2) { continue; }
            hdr.h.b = hdr.h.b + i;
        }
    }
    table t { actions = { sum; } const default_action = sum(); }
    apply { t.apply(); }`))
	a := actionNamed(p, "Ig.sum")
	if a == nil {
		t.Fatal("no action Ig.sum")
	}
	// Four copies of the body, each with its `if` and its continue.
	if n := countOps(a, "_jump_if_zero"); n != 4 {
		t.Errorf("%d _jump_if_zero, want 4 (one if per unrolled copy)", n)
	}
	for i, pr := range a.Prims {
		if pr.Op != "_jump" && pr.Op != "_jump_if_zero" {
			continue
		}
		target := pr.Parameters[len(pr.Parameters)-1]
		if v, ok := hexValue(target.Str); !ok || v <= i {
			t.Errorf("primitive %d (%s) jumps to %s, not forward", i, pr.Op, target.Str)
		}
	}
}

func TestLoopWithRunTimeBoundJumpsBackToItsTest(t *testing.T) {
	p := lowerWithLoops(t, skeleton(`
    action sum() {
        hdr.h.b = 0;
        for (bit<8> i = 1; i <= hdr.h.a; i = i + 1) {
            if (i == 5) { break; }
            hdr.h.b = hdr.h.b + i;
        }
    }
    table t { actions = { sum; } const default_action = sum(); }
    apply { t.apply(); }`))
	a := actionNamed(p, "Ig.sum")
	if a == nil {
		t.Fatal("no action Ig.sum")
	}
	last := a.Prims[len(a.Prims)-1]
	if last.Op != "_jump" {
		t.Fatalf("last primitive is %s, want the loop's _jump back", last.Op)
	}
	back, _ := hexValue(last.Parameters[0].Str)
	if test := a.Prims[back]; test.Op != "_jump_if_zero" {
		t.Errorf("the back jump lands on %s, want the loop test _jump_if_zero", test.Op)
	}
	// The loop test and the break both leave to the end of the action.
	exits := 0
	for _, pr := range a.Prims {
		if v, ok := hexValue(pr.Parameters[len(pr.Parameters)-1].Str); ok && (pr.Op == "_jump" || pr.Op == "_jump_if_zero") && v == len(a.Prims) {
			exits++
		}
	}
	if exits != 2 {
		t.Errorf("%d jumps leave the loop, want 2 (test and break)", exits)
	}
}

func TestTableApplyInsideLoopIsUnsupported(t *testing.T) {
	prog, err := frontend.LoadSource("test.p4", []byte(skeleton(`
    table t { actions = { NoAction; } }
    apply { for (bit<8> i = 0; i < hdr.h.a; i = i + 1) { t.apply(); } }`)), frontend.Options{Features: check.Features{Loops: true}})
	if err != nil {
		t.Fatalf("front end: %v", err)
	}
	_, err = Lower(prog, "test.p4")
	if err == nil || !strings.Contains(err.Error(), "unsupported: table or control application inside") {
		t.Fatalf("got %v, want unsupported table apply in a loop", err)
	}
}

// hexValue reads a jump target such as "0x1f".
func hexValue(s string) (int, bool) {
	v, err := strconv.ParseInt(strings.TrimPrefix(s, "0x"), 16, 64)
	return int(v), err == nil
}

func TestNestedConstantLoopsUnrollOnlyUpToTheBudget(t *testing.T) {
	p := lowerWithLoops(t, skeleton(`
    action count() {
        for (bit<16> i = 0; i < 200; i = i + 1) {
            for (bit<16> j = 0; j < 200; j = j + 1) {
                hdr.h.b = hdr.h.b + 1;
            }
        }
    }
    table t { actions = { count; } const default_action = count(); }
    apply { t.apply(); }`))
	a := actionNamed(p, "Ig.count")
	if a == nil {
		t.Fatal("no action Ig.count")
	}
	// 40000 body copies would be unrolled without the budget; the outer
	// loop fits, the inner ones then jump back.
	if len(a.Prims) > 20*maxUnroll {
		t.Errorf("%d primitives: nested loops were unrolled past the budget", len(a.Prims))
	}
	back := 0
	for i, pr := range a.Prims {
		if v, ok := hexValue(pr.Parameters[len(pr.Parameters)-1].Str); pr.Op == "_jump" && ok && v < i {
			back++
		}
	}
	if back == 0 {
		t.Error("no backward jump: the loops over budget must run as loops")
	}
}
