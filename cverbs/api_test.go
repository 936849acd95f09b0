package cverbs

import (
	"bytes"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The build without cgo (cverbs_other.go) has every exported function and
// method of the cgo build, with the same signature, and nothing else.
func TestAPIParity(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	api := map[string]map[string]string{} // build -> func -> signature
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		require.NoError(t, err)
		build := fileBuild(t, af)
		if build == "" {
			continue // shared by both builds
		}
		if api[build] == nil {
			api[build] = map[string]string{}
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil {
				name = exprString(fset, fd.Recv.List[0].Type) + "." + name
			}
			api[build][name] = signature(fset, fd.Type)
		}
	}
	cgo, other := api["linux && cgo"], api["!linux || !cgo"]
	require.NotEmpty(t, cgo)
	require.NotEmpty(t, other)
	for name, sig := range cgo {
		if assert.Contains(t, other, name, "cverbs_other.go lacks a stub of %s", name) {
			assert.Equal(t, sig, other[name], "signature of %s", name)
		}
	}
	for name := range other {
		assert.Contains(t, cgo, name, "%s exists only without cgo", name)
	}
}

// fileBuild returns the //go:build expression of a file, "" when it has none.
func fileBuild(t *testing.T, af *ast.File) string {
	for _, cg := range af.Comments {
		if cg.Pos() > af.Package {
			break
		}
		for _, c := range cg.List {
			if constraint.IsGoBuild(c.Text) {
				x, err := constraint.Parse(c.Text)
				require.NoError(t, err)
				return x.String()
			}
		}
	}
	return ""
}

// signature prints a function type without parameter names.
func signature(fset *token.FileSet, ft *ast.FuncType) string {
	list := func(fl *ast.FieldList) string {
		if fl == nil {
			return "()"
		}
		var ts []string
		for _, f := range fl.List {
			for range max(len(f.Names), 1) {
				ts = append(ts, exprString(fset, f.Type))
			}
		}
		return "(" + strings.Join(ts, ", ") + ")"
	}
	return list(ft.Params) + " " + list(ft.Results)
}

func exprString(fset *token.FileSet, x ast.Expr) string {
	var b bytes.Buffer
	printer.Fprint(&b, fset, x)
	return b.String()
}
