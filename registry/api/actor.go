package api

import (
	"net/http"

	"github.com/msgcontract/msgcontract/registry/access"
	"github.com/msgcontract/msgcontract/registry/store"
)

// withActor records who asks in r's context, for the store's audit log.
func withActor(r *http.Request, p *access.Principal) *http.Request {
	return r.WithContext(store.WithActor(r.Context(), store.Actor{Principal: p.ID, Method: string(p.Method), Remote: r.RemoteAddr}))
}
