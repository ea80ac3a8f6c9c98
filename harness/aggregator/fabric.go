package aggregator

import (
	"fmt"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/gradproto"
)

// EngineFabric runs frames through the compiled aggregator on an embedded
// engine switch; it implements gradproto.Fabric so the protocol simulation
// (gradproto.Star.Run) can drive the real program.
type EngineFabric struct {
	Switch *engine.Switch
}

// NewEngineFabric creates an engine switch running prog (the compiled
// aggregator) and installs setup.
func NewEngineFabric(prog *engine.Program, cfg engine.Config, setup *Setup) (*EngineFabric, error) {
	sw := engine.NewSwitch(prog, cfg)
	if err := setup.Install(sw); err != nil {
		return nil, err
	}
	return &EngineFabric{Switch: sw}, nil
}

// Process implements gradproto.Fabric: it copies every output frame.
func (f *EngineFabric) Process(port uint16, frame []byte) ([]gradproto.Output, error) {
	var out []gradproto.Output
	err := f.Switch.Process(uint32(port), frame, func(o engine.Output) {
		out = append(out, gradproto.Output{Port: uint16(o.Port), Frame: append([]byte(nil), o.Data...)})
	})
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	return out, nil
}

// UnitTags reads register unit_tag: state ++ job ++ fragment per unit.
func (f *EngineFabric) UnitTags() ([]uint64, error) {
	cells, err := f.Switch.ReadRegisterArray(RegisterUnitTag)
	if err != nil {
		return nil, err
	}
	tags := make([]uint64, len(cells))
	for i, c := range cells {
		for _, b := range c {
			tags[i] = tags[i]<<8 | uint64(b)
		}
	}
	return tags, nil
}

// JobStats reads job's cells of counter job_stats, indexed by event.
func (f *EngineFabric) JobStats(job uint16) ([gradproto.NumEvents]uint64, error) {
	var st [gradproto.NumEvents]uint64
	for ev := gradproto.Event(0); ev < gradproto.NumEvents; ev++ {
		v, err := f.Switch.ReadCounter(CounterJobStat, StatIndex(job, ev))
		if err != nil {
			return st, err
		}
		st[ev] = v.Packets
	}
	return st, nil
}
