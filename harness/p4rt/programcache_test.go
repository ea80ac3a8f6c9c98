package p4rt

import (
	"sync"
	"testing"

	"github.com/grid-ina/grid/harness/engine"
)

func TestServersLoadingOneProgramAtOnceShareOneCompilation(t *testing.T) {
	data := testProgram(t).JSON
	cache := &programCache{loads: map[[32]byte]*programLoad{}}
	progs := make([]*engine.Program, 16)
	var wg sync.WaitGroup
	for i := range progs {
		wg.Go(func() {
			p, err := cache.load(data)
			if err != nil {
				t.Error(err)
			}
			progs[i] = p
		})
	}
	wg.Wait()
	for i, p := range progs {
		if p == nil || p != progs[0] {
			t.Fatalf("load %d got program %p, load 0 %p: want one shared compilation", i, p, progs[0])
		}
	}
	// Two switches on the shared program keep their own state.
	a, b := engine.NewSwitch(progs[0], engine.Config{}), engine.NewSwitch(progs[0], engine.Config{})
	if a == b {
		t.Fatal("one switch for two")
	}
}

func TestAProgramThatFailsToCompileIsNotKeptAndOldOnesMakeRoom(t *testing.T) {
	cache := &programCache{loads: map[[32]byte]*programLoad{}}
	bad := []byte(`{"header_types": 3}`)
	for range 2 {
		if _, err := cache.load(bad); err == nil {
			t.Fatal("a broken program compiled")
		}
	}
	if len(cache.loads) != 0 || len(cache.order) != 0 {
		t.Errorf("the failed compilation is kept: %d loads, %d in order", len(cache.loads), len(cache.order))
	}
	data := testProgram(t).JSON
	first, err := cache.load(data)
	if err != nil {
		t.Fatal(err)
	}
	// Fill the cache with others (the same program with trailing spaces is
	// other bytes) until the first falls out.
	for i := range cachedPrograms {
		other := append(append([]byte(nil), data...), make([]byte, i+1)...)
		for j := len(data); j < len(other); j++ {
			other[j] = ' '
		}
		if _, err := cache.load(other); err != nil {
			t.Fatal(err)
		}
	}
	if len(cache.loads) != cachedPrograms {
		t.Errorf("%d programs kept, want at most %d", len(cache.loads), cachedPrograms)
	}
	again, err := cache.load(data)
	if err != nil {
		t.Fatal(err)
	}
	if again == first {
		t.Error("the oldest program was still cached after more than cachedPrograms others")
	}
}
