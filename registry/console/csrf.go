package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
)

// The console's forms are protected from cross-site request forgery
// twice over:
//
//   - Every POST passes [http.CrossOriginProtection] first, which refuses
//     a request the browser marks as coming from another site
//     (Sec-Fetch-Site) or whose Origin is not the console's host.
//   - Every POST then needs a token in the form field [csrfField] that
//     matches the browser's cookie [csrfCookie]: the cookie holds a random
//     value per browser, and the token is HMAC-SHA256 of that value under
//     the console's key. Another site can neither read the token nor, not
//     knowing the key, make one for a cookie it managed to plant.
//
// Both checks sit in ServeHTTP in front of the handlers, so a new POST
// route is covered without doing anything; its form only has to include
// {{template "csrf" $}}.
const (
	// csrfCookie names the cookie with the browser's random value.
	csrfCookie = "msgcontract_console_csrf"
	// csrfField names the hidden form field with the token.
	csrfField = "csrf"
	// csrfBytes is how many random bytes the cookie and the key hold.
	csrfBytes = 32
	// minCSRFKey is the shortest Config.CSRFKey accepted.
	minCSRFKey = 32
)

// csrfKey is the context key of the request's form token.
type csrfKey struct{}

// newCSRFKey is a random key for a Console without Config.CSRFKey.
func newCSRFKey() []byte {
	k := make([]byte, csrfBytes)
	_, _ = rand.Read(k) // crypto/rand.Read never fails
	return k
}

// csrfToken is the form token for a cookie value.
func (c *Console) csrfToken(cookie string) string {
	m := hmac.New(sha256.New, c.csrfKey)
	m.Write([]byte(cookie))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// csrfCookieValue is the browser's cookie value when it has a well-formed
// one, else "".
func csrfCookieValue(r *http.Request) string {
	ck, err := r.Cookie(csrfCookie)
	if err != nil {
		return ""
	}
	if b, err := base64.RawURLEncoding.DecodeString(ck.Value); err != nil || len(b) != csrfBytes {
		return ""
	}
	return ck.Value
}

// withCSRF gives the browser a cookie when it has none, and returns r
// with the form token for its cookie in the context, for render.
func (c *Console) withCSRF(w http.ResponseWriter, r *http.Request) *http.Request {
	v := csrfCookieValue(r)
	if v == "" {
		b := make([]byte, csrfBytes)
		_, _ = rand.Read(b)
		v = base64.RawURLEncoding.EncodeToString(b)
		http.SetCookie(w, &http.Cookie{
			Name:     csrfCookie,
			Value:    v,
			Path:     Prefix,
			HttpOnly: true,
			Secure:   r.TLS != nil,
			SameSite: http.SameSiteStrictMode,
		})
	}
	return r.WithContext(context.WithValue(r.Context(), csrfKey{}, c.csrfToken(v)))
}

// csrfValid reports whether a POST carries the token of its cookie.
func (c *Console) csrfValid(r *http.Request) bool {
	v := csrfCookieValue(r)
	got := r.PostFormValue(csrfField)
	if v == "" || got == "" {
		return false
	}
	return hmac.Equal([]byte(got), []byte(c.csrfToken(v)))
}

// formToken is the form token render puts into the page.
func formToken(r *http.Request) string {
	s, _ := r.Context().Value(csrfKey{}).(string)
	return s
}

// Messages of the refusal pages: what happened and what to do.
const (
	csrfExpired   = "This form has expired or came from another site, so the console refused it and changed nothing. Reload the page (from the console itself) and submit the form again."
	csrfCrossSite = "This form came from another site, so the console refused it and changed nothing. Open the console's own page, reload it, and submit the form there."
)

// refuseCSRF answers a POST whose token is missing or wrong.
func (c *Console) refuseCSRF(w http.ResponseWriter, r *http.Request) {
	c.fail(w, r, http.StatusForbidden, "%s", csrfExpired)
}
