module github.com/udapl-go/udapl

go 1.26.0

require (
	github.com/stretchr/testify v1.12.1 // indirect
	golang.org/x/sync v0.24.0 // indirect
)
