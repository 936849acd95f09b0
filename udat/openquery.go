package udat

// IAQuery is an IA opened only to read its attributes (the handle of
// dat_ib_open_query): OpenQuery opens the device and reads it, without the
// event channel, asynchronous EVD and goroutines of an IA, and Close
// closes it.
type IAQuery struct {
	ia *IA
}

// OpenQuery opens the IA name, as OpenIA would, only to read its
// attributes (dat_ib_open_query, which OFA's dtestx -q uses for a fast
// query). It returns what IA.Query would, and the handle that Close
// (dat_ib_close_query) takes. Bad names fail as in OpenIA.
func OpenQuery(name string) (*IAQuery, IAAttr, ProviderAttr, error) {
	const op = "dat_ib_open_query"
	if name == "" {
		return nil, IAAttr{}, ProviderAttr{}, newError(op, InvalidParameter|InvalidArg1)
	}
	vctx, port, netdev, err := openDevice(op, name)
	if err != nil {
		return nil, IAAttr{}, ProviderAttr{}, err
	}
	ia := &IA{object: liveObject(), name: name, dev: vctx.Name(), netdev: netdev, port: port, vctx: vctx}
	if err := ia.readDevice(op); err != nil {
		vctx.Close()
		return nil, IAAttr{}, ProviderAttr{}, err
	}
	a, p, err := ia.Query()
	if err != nil {
		vctx.Close()
		return nil, IAAttr{}, ProviderAttr{}, err
	}
	return &IAQuery{ia: ia}, a, p, nil
}

// Close closes an IA that OpenQuery opened (dat_ib_close_query). A nil or
// closed handle gives DAT_INVALID_HANDLE | DAT_INVALID_HANDLE_IA.
func (q *IAQuery) Close() error {
	const op = "dat_ib_close_query"
	if q == nil || q.ia == nil || q.ia.freed.Swap(true) {
		return badHandle(op, HandleTypeIA)
	}
	return verbsErr(op, q.ia.vctx.Close(), InternalError)
}
