package panto

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/panto-dev/panto/bindings-go/internal/coresync"
)

// TestCoreCopyInSync fails when the C core copy in this directory differs
// from ../csrc and ../include, so a C change can never be tested (or
// shipped) against a stale copy.
func TestCoreCopyInSync(t *testing.T) {
	if _, err := os.Stat("../csrc"); err != nil {
		t.Skip("../csrc is absent (built from a module zip): nothing to compare")
	}
	diffs, err := coresync.Diff("..", ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) > 0 {
		t.Fatalf("the C core copy in bindings-go is out of date with ../csrc and ../include:\n  %s\nrun `go generate ./...` in bindings-go",
			strings.Join(diffs, "\n  "))
	}
}

func TestABIVersion(t *testing.T) {
	if LibraryABIVersion() != ABIVersion {
		t.Fatalf("panto_abi_version() = %d, header says %d", LibraryABIVersion(), ABIVersion)
	}
	if v := Version(); strings.Count(v, ".") != 2 {
		t.Errorf("Version() = %q", v)
	}
}

const modulePath = "github.com/panto-dev/panto/bindings-go"

// moduleZip builds the module zip of this directory as `go mod download`
// would receive it: every regular file under the module root, below the
// prefix <module>@<version>/, except VCS directories, vendor/ and nested
// modules.
func moduleZip(t *testing.T, version string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == "." {
				return nil
			}
			switch d.Name() {
			case ".git", ".hg", ".svn", ".bzr", "vendor":
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasSuffix(path, ".test") {
			return nil // (test binaries left by -cpuprofile are not sources)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		w, err := zw.Create(modulePath + "@" + version + "/" + filepath.ToSlash(path))
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestModuleZipConsumer proves that the module is usable through `go get`:
// it serves a module zip of this directory from a file:// GOPROXY, and builds
// and runs a consumer module that decodes a stream.  Nothing outside the zip
// (no ../csrc) is visible to that build.
func TestModuleZipConsumer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a consumer module; skipped with -short")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	const version = "v0.0.0-20260101000000-000000000000"
	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy", modulePath, "@v")
	if err := os.MkdirAll(proxy, 0o755); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	info, _ := json.Marshal(map[string]any{"Version": version, "Time": time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	for name, data := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": info,
		version + ".mod":  gomod,
		version + ".zip":  moduleZip(t, version),
	} {
		if err := os.WriteFile(filepath.Join(proxy, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	consumer := filepath.Join(tmp, "consumer")
	if err := os.MkdirAll(consumer, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"go.mod": "module example.com/consumer\n\ngo 1.24\n\nrequire " + modulePath + " " + version + "\n",
		"main.go": `package main

import (
	"fmt"
	"os"
	"strings"

	panto "` + modulePath + `"
)

const body = "data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},\"finish_reason\":null}]}\n\n" +
	"data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
	"data: [DONE]\n\n"

func main() {
	s, err := panto.NewStream(strings.NewReader(body), panto.WireOpenAIChat)
	if err != nil {
		panic(err)
	}
	m, err := s.Message()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%s %s %s\n", panto.Version(), m.Text(), m.StopReason)
}
`,
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(consumer, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(),
		"GOPROXY=file://"+filepath.ToSlash(filepath.Join(tmp, "proxy")),
		"GOMODCACHE="+filepath.Join(tmp, "modcache"),
		"GOFLAGS=-mod=mod -modcacherw -buildvcs=false",
		"GOSUMDB=off",
		"GONOSUMDB=*",
		"GOWORK=off",
		"GOTOOLCHAIN=local",
		"CGO_ENABLED=1",
	)
	run := func(args ...string) string {
		cmd := exec.Command(gobin, args...)
		cmd.Dir = consumer
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("build", "-o", "consumer", ".")
	// The build used the extracted zip, not this directory.
	extracted := filepath.Join(tmp, "modcache", modulePath+"@"+version)
	if _, err := os.Stat(filepath.Join(extracted, "panto_core.c")); err != nil {
		t.Fatalf("module cache lacks the C core copy: %v", err)
	}
	out, err := exec.Command(filepath.Join(consumer, "consumer")).CombinedOutput()
	if err != nil {
		t.Fatalf("consumer: %v\n%s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), Version()+" Hello stop"; got != want {
		t.Fatalf("consumer printed %q, want %q", got, want)
	}
}
