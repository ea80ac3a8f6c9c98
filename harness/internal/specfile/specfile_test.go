package specfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type spec struct {
	Name string `json:"name"`
}

func (s *spec) Check() error {
	if s.Name == "" {
		return errors.New("name: missing")
	}
	return nil
}

func TestWriteThenLoadGivesTheSpecBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	if err := Write(path, &spec{Name: "s1"}); err != nil {
		t.Fatal(err)
	}
	got, err := Load[spec](path)
	if err != nil || got.Name != "s1" {
		t.Fatalf("loaded %+v, %v", got, err)
	}
}

func TestLoadNamesTheFileOfABadOrUncheckedSpec(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{`{"name": 1}`: "cannot unmarshal", `{}`: "name: missing"} {
		path := filepath.Join(dir, "bad.json")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load[spec](path); err == nil || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %s: ...%s", body, err, path, want)
		}
	}
}
