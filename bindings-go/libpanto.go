//go:build libpanto

package panto

// With the libpanto build tag the package links a system-installed libpanto
// (cmake --install; found through pkg-config, panto.pc) instead of compiling
// its own copy of the core, as go-sqlite3's libsqlite3 tag does:
//
//	go build -tags libpanto ./...
//
// The installed library must have this package's ABI version
// (LibraryABIVersion() == ABIVersion; TestABIAndLayout checks it).

/*
#cgo CFLAGS: -DUSE_LIBPANTO
#cgo pkg-config: panto
*/
import "C"
