// Command synccore refreshes bindings-go's copy of the C core from ../csrc
// and ../include.  Run it through `go generate ./...` inside bindings-go.
//
//	go run ./internal/synccore [-check] [-repo DIR] [-dir DIR]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/panto-dev/panto/bindings-go/internal/coresync"
)

func main() {
	check := flag.Bool("check", false, "only report differences; exit 1 if any")
	dir := flag.String("dir", ".", "the Go package directory holding the copy")
	repo := flag.String("repo", "", "the repository root (default: the parent of -dir)")
	flag.Parse()
	if *repo == "" {
		abs, err := filepath.Abs(*dir)
		if err != nil {
			fatal(err)
		}
		*repo = filepath.Dir(abs)
	}
	if *check {
		diffs, err := coresync.Diff(*repo, *dir)
		if err != nil {
			fatal(err)
		}
		for _, d := range diffs {
			fmt.Println(d)
		}
		if len(diffs) > 0 {
			fmt.Fprintln(os.Stderr, "synccore: the C core copy is out of date; run `go generate ./...` in bindings-go")
			os.Exit(1)
		}
		return
	}
	changed, err := coresync.Sync(*repo, *dir)
	if err != nil {
		fatal(err)
	}
	for _, c := range changed {
		fmt.Println("synccore: updated", c)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "synccore:", err)
	os.Exit(1)
}
