package controller

import (
	"log/slog"
	"sync/atomic"
	"time"
)

// progressEvery is how often long steps log how far they are.
const progressEvery = 2 * time.Second

// progress logs "what: N of total" every progressEvery until stopped, for
// steps over many switches that take seconds.
type progress struct {
	what  string
	total int
	count atomic.Int64
	quit  chan struct{}
	ended chan struct{}
}

func newProgress(what string, total int) *progress {
	p := &progress{what: what, total: total, quit: make(chan struct{}), ended: make(chan struct{})}
	go p.report()
	return p
}

func (p *progress) report() {
	defer close(p.ended)
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		select {
		case <-p.quit:
			return
		case <-tick.C:
			slog.Info(p.what, "done", p.count.Load(), "of", p.total)
		}
	}
}

// done counts one more.
func (p *progress) done() { p.count.Add(1) }

// stop ends the reports.
func (p *progress) stop() {
	close(p.quit)
	<-p.ended
}
