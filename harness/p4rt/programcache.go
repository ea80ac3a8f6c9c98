package p4rt

import (
	"crypto/sha256"
	"sync"

	"github.com/grid-ina/grid/harness/engine"
)

// cachedPrograms is how many distinct bmv2 JSON programs the process keeps
// compiled: a process hosting a fabric's switches loads one program into
// all of them, a test server a few in turn.
const cachedPrograms = 8

// programs shares compiled programs between the servers of a process: an
// engine.Program is immutable and may back many switches, and compiling
// the aggregator's JSON costs tens of milliseconds and megabytes, once per
// switch without the cache.
var programs = &programCache{loads: map[[sha256.Size]byte]*programLoad{}}

type programCache struct {
	mu    sync.Mutex
	loads map[[sha256.Size]byte]*programLoad
	order [][sha256.Size]byte // oldest first
}

// programLoad is one program's compilation: done is closed once prog or
// err is set, so that servers asking for it meanwhile wait for the one
// compilation instead of repeating it.
type programLoad struct {
	done chan struct{}
	prog *engine.Program
	err  error
}

// load returns the program data compiles to, compiling it once however
// many servers ask at the same time. A failed compilation is not kept.
func (c *programCache) load(data []byte) (*engine.Program, error) {
	key := sha256.Sum256(data)
	c.mu.Lock()
	l, ok := c.loads[key]
	if !ok {
		l = &programLoad{done: make(chan struct{})}
		c.loads[key] = l
		c.order = append(c.order, key)
		if len(c.order) > cachedPrograms {
			delete(c.loads, c.order[0])
			c.order = c.order[1:]
		}
	}
	c.mu.Unlock()
	if ok {
		<-l.done
		return l.prog, l.err
	}
	l.prog, l.err = engine.Load(data)
	close(l.done)
	if l.err != nil {
		c.mu.Lock()
		if c.loads[key] == l {
			delete(c.loads, key)
			for i, k := range c.order {
				if k == key {
					c.order = append(c.order[:i], c.order[i+1:]...)
					break
				}
			}
		}
		c.mu.Unlock()
	}
	return l.prog, l.err
}
