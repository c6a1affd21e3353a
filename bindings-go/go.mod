module github.com/panto-dev/panto/bindings-go

go 1.24
