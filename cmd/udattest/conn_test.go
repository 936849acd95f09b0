package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/udapl-go/udapl/udat"
)

// A DTO that completed flushed gives an error that flushed recognises and
// that names the status; any other failed status gives one that it does
// not, and a success none.
func TestCheckDTOFlushed(t *testing.T) {
	var c conn
	ev := udat.Event{Number: udat.EventDTOCompletion, DTO: udat.DTOCompletionData{Op: udat.DTOSend, Status: udat.DTOErrFlushed}}
	_, err := c.checkDTO(&ev, nil, "send a control message")
	require.Error(t, err)
	assert.True(t, flushed(err))
	assert.Equal(t, "send a control message: DAT_DTO_SEND completed with DAT_DTO_ERR_FLUSHED", err.Error())

	ev.DTO.Status = udat.DTOErrTransport
	_, err = c.checkDTO(&ev, nil, "send a control message")
	require.Error(t, err)
	assert.False(t, flushed(err))

	ev.DTO.Status = udat.DTOSuccess
	_, err = c.checkDTO(&ev, nil, "send a control message")
	require.NoError(t, err)
	assert.False(t, flushed(udat.ErrTimeoutExpired))
}
