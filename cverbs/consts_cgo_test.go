//go:build linux && cgo

package cverbs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The constants written as Go literals have the values of the C headers.
func TestCConstsMatchHeaders(t *testing.T) {
	c := cConstants()
	require.Len(t, c, len(cConsts), "cheaders.go and cConsts list the same constants")
	for _, k := range cConsts {
		v, ok := c[k.cName]
		if assert.True(t, ok, "%s: C constant %s missing from cheaders.go", k.goName, k.cName) {
			assert.Equal(t, v, k.value, "%s = %s", k.goName, k.cName)
		}
	}
}

// The String methods of the C enums give what the C *_str functions give,
// for every value and for values out of range.
func TestEnumStringsMatchC(t *testing.T) {
	goStrings := map[string]func(v int) string{
		"PortState":      func(v int) string { return PortState(v).String() },
		"AsyncEventType": func(v int) string { return AsyncEventType(v).String() },
		"WCStatus":       func(v int) string { return WCStatus(v).String() },
		"CMEventType":    func(v int) string { return CMEventType(v).String() },
	}
	require.Len(t, cEnumStrings, len(goStrings))
	for kind, goStr := range goStrings {
		cStr := cEnumStrings[kind]
		require.NotNil(t, cStr, kind)
		for v := -2; v < 40; v++ {
			assert.Equal(t, cStr(v), goStr(v), "%s(%d)", kind, v)
		}
	}
}
