// Package specfile reads and writes the JSON specs grid hands the host
// processes it starts (grid switch-host, grid endpoint-host): every error
// names the file, and a spec is checked before anyone acts on it.
package specfile

import (
	"encoding/json"
	"fmt"
	"os"
)

// Checked is a spec that names what is missing or wrong in it.
type Checked interface{ Check() error }

// Load reads the JSON file at path into a new T and checks it.
func Load[T any, PT interface {
	*T
	Checked
}](path string) (*T, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var spec T
	if err := json.Unmarshal(data, &spec); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := PT(&spec).Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &spec, nil
}

// Write writes v to path as indented JSON.
func Write(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
