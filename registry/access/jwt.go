package access

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// jwtAlgorithms are the signature algorithms accepted: asymmetric only,
// so a JWKS file holds no secret and "none" or HMAC-with-a-public-key
// confusion cannot happen.
var jwtAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// jwtVerifier checks OIDC tokens against a saved JWKS.
type jwtVerifier struct {
	keys jose.JSONWebKeySet
	cfg  JWTConfig
	now  func() time.Time
}

func newJWTVerifier(file string, data []byte, cfg JWTConfig) (*jwtVerifier, error) {
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("jwt.jwks_file %s: not a JSON Web Key Set: %w", file, err)
	}
	if len(set.Keys) == 0 {
		return nil, fmt.Errorf("jwt.jwks_file %s holds no key", file)
	}
	for i, k := range set.Keys {
		if !k.IsPublic() {
			return nil, fmt.Errorf("jwt.jwks_file %s: key %d (kid %q) is not a public key; the file must hold only the identity provider's public keys", file, i, k.KeyID)
		}
	}
	if cfg.PrincipalClaim == "" {
		cfg.PrincipalClaim = "sub"
	}
	if cfg.Leeway == 0 {
		cfg.Leeway = 30 * time.Second
	}
	return &jwtVerifier{keys: set, cfg: cfg, now: time.Now}, nil
}

// verify checks raw's signature, issuer, audience and times, and returns
// the caller's id and groups, and until when the token holds.
func (v *jwtVerifier) verify(raw string) (id string, groups []string, until time.Time, err error) {
	tok, err := jwt.ParseSigned(raw, jwtAlgorithms)
	if err != nil {
		return "", nil, time.Time{}, fmt.Errorf("not a signed JWT with an accepted algorithm: %w", err)
	}
	if len(tok.Headers) != 1 {
		return "", nil, time.Time{}, errors.New("the JWT has more than one signature")
	}
	kid := tok.Headers[0].KeyID
	var key *jose.JSONWebKey
	switch {
	case kid != "":
		if ks := v.keys.Key(kid); len(ks) > 0 {
			key = &ks[0]
		} else {
			return "", nil, time.Time{}, fmt.Errorf("no key with kid %q in the JWKS file; add the identity provider's new key to it", kid)
		}
	case len(v.keys.Keys) == 1:
		key = &v.keys.Keys[0]
	default:
		return "", nil, time.Time{}, errors.New("the JWT names no kid and the JWKS file holds several keys")
	}
	var std jwt.Claims
	var all map[string]any
	if err := tok.Claims(key.Key, &std, &all); err != nil {
		return "", nil, time.Time{}, fmt.Errorf("the JWT's signature does not verify with key %q", key.KeyID)
	}
	if std.Expiry == nil {
		return "", nil, time.Time{}, errors.New("the JWT has no exp claim; tokens must expire")
	}
	err = std.ValidateWithLeeway(jwt.Expected{Issuer: v.cfg.Issuer, AnyAudience: jwt.Audience{v.cfg.Audience}, Time: v.now()}, v.cfg.Leeway)
	if err != nil {
		return "", nil, time.Time{}, fmt.Errorf("the JWT is not valid here: %w (want iss %q, aud %q)", err, v.cfg.Issuer, v.cfg.Audience)
	}
	sub, _ := all[v.cfg.PrincipalClaim].(string)
	if sub == "" {
		return "", nil, time.Time{}, fmt.Errorf("the JWT has no string claim %q to name the caller", v.cfg.PrincipalClaim)
	}
	if c := v.cfg.GroupsClaim; c != "" {
		switch gs := all[c].(type) {
		case []any:
			for _, g := range gs {
				if s, ok := g.(string); ok && s != "" {
					groups = append(groups, "group:"+s)
				}
			}
		case string:
			for _, s := range strings.Fields(gs) {
				groups = append(groups, "group:"+s)
			}
		}
	}
	return "jwt:" + sub, groups, std.Expiry.Time().Add(v.cfg.Leeway), nil
}

// looksLikeJWT reports whether a bearer credential is a compact JWS.
func looksLikeJWT(s string) bool { return strings.Count(s, ".") == 2 && strings.HasPrefix(s, "ey") }
